"""What several commands share: the live host, recorded incidents, --job."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from agent.cli.errors import fail
from core.hostfs import ROOT_ENV, host_fs
from core.report import HealthReport
from core.window import Window

if TYPE_CHECKING:
    from agent.jobs import OperatorJob


def operator_jobs(specs: list[str] | None) -> list[OperatorJob]:
    """`--job NAME=PID` options, or one clear error."""
    from agent.jobs import JobSpecError, parse_job_spec

    out: list[OperatorJob] = []
    for spec in specs or []:
        try:
            out.append(parse_job_spec(spec))
        except JobSpecError as e:
            fail(str(e))
    return out


def observe_live(
    duration: float,
    interval: float,
    *,
    no_bpf: bool = False,
    jobs: list[str] | None = None,
    quiet: bool = False,
) -> tuple[Window, HealthReport]:
    """Watch the live host and summarise it; one-line errors for what cannot work."""
    # Imported here: the incident paths must work on a machine without the live sources.
    from agent.live import LiveHost

    if interval > duration:
        fail("--interval must not exceed --duration")
    fs = host_fs()
    if not fs.path("/proc").is_dir():
        fail(f"no /proc under {fs.root}: set {ROOT_ENV} to a host root or unset it")
    named = operator_jobs(jobs)
    live = LiveHost(fs, interval_s=interval, bpf=not no_bpf, operator_jobs=named)
    err = Console(stderr=True)
    if err.is_terminal and not quiet:
        with err.status(f"watching the host for {duration:g} s…"):
            window, report = live.observe(duration)
    else:
        window, report = live.observe(duration)
    # A listening trainer socket is live yet measures nothing until a hook connects:
    # what matters is whether anything was measured.
    if not report.metrics:
        fail("no source could run: " + "; ".join(report.missing()))
    return window, report


def load_recorded(path: Path) -> tuple[Window, HealthReport, str]:
    """A recorded incident's window, report and question, or one clear error."""
    from core.incident import IncidentError, load_incident

    try:
        inc = load_incident(path)
    except IncidentError as e:
        fail(str(e))
    window = inc.window()
    return window, inc.report(window), inc.question
