"""A page cache too small for the data read (a memory cgroup's limit): evicted pages are read
back, the device streams them, and the diagnosis names reclaim rather than the device or its
readahead; without refaults the same device figures still point at the device."""

from __future__ import annotations

from core.diagnosis import Category, Diagnosis
from core.report import HostInfo, JobInfo
from tests.diag_helpers import Jitter, diagnose_jittered


def _diagnose(refaults: float, memcg_ms: float, seed: int = 1, n: int = 40) -> Diagnosis:
    def metrics(t: int, j: Jitter) -> dict[str, float]:
        return {
            "trainer.job.data_wait_frac": j(0.9),
            "trainer.job.samples_per_s": j(760.0),
            "trainer.job.step_time_ms": j(84.0),
            "io.sdb.read_iops": j(370.0),
            "io.sdb.read_kbps": j(49000.0),
            "io.sdb.avg_req_kb": j(132.0),
            "io.sdb.lat_p50_us": j(250.0),
            "io.sdb.lat_p99_us": j(4000.0),
            "io.sdb.write_kbps": 0.0,
            "psi.io.some_avg10": j(50.0),
            "psi.mem.some_avg10": 0.0,
            "cpu.util_pct": j(50.0),
            "mem.pagecache_miss_per_s": j(12300.0),
            "mem.refaults_per_s": j(refaults) if refaults else 0.0,
            "mem.direct_reclaim_ms_per_s": j(memcg_ms) if memcg_ms else 0.0,
            "mem.memcg_reclaim_ms_per_s": j(memcg_ms) if memcg_ms else 0.0,
            "mem.kswapd_wakeups_per_s": 0.0,
            "mem.available_mib": j(23000.0),
            "mem.dirty_mib": j(10.0),
        }

    return diagnose_jittered(
        n,
        seed,
        metrics,
        HostInfo(cpus=16, gpus=0, block_devices=["sdb"]),
        knobs={"block.read_ahead_kb@sdb": 128},
        jobs=[JobInfo(name="job", loader_workers=4)],
    )


def test_data_set_evicted_by_a_cgroup_limit_is_memory_reclaim() -> None:
    for seed in range(5):
        d = _diagnose(refaults=11500.0, memcg_ms=15.0, seed=seed)
        assert d.top.category is Category.MEMORY_RECLAIM, [(c.category.value, c.confidence) for c in d.causes]
        assert "memory cgroup" in d.top.summary
        cited = {e.metric for e in d.top.evidence}
        assert "mem.refaults_per_s" in cited
        # The device and its readahead are the consequence, not competing causes worth acting on.
        for other in (Category.READAHEAD_MISMATCH, Category.STORAGE_LATENCY):
            assert next(c for c in d.causes if c.category is other).confidence < 0.3


def test_without_refaults_the_same_device_figures_are_not_reclaim() -> None:
    d = _diagnose(refaults=0.0, memcg_ms=0.0)
    assert d.top.category is not Category.MEMORY_RECLAIM
    assert d.top.category in (Category.READAHEAD_MISMATCH, Category.STORAGE_LATENCY)


def _stacked(loop_kbps: float, disk_kbps: float, seed: int = 1) -> Diagnosis:
    """The data set on a loop device whose backing file sits on vda: both count the same reads."""

    def metrics(t: int, j: Jitter) -> dict[str, float]:
        return {
            "trainer.job.data_wait_frac": j(0.9),
            "trainer.job.samples_per_s": j(760.0),
            "io.loop1.read_kbps": j(loop_kbps),
            "io.loop1.read_iops": j(loop_kbps / 132.0),
            "io.loop1.avg_req_kb": j(132.0),
            "io.vda.read_kbps": j(disk_kbps),
            "io.vda.read_iops": j(disk_kbps / 132.0),
            "io.vda.avg_req_kb": j(132.0),
            "mem.pagecache_miss_per_s": j(12300.0),
            "mem.refaults_per_s": j(11500.0),
            "mem.memcg_reclaim_ms_per_s": j(4.0),
            "mem.kswapd_wakeups_per_s": 0.0,
        }

    return diagnose_jittered(
        40,
        seed,
        metrics,
        HostInfo(cpus=2, gpus=0, block_devices=["loop1", "vda"]),
        knobs={"block.read_ahead_kb@loop1": 128, "block.read_ahead_kb@vda": 8192},
        jobs=[JobInfo(name="job", loader_workers=2)],
    )


def test_evicted_data_cites_the_pages_read_again_and_the_device_they_come_from() -> None:
    d = _stacked(49000.0, 49000.0)
    assert d.top.category is Category.MEMORY_RECLAIM
    cited = [e.metric for e in d.top.evidence]
    assert "mem.pagecache_miss_per_s" in cited
    # A loop device and its backing disk read the same bytes: the files live on the loop device.
    assert "io.loop1.read_kbps" in cited and "io.vda.read_kbps" not in cited
    assert len(cited) == len(set(cited)), cited


def test_a_disk_that_reads_far_more_than_the_stacked_device_is_the_one_cited() -> None:
    d = _stacked(2000.0, 49000.0)
    assert d.top.category is Category.MEMORY_RECLAIM
    cited = {e.metric for e in d.top.evidence}
    assert "io.vda.read_kbps" in cited and "io.loop1.read_kbps" not in cited


def _evicted_mid_window(seed: int) -> Diagnosis:
    """A job served from the page cache until a cgroup limit evicts its data set at t=20: the
    device that read a trickle now streams every sample back, refaults counted."""

    def metrics(t: int, j: Jitter) -> dict[str, float]:
        evicted = t >= 20
        return {
            "trainer.job.data_wait_frac": j(0.94 if evicted else 0.22),
            "trainer.job.samples_per_s": j(800.0 if evicted else 11200.0),
            "trainer.job.step_time_ms": j(80.0 if evicted else 5.7),
            "io.loop0.read_iops": j(365.0 if evicted else 1.0),
            "io.loop0.read_kbps": j(48400.0 if evicted else 36.0),
            "io.loop0.avg_req_kb": j(133.0 if evicted else 36.0),
            "psi.io.some_avg10": j(60.0 if evicted else 0.5),
            "mem.pagecache_miss_per_s": j(12290.0 if evicted else 11.0),
            "mem.refaults_per_s": j(12288.0) if evicted else 0.0,
            "mem.memcg_reclaim_ms_per_s": j(3.5) if evicted else 0.0,
            "mem.direct_reclaim_ms_per_s": j(3.5) if evicted else 0.0,
            "mem.kswapd_wakeups_per_s": 0.0,
            "mem.available_mib": j(20000.0),
        }

    return diagnose_jittered(
        40,
        seed,
        metrics,
        HostInfo(cpus=2, gpus=0, block_devices=["loop0"]),
        knobs={"block.read_ahead_kb@loop0": 128},
        jobs=[JobInfo(name="job", loader_workers=2)],
    )


def test_a_data_set_evicted_mid_window_is_not_readahead_fetching_unused_data() -> None:
    # Against a past served from the cache every sample read back raises the bytes read per
    # sample; counted refaults say they are the evicted data set, not readahead's waste.
    for seed in range(5):
        d = _evicted_mid_window(seed)
        assert d.top.category is Category.MEMORY_RECLAIM, [(c.category.value, c.confidence) for c in d.causes]
        ra = next(c for c in d.causes if c.category is Category.READAHEAD_MISMATCH)
        assert ra.confidence < 0.3, ra.summary
