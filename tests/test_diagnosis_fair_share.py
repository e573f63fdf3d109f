"""A starved loader beside a little of others' work: the cores are busy and the job's threads
sometimes wait for one, yet another worker wins a share of them from a fair scheduler. Others'
runnable tasks too few to count as contention do not withhold CPU from the job; enough of them to
count do, and then the cause is contention and no worker is added."""

from __future__ import annotations

from agent.proposers.rules import RuleProposer, load_policies
from core.diagnosis import Category, Diagnosis
from core.proposal import Proposal
from core.report import HealthReport, HostInfo, JobInfo
from tests.diag_helpers import Jitter, run_jittered

# The job's own threads: one loader worker and its main thread (asleep on the worker's queue).
OWN = 2.0


def _host(levels: dict[str, float], seed: int) -> tuple[HealthReport, Diagnosis]:
    """A 2-core host whose job has one loader worker, each metric jittered about its level (the CPU's
    busy share at most 100)."""

    def metrics(t: int, j: Jitter) -> dict[str, float]:
        out = {name: j(level) for name, level in levels.items()}
        out["cpu.util_pct"] = min(100.0, out["cpu.util_pct"])
        return out

    jobs = [JobInfo(name="job", loader_workers=1)]
    return run_jittered(40, seed, metrics, HostInfo(cpus=2, gpus=0), jobs=jobs)


def _run(others: float, job_runq_us: float, seed: int = 1) -> tuple[Diagnosis, Proposal]:
    """A 2-core host, CPU busy, a trainer waiting for one worker that prepares heavy batches;
    `others` runnable tasks beside the job's own."""
    pressure = 8.0 if others < 2.0 else 95.0  # a small foreign load barely queues; a crowd does
    report, d = _host(
        {
            "trainer.job.data_wait_frac": 0.93,
            "trainer.job.samples_per_s": 60.0,
            "trainer.job.step_time_ms": 900.0,
            "cpu.util_pct": 99.5,
            "psi.cpu.some_avg10": pressure,
            "sched.runq_lat_p99_us": max(job_runq_us, 3000.0),
            "sched.job.runq_lat_p99_us": job_runq_us,
            "sched.job.offcpu_frac": 0.91,
            "sched.procs_running": OWN + others,
            "psi.io.some_avg10": 0.3,
            "mem.dirty_mib": 4.0,
            "mem.available_mib": 20000.0,
        },
        seed,
    )
    return d, RuleProposer(load_policies([])).propose(report, d)


def _ranked(d: Diagnosis) -> list[tuple[str, float]]:
    return [(c.category.value, round(c.confidence, 2)) for c in d.causes[:3]]


def test_a_starved_loader_beside_one_foreign_task_gets_another_worker() -> None:
    # One hog in another group and the recording's helpers: about 1.1 runnable tasks beside the job.
    for seed in range(4):
        for runq in (300.0, 5000.0, 20000.0):
            d, p = _run(others=1.1, job_runq_us=runq, seed=seed)
            assert d.top.category is Category.DATALOADER_STARVATION, _ranked(d)
            assert d.top.confidence >= 0.3, _ranked(d)
            assert [a.primitive for a in p.actions] == ["loader.workers"], p
            assert p.actions[0].value == 2


def test_a_crowd_of_foreign_tasks_is_contention_and_adds_no_worker() -> None:
    # Three hogs beside the job: others' runnable tasks hold more than a core's worth each core.
    for seed in range(4):
        d, p = _run(others=3.4, job_runq_us=20000.0, seed=seed)
        assert d.top.category is Category.CPU_CONTENTION, _ranked(d)
        assert not p.actions, p


def _reader(others: float, seed: int) -> Diagnosis:
    """A 2-core host, CPU busy, a trainer that waits a third of its time on one loader worker
    reading a fast device; `others` runnable tasks beside the job's own (the recording's helpers,
    a hog, the kernel threads serving the reads)."""
    return _host(
        {
            "trainer.job.data_wait_frac": 0.35,
            "trainer.job.samples_per_s": 5000.0,
            "trainer.job.step_time_ms": 10.0,
            "cpu.util_pct": 97.5,
            "psi.cpu.some_avg10": 60.0,
            "sched.runq_lat_p99_us": 5000.0,
            "sched.job.runq_lat_p99_us": 3000.0,
            "sched.job.offcpu_frac": 0.25,
            "sched.procs_running": OWN + others,
            "psi.io.some_avg10": 8.0,
            "mem.dirty_mib": 4.0,
            "mem.available_mib": 20000.0,
        },
        seed,
    )[1]


def test_one_hog_in_another_group_is_no_contention_beside_a_reader() -> None:
    # The helpers' task and one hog: one foreign task for two cores (0.5 per core), the job still
    # left a core. Beside readers of a fast device the matrix's recordings of it read up to 0.75 per
    # core; two or more hogs beside the job read from 0.66 up, most above 1.5 (FOREIGN_SHARE).
    for seed in range(4):
        d = _reader(others=2.0, seed=seed)
        assert d.top.category is not Category.CPU_CONTENTION, _ranked(d)
        contention = next(c for c in d.causes if c.category is Category.CPU_CONTENTION)
        assert contention.confidence < 0.3, _ranked(d)
        # Two foreign tasks for every core: contention, however the job's own wait looks.
        assert _reader(others=5.0, seed=seed).top.category is Category.CPU_CONTENTION
