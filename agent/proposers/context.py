"""What a rule reads from the report and diagnosis: its targets, metrics, knob values and host figures.

Targets are never names written in a policy: the data device is the one the cause
names or else the one with the read traffic; the job is the one the cause names or
else the one that waits most for data; the GPUs are the one the cause names or else
those running at their power limit.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from core.diagnosis import Cause
from core.knob import KnobValue, Target, knob_key
from core.report import HealthReport, MetricSummary
from core.vocabulary import matches, parse

_PLACEHOLDERS = {"device": "{device}", "job": "{job}", "gpu": "{gpu}"}


def devices(report: HealthReport) -> list[str]:
    found = set(report.host.block_devices)
    found.update(m.dev for n in report.metrics if (m := parse(n)) is not None and m.dev is not None)
    return sorted(found)


def jobs(report: HealthReport) -> list[str]:
    found = {j.name for j in report.jobs}
    found.update(m.job for n in report.metrics if (m := parse(n)) is not None and m.job is not None)
    return sorted(found)


def gpus(report: HealthReport) -> list[int]:
    found = {m.gpu for n in report.metrics if (m := parse(n)) is not None and m.gpu is not None}
    found.update(int(k.rsplit("@", 1)[1]) for k in report.knobs if re.fullmatch(r"gpu\.power_limit_w@\d+", k))
    return sorted(found)


def _best(names: list[str], score: Callable[[str], float | None]) -> list[str]:
    scored = [(s, n) for n in names if (s := score(n)) is not None]
    return [max(scored)[1]] if scored else names[:1] if len(names) == 1 else []


def resolve(selector: str, report: HealthReport, cause: Cause) -> list[Target]:
    if selector == "none":
        return [None]
    if selector == "data_device":
        devs = devices(report)
        if cause.target in devs:
            return [cause.target]
        return list(_best(devs, lambda d: report.metrics.get(f"io.{d}.read_kbps")))
    if selector == "job":
        names = jobs(report)
        if cause.target in names:
            return [cause.target]
        return list(_best(names, lambda j: report.metrics.get(f"trainer.{j}.data_wait_frac")))
    if selector == "jobs":
        return list(jobs(report))
    indexes = gpus(report)
    named = re.fullmatch(r"(?:gpu)?(\d+)", str(cause.target or ""))
    # The GPU the cause names and every other one running at its power limit: a job
    # runs at the pace of its slowest GPU, so restoring one of several does little.
    chosen: list[Target] = []
    if named and int(named.group(1)) in indexes:
        chosen.append(int(named.group(1)))
    for i in indexes:
        draw, limit = report.metrics.get(f"gpu.{i}.power_w"), report.metrics.get(f"gpu.{i}.power_limit_w")
        if draw is not None and limit and draw >= 0.9 * limit and i not in chosen:
            chosen.append(i)
    return chosen


def fill(template: str, selector: str, target: Target) -> str:
    """Put the target into `{device}`/`{job}`/`{gpu}`; a placeholder of another kind matches any."""
    own = {"data_device": "device", "job": "job", "jobs": "job", "gpu": "gpu"}.get(selector)
    out = template
    for kind, ph in _PLACEHOLDERS.items():
        out = out.replace(ph, str(target) if kind == own and target is not None else "*")
    return out


def _summary(report: HealthReport, name: str) -> MetricSummary | None:
    for metrics in report.subsystems.values():
        if name in metrics:
            return metrics[name]
    return None


def _dirty_pause_frac(report: HealthReport, stat: str) -> float | None:
    """Dirty and under-writeback pages as a share of the level at which the kernel starts pausing
    writers: balance_dirty_pages lets them run free below the mean of the background and the dirty
    threshold (mm/page-writeback.c, dirty_freerun_ceiling), so below 1 no writer was paused. From
    procfs alone (/proc/vmstat's nr_dirty, nr_writeback and the two thresholds), the stand-in for
    the pauses eBPF measures. The pile is the sum of the two figures' stats (`value` is their
    mean; `max` an upper bound, their peaks need not coincide); the ceiling is the thresholds' last
    values."""
    dirty, wb = _summary(report, "mem.dirty_mib"), _summary(report, "mem.writeback_mib")
    hard, background = (
        _summary(report, "mem.dirty_threshold_mib"),
        _summary(report, "mem.dirty_bg_threshold_mib"),
    )
    if dirty is None or hard is None or background is None:
        return None
    stat = "mean" if stat == "value" else stat
    ceiling = (hard.last + background.last) / 2
    if ceiling <= 0:
        return None
    pile = float(getattr(dirty, stat)) + (float(getattr(wb, stat)) if wb is not None else 0.0)
    return pile / ceiling


# Figures a rule may read that no source measures: each derived from measured ones in the report.
DERIVED: dict[str, Callable[[HealthReport, str], float | None]] = {"mem.dirty_pause_frac": _dirty_pause_frac}


def metric_values(report: HealthReport, pattern: str, stat: str) -> list[float]:
    """The figure of every metric the (possibly wildcard) name matches, or of a derived figure."""
    if pattern in DERIVED:
        figure = DERIVED[pattern](report, stat)
        return [] if figure is None else [figure]
    names = [n for n in report.metrics if matches(pattern, n)] if "*" in pattern else [pattern]
    out: list[float] = []
    for n in names:
        if stat == "value":
            if n in report.metrics:
                out.append(report.metrics[n])
        elif (s := _summary(report, n)) is not None:
            out.append(float(getattr(s, stat)))
    return out


# Knobs that a metric also reports over the window: the metric's last value is the one in
# force now (a recorded incident's knobs are the values at its start).
_TWINS = {"gpu.power_limit_w": "gpu.{target}.power_limit_w"}


def _twin(report: HealthReport, primitive_id: str, target: Target) -> MetricSummary | None:
    template = _TWINS.get(primitive_id)
    return None if template is None else _summary(report, template.format(target=target))


def current(report: HealthReport, primitive_id: str, target: Target) -> KnobValue | None:
    twin = _twin(report, primitive_id, target)
    if twin is not None:
        return int(twin.last) if twin.last.is_integer() else twin.last
    key = knob_key(primitive_id, target)
    if key in report.knobs:
        return report.knobs[key]
    if primitive_id == "loader.workers":
        for j in report.jobs:
            if j.name == target and j.loader_workers is not None:
                return j.loader_workers
    return None


def peak(report: HealthReport, primitive_id: str) -> float | None:
    """The highest value the knob has on any target, in the knobs or over the window."""
    values = [
        float(v)
        for k, v in report.knobs.items()
        if (k == primitive_id or k.startswith(primitive_id + "@")) and not isinstance(v, str)
    ]
    template = _TWINS.get(primitive_id)
    if template is not None:
        values += [
            s.max
            for n in report.metrics
            if matches(template.format(target="*"), n)
            if (s := _summary(report, n)) is not None
        ]
    return max(values) if values else None


def host_names(report: HealthReport, selector: str, target: Target) -> dict[str, float]:
    """The names a policy expression may use (agent.proposers.expr.NAMES), but `current` and `peak`."""
    cores = float(report.host.cpus)
    n_gpus = float(max(report.host.gpus, len(gpus(report))))
    n_jobs = float(max(1, len(jobs(report))))
    job_gpus = 1.0
    if selector in ("job", "jobs"):
        # A job that trains on the CPU (no GPUs of its own) keeps no core free to feed a GPU.
        job_gpus = float(next((len(j.gpus) for j in report.jobs if j.name == target), 1))
    return {
        "cores": cores,
        "gpus": n_gpus,
        "numa_nodes": float(report.host.numa_nodes),
        "jobs": n_jobs,
        "job_gpus": job_gpus,
        "cores_per_job": cores / n_jobs,
        "cores_per_gpu": cores / n_gpus if n_gpus else cores,
        "write_mib_s": max(metric_values(report, "io.*.write_kbps", "max"), default=0.0) / 1024,
    }
