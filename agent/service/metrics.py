"""Prometheus exposition: the vocabulary's figures as idletune_<family> gauges, and the counters.

A metric `io.nvme0n1.lat_p99_us` becomes `idletune_io_lat_p99_us{dev="nvme0n1"}`:
the family of its vocabulary template, labelled with the device, GPU or job the
name carries, so one family has one label set across hosts. Gauges are rendered
once per snapshot; the action, decision, verdict and rollback counters of
guardrails.audit are rendered at each scrape, since they move between snapshots.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

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


def gauges_text(report: HealthReport, diagnosis: Diagnosis, pending: int) -> bytes:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(_Snapshot(report, diagnosis, pending))
    return generate_latest(reg)


def counters_text() -> bytes:
    return generate_latest(audit.REGISTRY)
