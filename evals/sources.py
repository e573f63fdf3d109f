"""Incidents seen through fewer sources: what a host without the trainer hook, without eBPF or without
GPUs would have recorded of the same moment, and what a recorder that writes only the spec's names
would have kept.

Real hosts often lack a source: a job not wrapped by the hook, a kernel or container without
eBPF, a host whose NVML is missing. Each view drops what that source alone measures (metrics,
knobs, job details), so every incident can also be scored as such a host would see it. Recordings
made by another tool carry the vocabulary of spec/incident-v1.md and none of idletune's additions
(runnable tasks, refaults, reclaim scans, device busy time: core/vocabulary.py's extensions); the
spec-only view scores every incident as such a recording.
"""

from __future__ import annotations

from typing import Literal

from core.incident import Incident
from core.knob import split_knob_key
from core.sample import Sample
from core.vocabulary import parse

View = Literal["all", "no-hook", "no-bpf", "no-gpu", "spec-only"]
VIEWS: tuple[View, ...] = ("all", "no-hook", "no-bpf", "no-gpu", "spec-only")

# Families only the eBPF collectors measure (agent/sources/bpf_convert.py); procfs gives the rest
# (diskstats: request counts, sizes, busy time and await; vmstat, meminfo, PSI, /proc/stat).
BPF_ONLY = frozenset(
    {
        "io.lat_p50_us",
        "io.lat_p99_us",
        "sched.runq_lat_p99_us",
        "sched.offcpu_frac",
        "sched.migrations_per_s",
        "mem.direct_reclaim_ms_per_s",
        "mem.kswapd_wakeups_per_s",
        "mem.memcg_reclaim_ms_per_s",
        "mem.dirty_throttle_ms_per_s",
        "mem.pagecache_miss_per_s",
    }
)


def _kept(view: View, name: str) -> bool:
    p = parse(name)
    if p is None:
        return True  # replay ignores it anyway
    family = p.definition.family
    if view == "no-hook":
        return not family.startswith("trainer.")
    if view == "no-bpf":
        return family not in BPF_ONLY
    if view == "no-gpu":
        return not family.startswith("gpu.")
    if view == "spec-only":
        return not p.definition.extension
    return True


def _knob_kept(view: View, key: str) -> bool:
    primitive, _ = split_knob_key(key)
    # Without the hook nobody reports the loader's settings. The job itself is still known (NVML's
    # processes, the operator's --job) and so are its loader workers: the agent counts the main
    # process's children (agent/jobs.py), hook or not.
    if view == "no-hook":
        return not primitive.startswith(("loader.", "trainer."))
    if view == "no-gpu":
        return not primitive.startswith("gpu.")
    return True


def seen(incident: Incident, view: View) -> Incident:
    """The incident as a host without `view`'s source would have recorded it."""
    if view == "all":
        return incident
    samples = [Sample(t=s.t, m={k: v for k, v in s.m.items() if _kept(view, k)}) for s in incident.samples]
    update: dict[str, object] = {"knobs": {k: v for k, v in incident.knobs.items() if _knob_kept(view, k)}}
    if view == "no-gpu":
        update["host"] = incident.host.model_copy(update={"gpus": 0, "gpu_model": None})
    out = incident.model_copy(update=update)
    out.samples = samples
    return out
