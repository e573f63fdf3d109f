"""Prometheus exposition: the vocabulary's figures as idletune_<family> gauges, and the counters.

A metric `io.nvme0n1.lat_p99_us` becomes `idletune_io_lat_p99_us{dev="nvme0n1"}`:
the family of its vocabulary template, labelled with the device, GPU or job the
name carries, so one family has one label set across hosts. Gauges are rendered
once per snapshot; the action, decision, verdict and rollback counters of
guardrails.audit are rendered at each scrape, since they move between snapshots. The
collection level is the report's, as of the snapshot. What the agent costs (its process,
each eBPF program) is rendered once per snapshot too, from the reading the last tick took.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from agent.cost import CostReading
from core.collection import CAUSES
from core.diagnosis import Diagnosis
from core.report import HealthReport
from core.vocabulary import METRICS, MetricDef, MetricName, parse
from guardrails import audit

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
PREFIX = "idletune_"


# Host-wide names whose family a per-job template would share (`sched.runq_lat_p99_us` and
# `sched.<job>.runq_lat_p99_us`): one family must have one label set, so the per-job one
# keeps its placeholder's kind in the name (`idletune_sched_job_runq_lat_p99_us`).
_HOST_WIDE = {d.template for d in METRICS if "<" not in d.template}
_KIND = {"<job>": "job", "<dev>": "dev", "<i>": "gpu"}


def family_name(d: MetricDef) -> str:
    family = d.family
    if "<" in d.template and family in _HOST_WIDE:
        family = d.template
        for ph, kind in _KIND.items():
            family = family.replace(ph, kind)
    return PREFIX + family.replace(".", "_")


def _labels(p: MetricName) -> dict[str, str]:
    out: dict[str, str] = {}
    if p.dev is not None:
        out["dev"] = p.dev
    if p.gpu is not None:
        out["gpu"] = str(p.gpu)
    if p.job is not None:
        out["job"] = p.job
    return out


class _Snapshot(Collector):
    def __init__(self, report: HealthReport, diagnosis: Diagnosis, pending: int) -> None:
        self.report = report
        self.diagnosis = diagnosis
        self.pending = pending

    def collect(self) -> Iterator[GaugeMetricFamily]:
        families: dict[str, GaugeMetricFamily] = {}
        for name, value in sorted(self.report.metrics.items()):
            p = parse(name)
            if p is None:
                continue
            labels = _labels(p)
            fam_name = family_name(p.definition)
            fam = families.get(fam_name)
            if fam is None:
                d = p.definition
                fam = families[fam_name] = GaugeMetricFamily(
                    fam_name, f"{d.meaning} ({d.unit}), over the report window", labels=sorted(labels)
                )
            fam.add_metric([labels[k] for k in sorted(labels)], value)
        yield from families.values()
        causes = GaugeMetricFamily(
            PREFIX + "cause_confidence", "Confidence of each root-cause category", labels=["category"]
        )
        for c in self.diagnosis.causes:
            causes.add_metric([c.category.value], c.confidence)
        yield causes
        sources = GaugeMetricFamily(PREFIX + "source_live", "1 when the source measured", labels=["source"])
        for src, st in sorted(self.report.sources.items()):
            sources.add_metric([src], 1.0 if st.live else 0.0)
        yield sources
        yield GaugeMetricFamily(
            PREFIX + "pending_approvals", "Changes waiting for a person's approval", value=self.pending
        )
        end = self.report.window.end
        yield GaugeMetricFamily(PREFIX + "report_window_end_seconds", "End of the report window", value=end)
        yield from _collection(self.report)


def _collection(report: HealthReport) -> Iterator[GaugeMetricFamily]:
    """The collection level as of the report, and what holds it; nothing for a recording."""
    c = report.collection
    if c is None:
        return
    level = GaugeMetricFamily(
        PREFIX + "collection_level",
        "1 for the level the hot-path eBPF collectors run at: duty (a duty cycle) or full (without a break)",
        labels=["level"],
    )
    for name in ("duty", "full"):
        level.add_metric([name], float(c.level == name))
    yield level
    cause = GaugeMetricFamily(
        PREFIX + "collection_reason",
        "1 for what holds the collection level: a trigger, one that lingers, a person who asked, "
        "the duty cycle turned off, the cost budget, a one-shot command, or no trigger",
        labels=["reason"],
    )
    for name in CAUSES:
        cause.add_metric([name], float(c.cause == name))
    yield cause
    share = report.hot_share()
    if share is not None:
        yield GaugeMetricFamily(
            PREFIX + "collection_hot_share",
            "Share of the report window the hot-path collectors measured",
            value=share,
        )


def gauges_text(report: HealthReport, diagnosis: Diagnosis, pending: int) -> bytes:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(_Snapshot(report, diagnosis, pending))
    return generate_latest(reg)


class _Cost(Collector):
    def __init__(self, reading: CostReading) -> None:
        self.reading = reading

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        r = self.reading
        labels = ["collector", "program"]
        run = CounterMetricFamily(
            PREFIX + "bpf_run_seconds",
            "Time the kernel spent in each eBPF program, on all CPUs, since the agent started",
            labels=labels,
        )
        runs = CounterMetricFamily(
            PREFIX + "bpf_events",
            "Times each eBPF program ran (events it handled) since the agent started",
            labels=labels,
        )
        for name, prog in sorted(r.programs.items()):
            key = [name.split("/", 1)[0], name]
            run.add_metric(key, prog.run_ns / 1e9)
            runs.add_metric(key, prog.runs)
        yield run
        yield runs
        yield GaugeMetricFamily(
            PREFIX + "bpf_run_time_measured",
            "1 when the kernel counts the programs' run time (else the two counters above stay 0)",
            value=1.0 if r.bpf_measured else 0.0,
        )
        yield CounterMetricFamily(
            PREFIX + "agent_cpu_seconds", "CPU time of the agent's process, user and system", value=r.cpu_s
        )
        yield GaugeMetricFamily(
            PREFIX + "agent_rss_bytes", "Resident memory of the agent's process", value=r.rss_bytes
        )
        cost = GaugeMetricFamily(
            PREFIX + "agent_cost_cores",
            "Cores the agent used over its budget window, by part (process, bpf)",
            labels=["part"],
        )
        if r.share is not None:
            cost.add_metric(["process"], r.share.agent)
            cost.add_metric(["bpf"], r.share.bpf)
        yield cost
        yield GaugeMetricFamily(
            PREFIX + "agent_cost_budget_cores",
            "Cores the agent may use with its programs",
            value=r.budget_cores,
        )
        yield GaugeMetricFamily(
            PREFIX + "agent_over_budget",
            "1 while the agent costs more than its budget",
            value=float(r.over is not None),
        )


def cost_text(reading: CostReading | None) -> bytes:
    """The cost families, or nothing where the agent watches no live host (a replay)."""
    if reading is None:
        return b""
    reg = CollectorRegistry(auto_describe=False)
    reg.register(_Cost(reading))
    return generate_latest(reg)


def counters_text() -> bytes:
    return generate_latest(audit.REGISTRY)
