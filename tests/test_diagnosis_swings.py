"""Lost work that swings fast between bad and worse (a checkpoint flushed every other second) is
lost work, not noise; a healthy job whose data wait jitters near zero still shows none. A trainer
whose one loader worker cannot keep up, beside a hog in another group, is starved: its main thread
sleeps waiting for batches, so its own threads cannot be what fills the cores."""

from __future__ import annotations

from core.diagnosis import Category, Diagnosis
from core.report import HostInfo, JobInfo
from tests.diag_helpers import Jitter, diagnose_jittered


def _swinging(low: float, high: float, seed: int = 1) -> Diagnosis:
    def metrics(t: int, j: Jitter) -> dict[str, float]:
        worse = t % 2 == 1
        return {
            "trainer.job.data_wait_frac": j(high if worse else low),
            "trainer.job.samples_per_s": j(1000.0 if worse else 2200.0),
            "trainer.job.step_time_ms": j(60.0 if worse else 28.0),
            "cpu.util_pct": j(60.0),
            "psi.io.some_avg10": j(40.0),
            "mem.dirty_mib": j(1200.0 if worse else 300.0),
            "mem.writeback_mib": j(110.0 if worse else 10.0),
            "io.vdb.write_kbps": j(1.4e6 if worse else 4e5),
            "io.vdb.read_kbps": j(30000.0),
            "io.vdb.read_iops": j(200.0),
            "io.vdb.avg_req_kb": j(150.0),
            "io.vdb.lat_p99_us": j(60000.0),
        }

    return diagnose_jittered(
        40,
        seed,
        metrics,
        HostInfo(cpus=2, gpus=0, block_devices=["vdb"]),
        knobs={"block.read_ahead_kb@vdb": 192},
        jobs=[JobInfo(name="job", loader_workers=2)],
    )


def test_a_kpi_that_swings_between_bad_and_worse_is_lost_work() -> None:
    for seed in range(4):
        d = _swinging(0.45, 0.8, seed)
        assert d.lost_work, [(c.category.value, c.confidence) for c in d.causes]
        assert d.top.category is not Category.NONE


def test_a_data_wait_jittering_near_zero_is_no_lost_work() -> None:
    for seed in range(4):
        d = _swinging(0.0, 0.06, seed)
        assert not d.lost_work


def _starved_beside_a_hog(offcpu: float, seed: int = 1) -> Diagnosis:
    def metrics(t: int, j: Jitter) -> dict[str, float]:
        return {
            "trainer.job.data_wait_frac": j(0.9),
            "trainer.job.samples_per_s": j(850.0),
            "trainer.job.step_time_ms": j(75.0),
            "cpu.util_pct": min(100.0, j(99.5)),
            "psi.cpu.some_avg10": j(30.0),
            "sched.runq_lat_p99_us": j(4000.0),
            # The job's threads run promptly: the hog's group takes only its own share.
            "sched.job.runq_lat_p99_us": j(120.0),
            "sched.job.offcpu_frac": j(offcpu),
            "sched.procs_running": j(3.0),
            "psi.io.some_avg10": j(0.5),
            "mem.dirty_mib": j(4.0),
            "mem.available_mib": j(20000.0),
        }

    return diagnose_jittered(
        40, seed, metrics, HostInfo(cpus=2, gpus=0), jobs=[JobInfo(name="job", loader_workers=1)]
    )


def test_one_worker_whose_trainer_sleeps_for_batches_is_starvation_beside_a_hog() -> None:
    for seed in range(4):
        d = _starved_beside_a_hog(offcpu=0.88, seed=seed)
        assert d.top.category is Category.DATALOADER_STARVATION, [
            (c.category.value, c.confidence) for c in d.causes
        ]


def test_a_trainer_awake_all_the_time_may_fill_the_cores_itself() -> None:
    # One worker and a main thread that never sleeps: the job alone can keep both cores busy.
    d = _starved_beside_a_hog(offcpu=0.0)
    starved = next(c for c in d.causes if c.category is Category.DATALOADER_STARVATION)
    assert (
        starved.confidence
        < next(
            c for c in _starved_beside_a_hog(0.88).causes if c.category is Category.DATALOADER_STARVATION
        ).confidence
    )
