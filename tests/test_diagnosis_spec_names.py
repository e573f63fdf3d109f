"""Diagnosis from the spec's names alone, as another recorder writes them: without a count of runnable
tasks a job that fills its cores itself cannot be told from contention on a chronic window (it is
marked not judged, not guessed), and without counted refaults reclaim running in step with the reads
still names a page cache too small for the data set."""

from __future__ import annotations

from pathlib import Path

from core.diagnosis import Category, Cause, Diagnosis
from core.incident import load_incident
from core.report import HostInfo, JobInfo
from evals.sources import seen
from tests.diag_helpers import Jitter, diagnose_jittered, run

BUNDLED = Path(__file__).resolve().parent.parent / "evals" / "incidents"


def _busy(
    seed: int, *, workers: int = 3, running: float | None = None, healthy_until: int = 0, cpus: int = 2
) -> Diagnosis:
    """A job with `workers` loader workers whose CPU is saturated and whose threads wait for a core;
    before `healthy_until` the host was calm and the job did not wait."""

    def metrics(t: int, j: Jitter) -> dict[str, float]:
        calm = t < healthy_until
        m = {
            "trainer.job.data_wait_frac": j(0.03) if calm else j(0.6),
            "trainer.job.samples_per_s": j(3000.0) if calm else j(1800.0),
            "trainer.job.step_time_ms": j(20.0) if calm else j(34.0),
            "cpu.util_pct": j(60.0) if calm else min(100.0, j(99.5)),
            "psi.cpu.some_avg10": j(2.0) if calm else j(90.0),
            "sched.runq_lat_p99_us": j(300.0) if calm else j(9500.0),
            "sched.job.runq_lat_p99_us": j(300.0) if calm else j(9300.0),
            "sched.job.offcpu_frac": j(0.1) if calm else j(0.4),
            "sched.ctx_switches_per_s": j(2000.0),
            "psi.io.some_avg10": j(0.2),
            "mem.dirty_mib": j(4.0),
            "mem.available_mib": j(20000.0),
        }
        if running is not None:
            m["sched.procs_running"] = j(workers + 1.0) if calm else j(running)
        return m

    return diagnose_jittered(
        60,
        seed,
        metrics,
        HostInfo(cpus=cpus, gpus=0),
        jobs=[JobInfo(name="job", loader_workers=workers)],
    )


def _cause(d: Diagnosis, cat: Category) -> Cause:
    return next(c for c in d.causes if c.category is cat)


def test_a_job_filling_its_cores_with_no_runnable_count_leaves_contention_not_judged() -> None:
    for seed in range(4):
        d = _busy(seed)
        c = _cause(d, Category.CPU_CONTENTION)
        assert not c.judged and c.confidence == 0.0, [(x.category.value, x.confidence) for x in d.causes]
        assert c.summary.startswith("not judged:") and "runnable" in c.summary
        assert d.top.category is not Category.CPU_CONTENTION


def test_counted_runnable_tasks_beyond_the_job_still_name_contention() -> None:
    for seed in range(4):
        d = _busy(seed, running=8.0)  # 4 of the job's own, 4 of someone else's
        assert d.top.category is Category.CPU_CONTENTION
        assert _cause(d, Category.CPU_CONTENTION).judged
        own = _busy(seed, running=4.5)  # the job's own threads, and the recorder
        assert own.top.category is not Category.CPU_CONTENTION


def test_a_rise_over_a_healthy_stretch_names_contention_without_a_runnable_count() -> None:
    for seed in range(4):
        d = _busy(seed, healthy_until=25)
        assert d.top.category is Category.CPU_CONTENTION, [(x.category.value, x.confidence) for x in d.causes]


def test_a_job_that_cannot_fill_the_cores_is_judged_without_a_runnable_count() -> None:
    d = _busy(1, workers=1, cpus=8)
    assert _cause(d, Category.CPU_CONTENTION).judged


def test_reclaim_in_step_with_the_reads_names_reclaim_from_spec_names() -> None:
    # A memory cgroup 160 MiB above the job's own use: its data set's page cache does not fit.
    inc = seen(load_incident(BUNDLED / "real-recl-160-1"), "spec-only")
    assert not any(k == "mem.refaults_per_s" for s in inc.samples for k in s.m)
    _, d = run(inc)
    assert d.top.category is Category.MEMORY_RECLAIM
    assert "mem.direct_reclaim_ms_per_s" in {e.metric for e in d.top.evidence}
    assert "likely too small" in d.top.summary


def test_no_reclaim_leaves_a_small_readahead_window_named() -> None:
    inc = seen(load_incident(BUNDLED / "real-ra128-iops200-1"), "spec-only")
    _, d = run(inc)
    assert d.top.category is Category.READAHEAD_MISMATCH
    assert _cause(d, Category.MEMORY_RECLAIM).confidence < 0.1


def test_reclaim_that_comes_and_goes_is_not_thrashing() -> None:
    inc = seen(load_incident(BUNDLED / "real-recl-160-1"), "spec-only")
    # Keep reclaim in one interval of five: the readers' cache is not evicted as fast as it fills.
    for i, s in enumerate(inc.samples):
        if i % 5 and "mem.direct_reclaim_ms_per_s" in s.m:
            s.m["mem.direct_reclaim_ms_per_s"] = 0.0
    _, d = run(inc)
    assert d.top.category is not Category.MEMORY_RECLAIM


def test_cgroup_reclaim_seen_through_spec_names_gets_no_host_memory_knob() -> None:
    """Direct reclaim while kswapd never wakes is a memory cgroup at its limit: no host-wide knob
    helps, so the rules propose nothing and say what would."""
    from agent.proposers.rules import RuleProposer, load_policies

    inc = seen(load_incident(BUNDLED / "real-recl-160-1"), "spec-only")
    report, d = run(inc)
    proposal = RuleProposer(load_policies([], with_default=True)).propose(report, d)
    assert proposal.actions == []
    assert proposal.noop_reason is not None and "cgroup" in proposal.noop_reason
