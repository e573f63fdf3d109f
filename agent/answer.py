"""A grounded answer in plain words: what happened, the ranked causes, the evidence, what could be done.

Every figure printed comes from the HealthReport or the Diagnosis and is written with
`fmt`, so `agent.grounding.check_grounded` can trace it. The text is for a terminal: host
strings in it pass `core.text.printable`. Where a source was not live or
evidence is missing, the answer says so instead of guessing.
"""

from __future__ import annotations

from collections.abc import Callable

from agent.diagnosis.fmt import fmt, pct
from core.diagnosis import CONFIDENT, Category, Cause, Diagnosis, Evidence, LostWorkWindow
from core.report import HealthReport
from core.text import printable

Remedies = Callable[[Category], list[str]]

SHOWN_CAUSES = 5
MAX_REMEDIES = 4

_WORDS: dict[Category, str] = {
    Category.DATALOADER_STARVATION: "the data loader starving the trainer",
    Category.LOADER_OVERSUBSCRIPTION: "too many loader workers for the cores",
    Category.CPU_CONTENTION: "other work taking the CPU",
    Category.NUMA_REMOTE: "memory accesses to a remote NUMA node",
    Category.STORAGE_LATENCY: "a slow storage device",
    Category.READAHEAD_MISMATCH: "a readahead setting that does not fit the reads",
    Category.WRITEBACK_BURST: "a burst of page-cache writeback",
    Category.MEMORY_RECLAIM: "memory reclaim stalls",
    Category.GPU_POWER_THROTTLE: "GPU power throttling",
    Category.GPU_THERMAL_THROTTLE: "GPU thermal throttling",
    Category.PCIE_BOTTLENECK: "a saturated PCIe link",
    Category.COMM_WAIT: "waiting on collectives between GPUs",
    Category.HOST_OVERHEAD: "CPU-side overhead in the trainer",
    Category.NONE: "nothing: the host is healthy",
}

# Causes no tunable primitive can fix still deserve a next step, in words.
_ADVICE: dict[Category, str] = {
    Category.GPU_THERMAL_THROTTLE: "check cooling, airflow and fan curves; no host setting removes heat",
    Category.PCIE_BOTTLENECK: "check the link's width and generation, pin host memory, "
    "copy fewer bytes per step",
    Category.COMM_WAIT: "check interconnect health, overlap communication with compute, "
    "tune the collective backend",
    Category.HOST_OVERHEAD: "reduce per-step Python work: CUDA graphs, a compiled model, larger batches",
    Category.CPU_CONTENTION: "move or limit the competing work, "
    "or pin the trainer and loaders to their own cores",
}


def label(category: Category) -> str:
    """The cause in plain words ("a slow storage device")."""
    return _WORDS[category]


def advice(category: Category) -> str:
    """The next step in words for a cause no setting fully fixes; empty when there is none."""
    return _ADVICE.get(category, "")


def catalogue_remedies(category: Category) -> list[str]:
    """Primitives of the catalogue that address `category`, as `id: description`."""
    from primitives.catalog import for_cause

    return [f"{p.id}: {p.description}" for p in for_cause(category)]


def _at(t: float, report: HealthReport) -> str:
    """A time as seconds into the window: live windows carry wall-clock times."""
    return f"t={fmt(t - report.window.start)} s"


def _evidence_line(e: Evidence, report: HealthReport) -> str:
    parts = [f"{e.metric} = {fmt(e.observed)}"]
    if e.baseline is not None:
        parts.append(f"baseline {fmt(e.baseline)}")
    if e.threshold is not None:
        parts.append(f"threshold {fmt(e.threshold)}")
    if e.t_start is not None:
        parts.append(f"since {_at(e.t_start, report)}")
    return ", ".join(parts)


def _against(e: Evidence) -> str:
    base = f" against {fmt(e.baseline)} before" if e.baseline is not None else ""
    return f"{e.metric} was {fmt(e.observed)}{base}"


