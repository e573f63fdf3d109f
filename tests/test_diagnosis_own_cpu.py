"""Whose CPU it is: a host kept busy by others while the job's own threads run promptly is not
contention, and a trainer loading its own batches on such a host is starved of loader workers;
when the job's threads do wait for a CPU, it is contention. Data wait a trainer with loader workers
spends on its own CPU is not starvation. A device serving no reads is not what the trainer waits
on, whatever size its rare requests have."""

from __future__ import annotations

from core.diagnosis import Category, Diagnosis
from core.report import HostInfo, JobInfo
from tests.diag_helpers import Jitter, diagnose_jittered


def _diagnose(job_runq_us: float, seed: int = 1, n: int = 40) -> Diagnosis:
    def metrics(t: int, j: Jitter) -> dict[str, float]:
        m = {
            "trainer.job.data_wait_frac": j(0.93),
            "trainer.job.samples_per_s": j(800.0),
            "trainer.job.step_time_ms": j(80.0),
            "cpu.util_pct": min(100.0, j(99.0)),
            "psi.cpu.some_avg10": j(20.0),
            "sched.runq_lat_p99_us": j(4000.0),
            "sched.job.runq_lat_p99_us": j(job_runq_us),
            # Loading in its own process: the main thread never sleeps waiting for batches.
            "sched.job.offcpu_frac": j(0.001),
            "psi.io.some_avg10": j(0.3),
            # The data set is cached: one rare read of readahead size, else nothing.
            "io.sdb.read_iops": 12.0 if t == 5 else 0.0,
            "io.sdb.read_kbps": 1536.0 if t == 5 else 0.0,
            "io.sdb.write_kbps": 0.0,
            "mem.dirty_mib": j(4.0),
            "mem.available_mib": j(20000.0),
        }
        if t == 5:
            m["io.sdb.avg_req_kb"] = 128.0
            m["io.sdb.lat_p50_us"] = 200.0
            m["io.sdb.lat_p99_us"] = 600.0
        return m

    return diagnose_jittered(
        n,
        seed,
        metrics,
        HostInfo(cpus=4, gpus=0, block_devices=["sdb"]),
        knobs={"block.read_ahead_kb@sdb": 128},
        jobs=[JobInfo(name="job", loader_workers=0)],
    )


def _ranked(d: Diagnosis) -> list[tuple[str, float]]:
    return [(c.category.value, c.confidence) for c in d.causes]


def test_busy_host_that_does_not_delay_the_job_leaves_it_starved_not_contended() -> None:
    for seed in range(5):
        d = _diagnose(job_runq_us=300.0, seed=seed)
        assert d.top.category is Category.DATALOADER_STARVATION, _ranked(d)
        contention = next(c for c in d.causes if c.category is Category.CPU_CONTENTION)
        assert contention.confidence < 0.3


def test_busy_host_that_delays_the_job_is_contention() -> None:
    for seed in range(5):
        d = _diagnose(job_runq_us=20000.0, seed=seed)
        assert d.top.category is Category.CPU_CONTENTION, _ranked(d)


def test_an_idle_device_is_not_a_readahead_problem() -> None:
    d = _diagnose(job_runq_us=300.0)
    ra = next(c for c in d.causes if c.category is Category.READAHEAD_MISMATCH)
    assert ra.confidence < 0.1, _ranked(d)


def _own_cores_busy(
    cpu_pct: float, seed: int = 2, workers: int = 2, gpus: int = 0, off: float = 0.14
) -> Diagnosis:
    """A job with two workers on two cores that keeps them busy itself (figures of a recording whose
    fix, one worker more or fewer, helped nothing): it waits for data a third of the time."""

    def metrics(t: int, j: Jitter) -> dict[str, float]:
        return {
            "trainer.job.data_wait_frac": j(0.03) if t < 2 else j(0.32),
            "trainer.job.samples_per_s": j(6300.0),
            "trainer.job.step_time_ms": j(10.0),
            "cpu.util_pct": min(100.0, j(cpu_pct)),
            "psi.cpu.some_avg10": j(45.0),
            "sched.runq_lat_p99_us": j(3800.0),
            "sched.job.runq_lat_p99_us": j(3750.0),
            "sched.job.offcpu_frac": j(off),
            "sched.procs_running": j(3.0),
            "io.vda.read_kbps": j(60000.0),
            "io.vda.read_iops": j(60.0),
            "io.vda.avg_req_kb": j(1000.0),
            "io.vda.lat_p99_us": j(900.0),
            "psi.io.some_avg10": j(2.0),
            "mem.dirty_mib": j(6.0),
        }

    host = HostInfo(cpus=2, numa_nodes=1, gpus=gpus, block_devices=["vda"])
    job = [JobInfo(name="job", gpus=list(range(gpus)), loader_workers=workers)]
    knobs = {"loader.workers@job": workers, "block.read_ahead_kb@vda": 1024}
    return diagnose_jittered(40, seed, metrics, host, knobs=knobs, jobs=job)


def test_lost_work_no_cause_explains_is_not_pinned_on_a_guess() -> None:
    for seed in (1, 2, 3):
        d = _own_cores_busy(86.0, seed)
        assert d.top.category is Category.NONE, d.causes[:3]
        assert "no cause stands out" in d.top.summary
        assert d.lost_work, "the work it lost is still shown"


def test_half_again_as_many_workers_as_cores_is_a_full_host_twice_as_many_is_oversubscribed() -> None:
    # Measured on a 2-core host: 3 workers against 2 cost 12-17 % of samples/s, under a cause's 20 %.
    for seed in (1, 2, 3):
        full = _own_cores_busy(88.0, seed, workers=3)
        assert full.top.category is not Category.LOADER_OVERSUBSCRIPTION, full.causes[:3]
        crowded = _own_cores_busy(98.0, seed, workers=5, gpus=1)
        assert crowded.top.category is Category.LOADER_OVERSUBSCRIPTION, crowded.causes[:3]


def test_a_crowd_of_workers_beside_a_cpu_trainer_is_not_oversubscription() -> None:
    # Measured on a 2-core host with a CPU trainer: 6 workers against 3 or 2 cost nothing (-5 %,
    # -3 %), 12 against 3 neither (-1 %); the trainer's steps need the CPU the workers take. With a
    # GPU the same crowd is the cause.
    for seed in (1, 2, 3):
        cpu_only = _own_cores_busy(98.0, seed, workers=12)
        assert cpu_only.top.category is not Category.LOADER_OVERSUBSCRIPTION, cpu_only.causes[:3]
        over = next(c for c in cpu_only.causes if c.category is Category.LOADER_OVERSUBSCRIPTION)
        assert over.confidence < 0.1
        far_more = _own_cores_busy(99.0, seed, workers=30)
        assert far_more.top.category is Category.LOADER_OVERSUBSCRIPTION, far_more.causes[:3]


def test_data_wait_the_main_thread_spends_on_its_cpu_is_not_starvation() -> None:
    # A trainer short of batches from its loader workers sleeps on their queue. This one sleeps for
    # 0.12 of its 0.32 wait: the rest is its own batch handling, which more workers do not shorten.
    for seed in (1, 2, 3):
        awake = _own_cores_busy(80.0, seed, off=0.12)
        asleep = _own_cores_busy(80.0, seed, off=0.31)
        starved = [
            next(c for c in d.causes if c.category is Category.DATALOADER_STARVATION).confidence
            for d in (awake, asleep)
        ]
        assert starved[0] == 0.0 < starved[1], starved
        assert awake.top.category is not Category.DATALOADER_STARVATION, awake.causes[:3]
