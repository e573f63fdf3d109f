"""`idletune report`: collect for a few seconds and show the host's health per subsystem."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from agent.cli.common import observe_live
from core.report import HealthReport, MetricSummary
from core.sample import SourceStatus
from core.text import printable

# What each source contributes, so a missing one is explained in terms of what the
# operator loses rather than as a bare module name.
_SOURCE_ROLE: dict[str, tuple[str, str]] = {
    "bpf": ("eBPF collectors", "block and scheduler latency"),
    "procfs": ("procfs", "PSI, memory, CPU and disk rates"),
    "nvml": ("NVML", "GPU utilisation, clocks and power"),
    "trainer": ("trainer hook", "step time and data wait"),
}
_SUBSYSTEM_ORDER = ("gpu", "trainer", "io", "sched", "cpu", "mem", "numa", "psi")


def capability_lines(sources: dict[str, SourceStatus]) -> list[str]:
    """One line per missing or partial source: what is missing, why, and what it costs."""
    out: list[str] = []
    for name, st in sorted(sources.items()):
        label, provides = _SOURCE_ROLE.get(name, (name, ""))
        if not st.live:
            reason = st.reason or "not running"
            if not provides:
                out.append(f"{label} off: {reason}")
            elif "root" in reason.lower() and "as root" not in reason.lower():
                out.append(f"{label} off: {reason} — run as root for {provides}")
            else:
                # The reason already says what to do (or nothing can be done): say what is lost.
                out.append(f"{label} off: {reason} — missing: {provides}")
        elif st.reason:
            out.append(f"{label} partial: {st.reason}")
    return out


def collection_line(report: HealthReport) -> str | None:
    """The collection level and why, in one line; None for a recording."""
    c = report.collection
    if c is None:
        return None
    share = report.hot_share()
    measured = f"measured over {share:.0%} of the window" if share is not None else ""
    if c.level == "duty":
        cycle = f"hot path {c.duty_on_s:g} s in every {c.duty_period_s:g} s"
        head = f"collection: duty ({cycle}{', ' + measured if measured else ''})"
    else:
        head = f"collection: full{f' (hot path {measured})' if measured else ''}"
    tail = "" if c.hot_path else " — no hot-path collector runs, so the level changes nothing"
    return f"{head}: {c.reason}{tail}"


def _fmt(v: float, unit: str) -> str:
    if unit == "bitmask":
        return hex(int(v))
    if unit == "0..1":
        return f"{v:.3f}"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    if abs(v) >= 0.01 or v == 0:
        return f"{v:.2f}"
    return f"{v:.2g}"  # small but not zero: keep it from reading as 0.00


def with_unit(v: float, unit: str) -> str:
    text = _fmt(v, unit)
    return text if unit in ("0..1", "bitmask", "") else f"{text} {unit}"


def _cell(text: str) -> Text:
    """A table cell from host text: a Text is never read as rich markup, and printable drops escapes."""
    return Text(printable(text))


def _say(console: Console, line: str) -> None:
    """One line of host text: no markup, no escape sequence; soft_wrap keeps it one line however
    narrow the terminal."""
    console.print(printable(line), markup=False, highlight=False, soft_wrap=True)


def _subsystem_table(subsystem: str, rows: dict[str, MetricSummary]) -> Table:
    table = Table(title=_cell(subsystem), title_justify="left", expand=False)
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_column("min", justify="right")
    table.add_column("max", justify="right")
    for name, s in sorted(rows.items()):
        table.add_row(_cell(name), with_unit(s.value, s.unit), _fmt(s.min, s.unit), _fmt(s.max, s.unit))
    return table


def render(report: HealthReport, console: Console) -> None:
    h, w = report.host, report.window
    devices = ", ".join(h.block_devices) or "none"
    # Kernel and device names are host text: a `[` in them is not markup here.
    _say(
        console,
        f"host: {h.cpus} CPUs, {h.numa_nodes} NUMA node(s), {h.gpus} GPU(s), "
        f"kernel {h.kernel or 'unknown'}, disks: {devices}",
    )
    console.print(f"window: {w.samples} samples over {w.end - w.start:.1f} s")
    if (line := collection_line(report)) is not None:
        _say(console, line)
    order = [s for s in _SUBSYSTEM_ORDER if s in report.subsystems]
    order += sorted(s for s in report.subsystems if s not in _SUBSYSTEM_ORDER)
    for subsystem in order:
        console.print(_subsystem_table(subsystem, report.subsystems[subsystem]))
    if not report.subsystems:
        console.print("no metrics collected")
    sources = Table(title="sources", title_justify="left")
    sources.add_column("source")
    sources.add_column("live")
    sources.add_column("note")
    for name, st in sorted(report.sources.items()):
        sources.add_row(_cell(name), "yes" if st.live else "no", _cell(st.reason))
    console.print(sources)
    if report.knobs:
        knobs = Table(title="knobs", title_justify="left")
        knobs.add_column("knob")
        knobs.add_column("value", justify="right")
        for k, v in sorted(report.knobs.items()):
            knobs.add_row(_cell(k), _cell(str(v)))
        console.print(knobs)
    if report.drops:
        _say(console, "dropped events: " + ", ".join(f"{k}={v}" for k, v in sorted(report.drops.items())))
    for line in capability_lines(report.sources):
        _say(console, line)


def report_command(
    duration: Annotated[float, typer.Option("--duration", min=0.1, help="seconds to collect")] = 5.0,
    interval: Annotated[float, typer.Option("--interval", min=0.05, help="seconds between samples")] = 1.0,
    as_json: Annotated[bool, typer.Option("--json", help="print the HealthReport as JSON")] = False,
    no_bpf: Annotated[bool, typer.Option("--no-bpf", help="do not load the eBPF collectors")] = False,
    job: Annotated[list[str] | None, typer.Option("--job", help="a training job to watch, NAME=PID")] = None,
) -> None:
    """Collect for a few seconds and show the host's health per subsystem."""
    _, report = observe_live(duration, interval, no_bpf=no_bpf, jobs=job, quiet=as_json)
    if as_json:
        typer.echo(report.model_dump_json())
        return
    render(report, Console())


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)
