"""A checkpoint flood on a small host keeps the CPU busy with its own copying and flushing while
tasks stall on I/O: that is the writeback burst, not other work taking the CPU. CPU hogs with no
dirty-page surge stay cpu_contention."""

from __future__ import annotations

from core.diagnosis import Category, Diagnosis
from core.report import HostInfo, JobInfo
from tests.diag_helpers import Jitter, diagnose_jittered


def _diagnose(flood: bool, seed: int = 1, n: int = 40) -> Diagnosis:
    def metrics(t: int, j: Jitter) -> dict[str, float]:
        m = {
            "trainer.job.data_wait_frac": j(0.7),
            "trainer.job.samples_per_s": j(2200.0),
            "trainer.job.step_time_ms": j(28.0),
            "sched.runq_lat_p99_us": j(16000.0),
            "sched.job.runq_lat_p99_us": j(6000.0),
            "sched.job.offcpu_frac": j(0.6),
            "psi.cpu.some_avg10": j(88.0),
            "cpu.util_pct": min(100.0, j(99.0)),
            "io.vdb.read_kbps": j(20000.0),
            "io.vdb.read_iops": j(300.0),
            "io.vdb.avg_req_kb": j(128.0),
            "io.vdb.lat_p50_us": j(300.0),
            "io.vdb.lat_p99_us": j(2500.0),
            "mem.available_mib": j(20000.0),
        }
        if flood:
            # Checkpoints written back to back: the dirty pile rises and drains in turns.
            phase = t % 10
            m["mem.dirty_mib"] = j(150.0 * phase + 20.0)
            m["mem.writeback_mib"] = j(110.0) if phase >= 8 else j(0.5)
            m["io.vdb.write_kbps"] = j(250000.0) if phase >= 7 else j(2000.0)
            m["psi.io.some_avg10"] = j(72.0)
        else:
            m["mem.dirty_mib"] = j(5.0)
            m["mem.writeback_mib"] = 0.0
            m["io.vdb.write_kbps"] = j(100.0)
            m["psi.io.some_avg10"] = j(2.0)
        return m

    return diagnose_jittered(
        n,
        seed,
        metrics,
        HostInfo(cpus=2, gpus=0, block_devices=["vdb"]),
        knobs={"block.read_ahead_kb@vdb": 4096, "vm.dirty_background_ratio": 10, "vm.dirty_ratio": 20},
        jobs=[JobInfo(name="job", loader_workers=1)],
    )


def test_busy_cpu_during_a_dirty_page_flood_is_the_writeback_burst() -> None:
    for seed in range(5):
        d = _diagnose(flood=True, seed=seed)
        assert d.top.category is Category.WRITEBACK_BURST, [
            (c.category.value, c.confidence) for c in d.causes
        ]


def test_busy_cpu_without_a_flood_is_still_contention() -> None:
    for seed in range(5):
        d = _diagnose(flood=False, seed=seed)
        assert d.top.category is Category.CPU_CONTENTION, [(c.category.value, c.confidence) for c in d.causes]