def _lost_work_sentence(report: HealthReport, d: Diagnosis) -> str:
    spans = d.lost_work
    if not spans:
        return ""
    # A loss that grew at a step is one episode: told from its start, with the step.
    episodes: list[list[LostWorkWindow]] = []
    for s in spans:
        if s.worsened and episodes:
            episodes[-1].append(s)
        else:
            episodes.append([s])

    def mass(ep: list[LostWorkWindow]) -> float:
        return sum(s.severity * max(s.t_end - s.t_start, 1.0) for s in ep)

    worst = max(episodes, key=mass)
    n = len(episodes) - 1
    more = f" (and in {n} other span{'s' if n > 1 else ''})" if n else ""
    signals = ", ".join(sorted({x for s in worst for x in s.signals})) or "the KPIs"
    first, last = worst[0], worst[-1]
    steps = "".join(f", more from {_at(s.t_start, report)} (about {pct(s.severity)})" for s in worst[1:])
    return (
        f"The GPUs lost work from {_at(first.t_start, report)} to {_at(last.t_end, report)}{more}, "
        f"about {pct(first.severity)} of it{steps}, seen in {signals}."
    )


def paragraph(report: HealthReport, d: Diagnosis) -> str:
    top = d.top
    lost = _lost_work_sentence(report, d)
    if top.category == Category.NONE:
        text = lost + (" " if lost else "")
        text += f"The host looks healthy ({pct(top.confidence)} confident): {top.summary}."
        kpis = [e for e in top.evidence if e.metric.startswith(("gpu.", "trainer."))][:2]
        if kpis:
            text += (
                " Over the window "
                + " and ".join(f"{e.metric} averaged {fmt(e.observed)}" for e in kpis)
                + "."
            )
        runner = d.causes[1] if len(d.causes) > 1 else None
        if runner is not None and runner.confidence >= 0.1:
            text += f" The only other candidate is {runner.category.value} at {pct(runner.confidence)}."
        return text
    text = lost + (" " if lost else "")
    lead = (
        "The most likely cause is"
        if top.confidence >= CONFIDENT
        else "Not enough evidence to be sure; the best guess is"
    )
    text += f"{lead} {_WORDS[top.category]} ({top.category.value}, {pct(top.confidence)}): {top.summary}."
    cause_ev = [e for e in top.evidence if not e.rule.startswith("lost work")][:2]
    if cause_ev:
        text += " " + "; ".join(_against(e) for e in cause_ev) + "."
    runner = d.causes[1] if len(d.causes) > 1 else None
    if runner is not None and runner.confidence >= 0.1:
        text += f" Next comes {runner.category.value} at {pct(runner.confidence)}."
    return text


def _remedy_lines(cause: Cause, remedies: Remedies | None) -> list[str]:
    if cause.category == Category.NONE:
        return ["nothing needs changing."]
    found = remedies(cause.category) if remedies is not None else []
    # The catalogue lists lowest tier first; the first few are the ones to try.
    lines = [f"{cause.category.value}: {r}" for r in found[:MAX_REMEDIES]]
    if not lines:
        if remedies is None:
            lines.append(f"{cause.category.value}: no remedy catalogue was given, so no knob is suggested")
        else:
            lines.append(f"{cause.category.value}: no catalogue primitive can fix this")
    if cause.category in _ADVICE:
        lines.append(f"{cause.category.value}: {_ADVICE[cause.category]}")
    return lines


def answer_text(report: HealthReport, d: Diagnosis, remedies: Remedies | None = None) -> str:
    """The full answer: question, paragraph, ranked causes, evidence, remedies, gaps; text for a
    reader, so the question and host strings in it (job and device names, reasons) lose any
    control characters and escape sequences."""
    out = [f"Q: {d.question}", "", paragraph(report, d), "", "Ranked causes:"]
    shown = [c for c in d.causes if c.confidence >= 0.05][:SHOWN_CAUSES] or d.causes[:1]
    for rank, c in enumerate(shown, start=1):
        out.append(f"  {rank}. {c.category.value:<24} {pct(c.confidence):>4}  {c.summary}")
    top = d.top
    out += ["", f"Evidence for {top.category.value}:"]
    if top.evidence:
        out += [f"  - {_evidence_line(e, report)}: {e.rule}" for e in top.evidence]
    else:
        out.append("  not enough evidence: no figure supports a cause")
    out += ["", "What could be done:"]
    causes = [top] + [c for c in d.causes[1:2] if c.confidence >= CONFIDENT and c.category != Category.NONE]
    for c in causes:
        out += [f"  - {line}" for line in _remedy_lines(c, remedies)]
    gaps = [*report.missing(), *(m for m in d.missing if m not in report.missing())]
    if gaps:
        out += ["", "Not enough evidence:"]
        out += [f"  - {g}" for g in gaps]
    return printable("\n".join(out))
