"""The report and diagnosis rendered compactly for a prompt, with every host string made harmless.

Strings that come from the host or a recorded incident (job, process and device names,
knob keys, paths, GPU models, kernel strings, a source's error text) are data, never
instructions: `quote` strips control characters and escape sequences (`core.text.printable`),
keeps a small safe character set and wraps the result in double quotes it cannot close.
The operator's question is quoted too (`quote_text`), with its punctuation kept. Figures are
written with the diagnosis' `fmt`, so an answer that repeats them passes the grounding check.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable

from agent.diagnosis.fmt import fmt, pct
from core.diagnosis import Category, Cause, Diagnosis, Evidence
from core.report import HealthReport
from core.text import printable
from core.vocabulary import parse
from primitives.catalog import get as catalogue_entry

# What survives of a host string: enough for names and paths, nothing that opens a
# quote, a chat-template marker (`<|im_start|>`), markup or a JSON object.
_UNSAFE = re.compile(r"[^A-Za-z0-9 _.,:;=/@+%'()µ°\-]")
NAME_LIMIT = 48
TEXT_LIMIT = 240
DEFAULT_BUDGET = 1500  # prompt tokens for the report and diagnosis of an 8-GPU host


def _visible(text: str) -> str:
    """`printable` text with every line break and tab a space and no other control or format character."""
    # Vertical tab, form feed and CR separate words as a line feed does; printable would drop them.
    out = printable(re.sub(r"[\r\v\f]", " ", text))
    return "".join(
        " " if ch in "\t\n" else ch
        for ch in out
        if ch in "\t\n" or not unicodedata.category(ch).startswith("C")
    )


def clean(text: str, limit: int = NAME_LIMIT) -> str:
    """Control characters and escape sequences gone (line breaks become spaces), unsafe characters
    become `?`, length bounded."""
    flat = " ".join(_UNSAFE.sub("?", _visible(text)).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def plain(text: str, limit: int = TEXT_LIMIT) -> str:
    """Operator or model text: control characters, escape sequences and chat-template markers gone,
    length bounded. Punctuation stays; this text is not from the host."""
    out = " ".join(_visible(text).replace("<|", " ").replace("|>", " ").split())
    return out if len(out) <= limit else out[: limit - 3] + "..."


def quote(text: str, limit: int = NAME_LIMIT) -> str:
    """Host text as data: cleaned, in double quotes it cannot close."""
    return f'"{clean(str(text), limit)}"'


def quote_text(text: str, limit: int = TEXT_LIMIT) -> str:
    """Operator text (a question) as data: `plain`, in double quotes it cannot close."""
    return '"' + plain(text, limit).replace('"', "'") + '"'


def host_names(report: HealthReport, diagnosis: Diagnosis | None = None) -> list[str]:
    """Every host-provided name the report and diagnosis mention, longest first."""
    names: set[str] = {j.name for j in report.jobs} | set(report.host.block_devices)
    for n in report.metrics:
        m = parse(n)
        if m is not None:
            names.update(x for x in (m.dev, m.job) if x)
    names.update(k.split("@", 1)[1] for k in report.knobs if "@" in k)
    if diagnosis is not None:
        names.update(c.target for c in diagnosis.causes if c.target)
    return sorted((n for n in names if not n.isdigit()), key=lambda n: (-len(n), n))


def quote_names(text: str, names: Iterable[str], limit: int = TEXT_LIMIT) -> str:
    """Our own text with the host names inside it quoted, the rest cleaned."""
    out = clean(text, limit)
    # Matched as cleaned at full length (the text was cleaned the same way), shown bounded.
    cleaned = {clean(n, limit): n for n in names if clean(n, limit)}
    if not cleaned:
        return out
    # One pass, longest name first, so a short name never matches inside a quoted long one.
    alternatives = "|".join(re.escape(c) for c in sorted(cleaned, key=lambda c: (-len(c), c)))

    def _quoted(m: re.Match[str]) -> str:
        return quote(cleaned[m.group(0)])

    return re.sub(rf"(?<!\w)(?:{alternatives})(?!\w)", _quoted, out)


def metric_label(name: str) -> str:
    """`trainer.sdxl.data_wait_frac` as `trainer.data_wait_frac "sdxl"`: the host part quoted."""
    m = parse(name)
    if m is None:
        return quote(name, 80)
    if m.dev is not None or m.job is not None:
        return f"{m.definition.family} {quote(m.dev or m.job or '')}"
    if m.gpu is not None:
        return f"{m.definition.family} gpu{m.gpu}"
    return name


def knob_label(key: str) -> str:
    """`block.read_ahead_kb@nvme0n1` as `block.read_ahead_kb@"nvme0n1"`: a catalogue id is our own
    word and stays bare; any other id, like every target, came from the host or an incident."""
    pid, at, target = key.partition("@")
    shown = pid if catalogue_entry(pid) is not None else quote(pid)
    if not at:
        return shown
    return f"{shown}@{target if target.isdigit() else quote(target)}"


def _knob(key: str, value: object) -> str:
    shown = quote(str(value)) if isinstance(value, str) else fmt(float(value))  # type: ignore[arg-type]
    return f"{knob_label(key)}={shown}"


def _source(name: str, live: bool, reason: str) -> str:
    return f"{clean(name)} live" if live else f"{clean(name)} NOT LIVE ({quote(reason, 100)})"


def _header(r: HealthReport) -> list[str]:
    h, w = r.host, r.window
    model = f" {quote(h.gpu_model)}" if h.gpu_model else ""
    kernel = f", kernel {quote(h.kernel)}" if h.kernel else ""
    every = f" every {fmt(w.interval_s)} s" if w.interval_s else ""
    lines = [
        f"host: {h.cpus} CPUs, {h.numa_nodes} NUMA nodes, {h.gpus} GPUs{model}{kernel}",
        f"window: {fmt(w.end - w.start)} s, {w.samples} samples{every}",
    ]
    if r.sources:
        lines.append(
            "sources: " + "; ".join(_source(n, s.live, s.reason) for n, s in sorted(r.sources.items()))
        )
    for j in r.jobs:
        gpus = ",".join(str(g) for g in j.gpus) or "none"
        workers = f", {j.loader_workers} loader workers" if j.loader_workers is not None else ""
        pid = f"pid {j.pid}, " if j.pid is not None else ""
        lines.append(f"job {quote(j.name)}: {pid}GPUs {gpus}{workers}")
    if r.knobs:
        lines.append("knobs: " + " ".join(_knob(k, v) for k, v in sorted(r.knobs.items())))
    return lines


def _figure_lines(r: HealthReport, first: set[str]) -> list[str]:
    """One line per metric family (`gpu.util_pct %: gpu0=45 gpu1=47`); families in `first` lead."""
    groups: dict[str, list[str]] = defaultdict(list)
    units: dict[str, str] = {}
    for name, value in sorted(r.metrics.items()):
        m = parse(name)
        if m is None:
            continue
        fam = m.definition.family
        units[fam] = m.definition.unit
        if m.gpu is not None:
            groups[fam].append(f"gpu{m.gpu}={fmt(value)}")
        elif m.dev is not None or m.job is not None:
            groups[fam].append(f"{quote(m.dev or m.job or '')}={fmt(value)}")
        else:
            groups[fam].append(fmt(value))
    order = sorted(groups, key=lambda f: (f not in first, f))
    return [f"{fam} ({units[fam]}): {' '.join(groups[fam])}" for fam in order]


def _families(d: Diagnosis | None) -> set[str]:
    if d is None:
        return set()
    out = set()
    for c in d.causes[:3]:
        for e in c.evidence:
            m = parse(e.metric)
            if m is not None:
                out.add(m.definition.family)
    return out


def evidence_line(e: Evidence, names: list[str], *, rule: bool = True) -> str:
    parts = [f"{metric_label(e.metric)} = {fmt(e.observed)}"]
    if e.baseline is not None:
        parts.append(f"baseline {fmt(e.baseline)}")
    if e.threshold is not None:
        parts.append(f"threshold {fmt(e.threshold)}")
    return ", ".join(parts) + (f" ({quote_names(e.rule, names, 120)})" if rule else "")


def render_diagnosis(report: HealthReport, d: Diagnosis, *, causes: int = 3, evidence: int = 3) -> str:
    names = host_names(report, d)
    lines = ["diagnosis, ranked (these are the facts):"]
    for rank, c in enumerate(d.causes[:causes], start=1):
        target = f" on {quote(c.target)}" if c.target else ""
        lines.append(
            f"{rank}. {c.category.value}{target} {pct(c.confidence)}: {quote_names(c.summary, names)}"
        )
        lines += [f"   - {evidence_line(e, names)}" for e in c.evidence[:evidence]]
    for s in d.lost_work[:2]:
        t0 = report.window.start
        lines.append(
            f"lost work: t={fmt(s.t_start - t0)} s to t={fmt(s.t_end - t0)} s, {pct(s.severity)} of the KPI"
        )
    gaps = [*report.missing(), *(m for m in d.missing if m not in report.missing())]
    lines += [f"not enough evidence: {quote(g, 120)}" for g in gaps]
    if d.top.category is Category.NONE:
        lines.append("verdict: healthy")
    return "\n".join(lines)


def render_report(
    report: HealthReport,
    diagnosis: Diagnosis | None = None,
    *,
    count: Callable[[str], int] | None = None,
    budget: int = DEFAULT_BUDGET,
) -> str:
    """Header, jobs and knobs, the diagnosis, then the figures; over budget, the figure lines the
    diagnosis does not cite are left out first. The facts lead: a small model reads them best."""
    head = _header(report)
    figures = _figure_lines(report, _families(diagnosis))
    tail = [render_diagnosis(report, diagnosis)] if diagnosis is not None else []
    measure = count or (lambda s: (len(s) + 2) // 3)
    dropped = 0
    while True:
        note = [f"({dropped} figure lines left out for length)"] if dropped else []
        text = "\n".join([*head, *tail, "figures, window values:", *figures, *note])
        if measure(text) <= budget or not figures:
            return text
        figures.pop()
        dropped += 1


def render_brief(report: HealthReport, d: Diagnosis, causes: list[Cause]) -> str:
    """What one decision needs: the host in a line and each top cause with its strongest figure.
    A decision prompt's length is its latency on two cores (about 250 prompt tokens a second)."""
    h = report.host
    names = host_names(report, d)
    lines = [f"host: {h.cpus} CPUs, {h.gpus} GPUs"]
    for c in causes:
        on = f" on {quote(c.target)}" if c.target else ""
        fig = f": {evidence_line(c.evidence[0], names, rule=False)}" if c.evidence else ""
        lines.append(f"cause {c.category.value}{on} {pct(c.confidence)}{fig}")
    return "\n".join(lines)
