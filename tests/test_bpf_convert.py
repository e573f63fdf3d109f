"""Raw collector map contents to vocabulary metrics, with fake map data (no kernel)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.sources.bpf_convert import (
    BlockedCarry,
    DeviceNames,
    TidHists,
    block_metrics,
    filemap_metrics,
    offcpu_metrics,
    runq_metrics,
    split_dev,
    vmscan_metrics,
    writeback_metrics,
)
from bpf.snapshot import (
    BlockRaw,
    DevCounts,
    FilemapRaw,
    OffcpuRaw,
    RunqRaw,
    VmscanRaw,
    WritebackRaw,
)
from core.hostfs import HostFS
from core.vocabulary import is_known
from tests.bpf_helpers import tid_counts

NVME = (259 << 20) | 1  # kernel dev_t of 259:1
LOOP = 7 << 20  # 7:0


@pytest.fixture
def names(tmp_path: Path) -> DeviceNames:
    for (maj, mi), text in {(259, 1): "MAJOR=259\nMINOR=1\nDEVNAME=nvme0n1\nDEVTYPE=disk\n"}.items():
        d = tmp_path / f"sys/dev/block/{maj}:{mi}"
        d.mkdir(parents=True)
        (d / "uevent").write_text(text)
    return DeviceNames(HostFS(tmp_path))


def test_split_dev_uses_20_bit_minor() -> None:
    assert split_dev(NVME) == (259, 1)
    assert split_dev((8 << 20) | 0xFFFFF) == (8, 0xFFFFF)


def test_device_names_from_sysfs_and_fallback(names: DeviceNames) -> None:
    assert names(NVME) == "nvme0n1"
    assert names(LOOP) == "dev7_0"


def test_block_metrics(names: DeviceNames) -> None:
    raw = BlockRaw(
        # 100 requests: 98 in [64 us, 128 us) (slot 16 in ns), 2 in [1 ms, 2 ms) (slot 20).
        lat_ns={NVME: {16: 98, 20: 2}},
        counts={NVME: DevCounts(read_ops=80, write_ops=20, read_bytes=80 * 131072, write_bytes=20 * 4096)},
    )
    seen: set[int] = set()
    m = block_metrics(raw, 2.0, names, seen)
    assert all(is_known(k) for k in m)
    assert 65.536 <= m["io.nvme0n1.lat_p50_us"] < 131.072
    assert 1048.576 <= m["io.nvme0n1.lat_p99_us"] < 2097.152
    assert m["io.nvme0n1.read_iops"] == 40.0
    assert m["io.nvme0n1.write_iops"] == 10.0
    assert m["io.nvme0n1.read_kbps"] == 80 * 128 / 2.0
    assert m["io.nvme0n1.write_kbps"] == 20 * 4 / 2.0
    assert m["io.nvme0n1.avg_req_kb"] == pytest.approx((80 * 128 + 20 * 4) / 100)
    assert seen == {NVME}

    # Next interval the device is idle: rates are zero, latency and size unmeasured.
    idle = block_metrics(BlockRaw(), 1.0, names, seen)
    assert idle == {
        "io.nvme0n1.read_iops": 0.0,
        "io.nvme0n1.write_iops": 0.0,
        "io.nvme0n1.read_kbps": 0.0,
        "io.nvme0n1.write_kbps": 0.0,
    }


def test_runq_metrics_merge_job_threads() -> None:
    raw = RunqRaw(
        host_ns={10: 990, 17: 10},
        per_tid_total={100: tid_counts({10: 50}), 101: tid_counts({14: 50}), 200: tid_counts({20: 7})},
    )
    m = runq_metrics(raw, {"train": [100, 101], "idle": [300], "other": {200}}, TidHists())
    assert all(is_known(k) for k in m)
    # Host: 990 events in [1.024, 2.048) us, 10 in [131, 262) us; p99 is the 990th.
    assert 1.024 <= m["sched.runq_lat_p99_us"] < 2.048
    # Job "train": merged {10: 50, 14: 50}; p99 lands in slot 14 = [16.384, 32.768) us.
    assert 16.384 <= m["sched.train.runq_lat_p99_us"] < 32.768
    assert 1048.576 <= m["sched.other.runq_lat_p99_us"] < 2097.152
    assert "sched.idle.runq_lat_p99_us" not in m  # no events: not measured


def test_tid_hists_are_per_interval_and_survive_tid_reuse() -> None:
    h = TidHists()
    assert h.interval({7: tid_counts({9: 5})}) == {7: {9: 5}}
    assert h.interval({7: tid_counts({9: 5, 12: 2})}) == {7: {12: 2}}
    assert h.interval({7: tid_counts({9: 5, 12: 2})}) == {}
    # tid 7 exited and was reused: its counts restarted below the previous ones.
    assert h.interval({7: tid_counts({8: 1})}) == {7: {8: 1}}


def test_runq_per_thread_slots_below_base_fold_into_first() -> None:
    # The kernel folds waits under 256 ns into its first per-thread slot (host slot 8).
    raw = RunqRaw(per_tid_total={1: tid_counts({8: 3})})
    m = runq_metrics(raw, {"j": [1]}, TidHists())
    assert 0.256 <= m["sched.j.runq_lat_p99_us"] < 0.512


def test_offcpu_counters_and_fraction() -> None:
    carry = BlockedCarry()
    raw = OffcpuRaw(switches=5000, migrations=30, blocked_total_ns={42: 500_000_000, 43: 9})
    m = offcpu_metrics(raw, 2.0, {"train": 42}, carry, now_ns=10**12)
    assert all(is_known(k) for k in m)
    assert m["sched.ctx_switches_per_s"] == 2500.0
    assert m["sched.migrations_per_s"] == 15.0
    assert m["sched.train.offcpu_frac"] == pytest.approx(0.25)
    # Running totals: the next interval counts only what was added.
    raw2 = OffcpuRaw(blocked_total_ns={42: 800_000_000})
    assert offcpu_metrics(raw2, 1.0, {"train": 42}, carry, 10**12)[
        "sched.train.offcpu_frac"
    ] == pytest.approx(0.3)


def test_offcpu_long_sleep_is_split_across_intervals() -> None:
    carry = BlockedCarry()
    s = 10**9  # ns
    total = 4 * s  # sleeps that ended before the first read
    # Interval 1 ends at t=10 s; the main thread blocked at t=9.5 s and still sleeps.
    raw1 = OffcpuRaw(blocked_total_ns={42: total}, sleeping_since_ns={42: 9 * s + s // 2})
    carry.blocked_ns(42, OffcpuRaw(blocked_total_ns={42: total}), 9 * s)  # an earlier read
    m1 = offcpu_metrics(raw1, 1.0, {"j": 42}, carry, 10 * s)
    assert m1["sched.j.offcpu_frac"] == pytest.approx(0.5)
    # Interval 2 (t=10..11 s): still asleep the whole time.
    raw2 = OffcpuRaw(blocked_total_ns={42: total}, sleeping_since_ns={42: 9 * s + s // 2})
    assert offcpu_metrics(raw2, 1.0, {"j": 42}, carry, 11 * s)["sched.j.offcpu_frac"] == pytest.approx(1.0)
    # Interval 3 (t=11..12 s): woke at 11.25 s (sleep of 1.75 s ended), slept again at 11.75 s.
    total += s + 3 * s // 4
    raw3 = OffcpuRaw(blocked_total_ns={42: total}, sleeping_since_ns={42: 11 * s + 3 * s // 4})
    assert offcpu_metrics(raw3, 1.0, {"j": 42}, carry, 12 * s)["sched.j.offcpu_frac"] == pytest.approx(0.5)
    # Interval 4 (t=12..13 s): woke at 12.5 s and ran since.
    total += 3 * s // 4
    raw4 = OffcpuRaw(blocked_total_ns={42: total})
    assert offcpu_metrics(raw4, 1.0, {"j": 42}, carry, 13 * s)["sched.j.offcpu_frac"] == pytest.approx(0.5)


def test_offcpu_total_going_down_is_a_new_thread() -> None:
    carry = BlockedCarry()
    offcpu_metrics(OffcpuRaw(blocked_total_ns={5: 9 * 10**9}), 1.0, {"j": 5}, carry, 0)
    m = offcpu_metrics(OffcpuRaw(blocked_total_ns={5: 2 * 10**8}), 1.0, {"j": 5}, carry, 0)
    assert m["sched.j.offcpu_frac"] == pytest.approx(0.2)


def test_offcpu_fraction_is_clamped() -> None:
    m = offcpu_metrics(OffcpuRaw(blocked_total_ns={1: 5 * 10**9}), 1.0, {"j": 1}, BlockedCarry(), 0)
    assert m["sched.j.offcpu_frac"] == 1.0


def test_memory_rates() -> None:
    v = vmscan_metrics(VmscanRaw(reclaim_ns=30_000_000, reclaims=3, kswapd_wakeups=8), 2.0)
    assert v == {"mem.direct_reclaim_ms_per_s": 15.0, "mem.kswapd_wakeups_per_s": 4.0}
    # 50 jiffies at HZ=250 are 200 ms, over 4 s.
    w = writeback_metrics(WritebackRaw(pause_jiffies=50, pauses=10), 4.0, hz=250)
    assert w == {"mem.dirty_throttle_ms_per_s": 50.0}
    assert writeback_metrics(WritebackRaw(pause_jiffies=50), 4.0, hz=1000) == {
        "mem.dirty_throttle_ms_per_s": 12.5
    }
    f = filemap_metrics(FilemapRaw(pages=1000), 0.5)
    assert f == {"mem.pagecache_miss_per_s": 2000.0}
    assert all(is_known(k) for k in (*v, *w, *f))
