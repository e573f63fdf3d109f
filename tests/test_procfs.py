"""procfs parsers against files recorded on a real host (tests/fixtures/proc/t0, t1:
two snapshots about a second apart, with 64 MiB written and read back in between),
plus hand-made edge cases."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agent.sources.procfs import (
    DiskCounters,
    ProcfsSource,
    disk_rates,
    disk_selection,
    meminfo_metrics,
    parse_diskstats,
    parse_meminfo,
    parse_psi,
    parse_stat,
    parse_vmstat,
    psi_metrics,
    stat_gauges,
    stat_rates,
    vmstat_gauges,
    vmstat_rates,
)
from core.hostfs import HostFS
from core.vocabulary import is_known

FIX = Path(__file__).parent / "fixtures" / "proc"


def _read(snap: str, name: str) -> str:
    return (FIX / snap / name).read_text()


# --- recorded files -------------------------------------------------------------------


def test_psi_recorded() -> None:
    texts = {r: _read("t0", f"pressure/{r}") for r in ("cpu", "io", "memory")}
    m = psi_metrics(texts)
    assert m == {
        "psi.cpu.some_avg10": 0.01,
        "psi.io.some_avg10": 0.01,
        "psi.io.full_avg10": 0.01,
        "psi.mem.some_avg10": 0.0,
        "psi.mem.full_avg10": 0.0,
    }


def test_meminfo_recorded() -> None:
    m = meminfo_metrics(parse_meminfo(_read("t0", "meminfo")))
    assert m == {
        "mem.dirty_mib": pytest.approx(152 / 1024),
        "mem.writeback_mib": 0.0,
        "mem.available_mib": pytest.approx(24319932 / 1024),
    }


def test_vmstat_recorded() -> None:
    a, b = parse_vmstat(_read("t0", "vmstat")), parse_vmstat(_read("t1", "vmstat"))
    rates = vmstat_rates(a, b, 2.0)
    # numa_hit rose by 7983, numa_miss stayed 0: every allocation was local.
    assert rates["numa.remote_frac"] == 0.0
    assert rates["mem.major_faults_per_s"] == pytest.approx(6 / 2.0)
    assert rates["mem.pgscan_direct_per_s"] == 0.0
    assert rates["mem.allocstall_per_s"] == 0.0
    g = vmstat_gauges(b, 4096)
    assert g["mem.dirty_threshold_mib"] == pytest.approx(1217430 * 4096 / 2**20)
    assert g["mem.dirty_bg_threshold_mib"] == pytest.approx(607972 * 4096 / 2**20)


def test_stat_recorded() -> None:
    a, b = parse_stat(_read("t0", "stat")), parse_stat(_read("t1", "stat"))
    assert a is not None and b is not None
    r = stat_rates(a, b, 1.0)
    # cpu lines: busy (user+nice+system+irq+softirq+steal) 7687 -> 7767, idle +132, iowait +12.
    assert r["cpu.util_pct"] == pytest.approx(100 * 80 / 224)
    assert r["cpu.iowait_pct"] == pytest.approx(100 * 12 / 224)
    assert r["sched.ctx_switches_per_s"] == 308901 - 306234
    assert stat_gauges(b) == {"sched.procs_running": 2.0, "sched.procs_blocked": 0.0}


def test_diskstats_recorded() -> None:
    a, b = parse_diskstats(_read("t0", "diskstats")), parse_diskstats(_read("t1", "diskstats"))
    assert set(a) == {"vda", "zram0"} | {f"loop{i}" for i in range(8)}
    names = disk_selection(b, None)
    assert names == ["vda"]  # idle loop and zram devices are not worth a row
    r = disk_rates(a, b, 2.0, names)
    assert r["io.vda.read_iops"] == pytest.approx(1104 / 2)
    assert r["io.vda.write_iops"] == pytest.approx(64 / 2)
    assert r["io.vda.read_kbps"] == pytest.approx(134120 * 512 / 1024 / 2)
    assert r["io.vda.write_kbps"] == pytest.approx(65536 / 2)  # the 64 MiB direct write
    assert r["io.vda.avg_req_kb"] == pytest.approx((67060 + 65536) / 1168)
    assert r["io.vda.await_ms"] == pytest.approx((201 + 28) / 1168)
    assert r["io.vda.util_pct"] == pytest.approx(100 * 136 / 2000)


def test_every_emitted_name_is_in_the_vocabulary(tmp_path: Path) -> None:
    src = ProcfsSource(_fake_root(tmp_path, "t0"), clock=_Clock(), page_size=4096)
    src.collect()
    _copy_proc(tmp_path, "t1")
    m = src.collect()
    assert len(m) > 20
    assert [n for n in m if not is_known(n)] == []


# --- edge cases -------------------------------------------------------------------------


def test_psi_ignores_garbage_and_missing_fields() -> None:
    assert parse_psi("some avg60=1.0 total=3\nfull avg10=x\n\nbogus\n") == {}
    assert psi_metrics({"cpu": "some avg10=2.50 avg60=0 avg300=0 total=1\n"}) == {"psi.cpu.some_avg10": 2.5}
    # The host-wide cpu "full" line is zero by definition and has no name.
    assert psi_metrics({"cpu": "full avg10=9.00 avg60=0 avg300=0 total=1\n"}) == {}


def test_meminfo_missing_fields() -> None:
    assert meminfo_metrics(parse_meminfo("MemTotal: 100 kB\nbroken line\nDirty: x kB\n")) == {}
    assert meminfo_metrics(parse_meminfo("Writeback:  2048 kB\n")) == {"mem.writeback_mib": 2.0}


def test_numa_frac_needs_events() -> None:
    prev = {"numa_hit": 100, "numa_miss": 10}
    assert "numa.remote_frac" not in vmstat_rates(prev, dict(prev), 1.0)
    r = vmstat_rates(prev, {"numa_hit": 130, "numa_miss": 20}, 1.0)
    assert r["numa.remote_frac"] == pytest.approx(10 / 40)


def test_vmstat_counter_reset_gives_no_rate() -> None:
    prev = {"numa_hit": 1000, "numa_miss": 50, "pgscan_direct": 500, "allocstall_normal": 9}
    cur = {"numa_hit": 10, "numa_miss": 0, "pgscan_direct": 20, "allocstall_normal": 1}
    assert vmstat_rates(prev, cur, 1.0) == {}


def test_vmstat_sums_allocstall_zones() -> None:
    prev = {"allocstall_normal": 1, "allocstall_movable": 2}
    cur = {"allocstall_normal": 4, "allocstall_movable": 5}
    assert vmstat_rates(prev, cur, 2.0) == {"mem.allocstall_per_s": 3.0}


def test_stat_reset_and_short_lines() -> None:
    assert parse_stat("intr 1 2\n") is None
    old = parse_stat("cpu 100 0 100 800\nctxt 5000\n")  # four columns: very old kernels
    assert old is not None and old.total == 1000 and old.iowait == 0
    new = parse_stat("cpu 10 0 10 80 0 0 0 0\nctxt 10\n")
    assert new is not None
    assert stat_rates(old, new, 1.0) == {}
    same = stat_rates(old, old, 1.0)
    assert "cpu.util_pct" not in same  # no jiffies elapsed: no share to compute
    assert same["sched.ctx_switches_per_s"] == 0.0


def test_diskstats_short_and_garbage_lines() -> None:
    text = "8 0 sda 1 2 3\n8 16 sdb a b c d e f g h i j k\n 8 32 sdc 1 0 8 1 2 0 16 2 0 3 3\n"
    d = parse_diskstats(text)
    assert list(d) == ["sdc"]
    assert d["sdc"] == DiskCounters(
        reads=1, read_sectors=8, read_ms=1, writes=2, write_sectors=16, write_ms=2, io_ms=3
    )


def test_diskstats_reset_skips_device_not_others() -> None:
    a = DiskCounters(100, 800, 10, 50, 400, 5, 30)
    b = DiskCounters(110, 880, 11, 50, 400, 5, 31)
    reset = DiskCounters(1, 8, 0, 0, 0, 0, 0)
    r = disk_rates({"sda": a, "sdb": a}, {"sda": reset, "sdb": b}, 1.0, ["sda", "sdb"])
    assert not any(k.startswith("io.sda.") for k in r)
    assert r["io.sdb.read_iops"] == 10.0
    assert "io.sdb.write_iops" in r
    assert all(v >= 0 for v in r.values())


def test_idle_device_has_rates_but_no_request_size() -> None:
    a = DiskCounters(1, 8, 1, 1, 8, 1, 1)
    r = disk_rates({"sda": a}, {"sda": a}, 1.0, ["sda"])
    assert r["io.sda.read_iops"] == 0.0
    assert "io.sda.avg_req_kb" not in r and "io.sda.await_ms" not in r


def test_selection_by_name_and_by_sysfs() -> None:
    zero = DiskCounters(0, 0, 0, 0, 0, 0, 0)
    busy = DiskCounters(1, 8, 1, 0, 0, 0, 1)
    c = {
        "sda": busy,
        "sda1": busy,
        "nvme0n1": busy,
        "nvme0n1p2": busy,
        "ram0": busy,
        "zram0": zero,
        "zram1": busy,
        "loop0": zero,
        "loop1": busy,
    }
    assert disk_selection(c, None) == ["loop1", "nvme0n1", "sda", "zram1"]
    assert disk_selection(c, ["sda", "loop0"]) == ["loop0", "sda"]


# --- the source over a fake root ----------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        self.t += 2.0
        return self.t


def _copy_proc(root: Path, snap: str) -> None:
    proc = root / "proc"
    shutil.copytree(FIX / snap, proc, dirs_exist_ok=True)


def _fake_root(root: Path, snap: str) -> HostFS:
    _copy_proc(root, snap)
    for dev, size in (("vda", "536870912"), ("loop0", "0"), ("zram0", "0")):
        d = root / "sys" / "block" / dev
        d.mkdir(parents=True)
        (d / "size").write_text(size + "\n")
        (d / "stat").write_text("0 0 0 0 0 0 0 0 0 0 0\n")
    return HostFS(root)


def test_source_first_collect_has_gauges_only(tmp_path: Path) -> None:
    src = ProcfsSource(_fake_root(tmp_path, "t0"), clock=_Clock(), page_size=4096)
    assert src.start().live
    first = src.collect()
    assert "mem.dirty_mib" in first and "psi.io.some_avg10" in first
    assert "cpu.util_pct" not in first and "io.vda.read_iops" not in first
    _copy_proc(tmp_path, "t1")
    second = src.collect()  # the fake clock advanced 2 s
    assert second["io.vda.write_kbps"] == pytest.approx(65536 / 2)
    assert second["cpu.util_pct"] == pytest.approx(100 * 80 / 224)
    assert not any(k.startswith(("io.loop", "io.zram")) for k in second)
    src.close()
    src.close()


def test_source_without_psi_is_live_and_says_so(tmp_path: Path) -> None:
    fs = _fake_root(tmp_path, "t0")
    shutil.rmtree(tmp_path / "proc" / "pressure")
    src = ProcfsSource(fs, clock=_Clock())
    st = src.start()
    assert st.live and "PSI" in st.reason
    m = src.collect()
    assert not any(k.startswith("psi.") for k in m)
    assert "mem.available_mib" in m


def test_source_without_proc_is_not_live(tmp_path: Path) -> None:
    st = ProcfsSource(HostFS(tmp_path)).start()
    assert not st.live
    assert "/proc/stat" in st.reason


def test_vmstat_refaults_sum_file_and_anon_or_take_the_old_single_counter() -> None:
    prev = {"workingset_refault_file": 100, "workingset_refault_anon": 10}
    cur = {"workingset_refault_file": 700, "workingset_refault_anon": 30}
    assert vmstat_rates(prev, cur, 2.0) == {"mem.refaults_per_s": 310.0}
    assert vmstat_rates({"workingset_refault": 5}, {"workingset_refault": 15}, 1.0) == {
        "mem.refaults_per_s": 10.0
    }
