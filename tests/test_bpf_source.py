"""BpfSource with a fake bcc: degraded starts, per-collector disabling, map contents to metrics, close."""

from __future__ import annotations

import gzip
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from agent.sources.base import Source
from agent.sources.bpf_source import BpfSource
from bpf.loader import PROGRAM_DIR
from bpf.snapshot import CgroupCounts
from core.hostfs import HostFS
from core.vocabulary import is_known
from tests.bpf_helpers import FakeBcc, FakeTable, tid_counts, write_all_events

NVME = (259 << 20) | 1
NCPU = 2
SLOTS = 1024  # the sched program's slot array (a power of two)


@pytest.fixture
def host(tmp_path: Path) -> Path:
    """A fake host root with tracefs, headers, HZ, one NVMe disk and a job with two threads."""
    write_all_events(tmp_path)
    (tmp_path / f"lib/modules/{os.uname().release}/build/include").mkdir(parents=True)
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/config.gz").write_bytes(gzip.compress(b"CONFIG_HZ=100\n"))
    for tid in (42, 43):
        (tmp_path / f"proc/42/task/{tid}").mkdir(parents=True)
    d = tmp_path / "sys/dev/block/259:1"
    d.mkdir(parents=True)
    (d / "uevent").write_text("MAJOR=259\nMINOR=1\nDEVNAME=nvme0n1\n")
    return tmp_path


@pytest.fixture
def as_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """monotonic_ns of the source, advanced by the test."""
    now = [10**12]
    monkeypatch.setattr(time, "monotonic_ns", lambda: now[0])
    return now


def per_cpu(total: int) -> list[int]:
    return [total - total // NCPU, total // NCPU]


def hist_array(slots: dict[int, int]) -> list[list[int]]:
    return [per_cpu(slots.get(i, 0)) for i in range(64)]


def fill_maps(bcc: FakeBcc) -> None:
    """One interval of map contents, as the kernel programs would leave them."""
    ns = SimpleNamespace
    bcc.tables.setdefault("block", {}).update(
        {
            "lat": FakeTable(
                items=[(ns(dev=NVME, slot=16), per_cpu(98)), (ns(dev=NVME, slot=20), per_cpu(2))]
            ),
            "stats": FakeTable(
                items=[
                    (
                        NVME,
                        [
                            ns(read_ops=60, write_ops=10, read_bytes=60 * 131072, write_bytes=10 * 4096),
                            ns(read_ops=20, write_ops=10, read_bytes=20 * 131072, write_bytes=10 * 4096),
                        ],
                    )
                ]
            ),
            "drops": FakeTable(array=[[0, 0]]),
        }
    )
    bcc.tables.setdefault("sched", {}).update(
        {
            "hist": FakeTable(array=hist_array({10: 990, 17: 10})),
            "counters": FakeTable(array=[per_cpu(6000), per_cpu(40)]),
            # Threads 42 and 43 belong to the job; 44 does not and must not count.
            # 42 is the job's main thread: its blocked total gives the job's offcpu_frac.
            # 42 has its slot; 43's slot is held by thread 43 + SLOTS, so 43 is in the
            # overflow hash; 44's slot is free and its entry is in the hash.
            "slots": FakeTable(
                size=SLOTS,
                lookups={
                    42: ns(
                        tid=42,
                        hist=tid_counts({10: 50}),
                        blocked_ns=500_000_000,
                        slept_ns=0,
                        born_ns=1,
                        epoch=0,
                    ),
                    43: ns(tid=43 + SLOTS, hist=[7] * 32, blocked_ns=1, slept_ns=5, born_ns=1, epoch=0),
                    44: ns(tid=0, hist=[0] * 32, blocked_ns=0, slept_ns=0, born_ns=1, epoch=0),
                },
            ),
            "tasks": FakeTable(
                lookups={
                    43: ns(
                        tid=43,
                        hist=tid_counts({14: 50}),
                        blocked_ns=7 * 10**9,
                        slept_ns=0,
                        born_ns=1,
                        epoch=0,
                    ),
                    44: ns(tid=44, hist=[9] * 32, blocked_ns=9 * 10**9, slept_ns=0, born_ns=1, epoch=0),
                }
            ),
            # Cgroup 7's counts of the interval on each of the two CPUs.
            "cgroups": FakeTable(
                items=[
                    (
                        7,
                        [
                            ns(waits=3, wait_ns=30_000, wait_sq_us=300, switches=5, run_ns=10, blocked_ns=20),
                            ns(waits=1, wait_ns=10_000, wait_sq_us=100, switches=1, run_ns=0, blocked_ns=5),
                        ],
                    )
                ]
            ),
            "drops": FakeTable(array=[[1, 2]]),
        }
    )
    bcc.tables.setdefault("vmscan", {}).update(
        {
            "totals": FakeTable(array=[per_cpu(20_000_000), per_cpu(2), per_cpu(6)]),
            "drops": FakeTable(array=[[0, 0]]),
        }
    )


@pytest.fixture
def fake_bcc(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeBcc]:
    bcc = FakeBcc(fail={"writeback"})
    monkeypatch.setitem(sys.modules, "bcc", bcc)
    yield bcc


def test_is_a_source() -> None:
    assert isinstance(BpfSource(), Source)
    assert BpfSource.name == "bpf"


def test_unknown_collector_is_a_bug() -> None:
    with pytest.raises(ValueError, match="unknown collectors"):
        BpfSource(collectors=["block", "nope"])


def test_not_root(host: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    src = BpfSource(HostFS(host), collectors=["block", "sched"])
    st = src.start()
    assert not st.live and "not root" in st.reason and "\n" not in st.reason
    assert {n: s.live for n, s in src.collector_status().items()} == {"block": False, "sched": False}
    assert src.collect() == {}
    src.close()
    assert src.drops() == {}


def test_bcc_missing(host: Path, as_root: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "bcc", None)  # makes `import bcc` raise ImportError
    st = BpfSource(HostFS(host)).start()
    assert not st.live and "python3-bpfcc" in st.reason


def test_tracefs_missing(tmp_path: Path, as_root: None, fake_bcc: FakeBcc) -> None:
    st = BpfSource(HostFS(tmp_path)).start()
    assert not st.live and "tracefs" in st.reason and "mount" in st.reason
    assert fake_bcc.loaded == []


def test_headers_missing(host: Path, as_root: None, fake_bcc: FakeBcc) -> None:
    (host / f"lib/modules/{os.uname().release}/build/include").rmdir()
    st = BpfSource(HostFS(host)).start()
    assert not st.live and "headers" in st.reason
    assert fake_bcc.loaded == []


def test_every_collector_failing_is_not_live(
    host: Path, as_root: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "bcc", FakeBcc(fail={"block", "filemap"}))
    src = BpfSource(HostFS(host), collectors=["block", "filemap"])
    st = src.start()
    assert not st.live and "compile/attach of block.bpf.c failed" in st.reason
    assert "\n" not in st.reason


def test_a_program_the_kernel_refuses_loads_its_fallback_build(
    host: Path, as_root: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    bcc = FakeBcc(needs={"block": ("NO_ATOMICS",)})  # as a kernel without BPF atomics refuses the slots
    monkeypatch.setitem(sys.modules, "bcc", bcc)
    src = BpfSource(HostFS(host), collectors=["block"])
    st = src.start()
    assert st.live
    status = src.collector_status()["block"]
    assert status.live and "NO_ATOMICS" in status.reason and "hash" in status.reason
    assert [b.cflags for b in bcc.loaded] == [[f"-I{PROGRAM_DIR}", "-DNO_ATOMICS"]]
    src.close()


def test_a_program_whose_fallback_fails_too_reports_the_first_failure(
    host: Path, as_root: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "bcc", FakeBcc(fail={"block"}))
    st = BpfSource(HostFS(host), collectors=["block"]).start()
    assert not st.live and "compile/attach of block.bpf.c failed" in st.reason and "\n" not in st.reason


def test_start_collect_close(host: Path, as_root: None, fake_bcc: FakeBcc, clock: list[int]) -> None:
    (host / "sys/kernel/tracing/events/filemap/mm_filemap_add_to_page_cache/format").unlink()
    src = BpfSource(HostFS(host), jobs=lambda: {"train": [42], "gone": [999]})
    st = src.start()
    assert st.live
    assert "writeback (compile/attach of writeback.bpf.c failed: Failed to compile" in st.reason
    assert "filemap (tracepoint filemap:mm_filemap_add_to_page_cache not in this kernel)" in st.reason
    status = src.collector_status()
    assert [n for n, s in status.items() if s.live] == ["block", "sched", "vmscan"]
    assert "more lines" not in status["writeback"].reason

    fill_maps(fake_bcc)
    clock[0] += 2 * 10**9
    m = src.collect()
    assert all(is_known(k) for k in m), [k for k in m if not is_known(k)]
    assert 65.536 <= m["io.nvme0n1.lat_p50_us"] < 131.072
    assert 1048.576 <= m["io.nvme0n1.lat_p99_us"] < 2097.152
    assert m["io.nvme0n1.read_iops"] == 40.0
    assert m["io.nvme0n1.write_iops"] == 10.0
    assert m["io.nvme0n1.read_kbps"] == 80 * 128 / 2
    assert m["io.nvme0n1.avg_req_kb"] == pytest.approx((80 * 128 + 20 * 4) / 100)
    assert 1.024 <= m["sched.runq_lat_p99_us"] < 2.048
    # Both threads of job "train" (42 and 43) are merged: p99 falls in tid 43's slot 14.
    assert 16.384 <= m["sched.train.runq_lat_p99_us"] < 32.768
    assert m["sched.train.offcpu_frac"] == pytest.approx(0.25)
    assert m["sched.ctx_switches_per_s"] == 3000.0
    assert m["sched.migrations_per_s"] == 20.0
    assert m["mem.direct_reclaim_ms_per_s"] == 10.0
    assert m["mem.kswapd_wakeups_per_s"] == 3.0
    assert "sched.gone.runq_lat_p99_us" not in m
    assert not any(k.startswith("mem.dirty_throttle") or k.startswith("mem.pagecache") for k in m)
    assert src.drops() == {"block": 0, "sched": 3, "vmscan": 0}
    cg = src.cgroups()
    assert cg is not None and cg.elapsed_s == 2.0
    assert cg.counts == {7: CgroupCounts(4, 40_000, 400, 6, 10, 25)}

    # Nothing new in the maps: arrays give zero deltas, drained hashes give nothing.
    clock[0] += 10**9
    m2 = src.collect()
    assert m2["sched.ctx_switches_per_s"] == 0.0
    assert m2["io.nvme0n1.read_iops"] == 0.0
    assert "io.nvme0n1.lat_p99_us" not in m2
    assert "sched.runq_lat_p99_us" not in m2
    assert m2["sched.train.offcpu_frac"] == 0.0
    cg2 = src.cgroups()
    assert cg2 is not None and cg2.counts == {}

    src.close()
    src.close()
    assert [b.cleanups for b in fake_bcc.loaded] == [1, 1, 1]
    assert src.collect() == {}
    assert src.drops() == {"block": 0, "sched": 3, "vmscan": 0}
    assert not any(s.live for s in src.collector_status().values())


def test_close_after_interrupted_start(host: Path, as_root: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """An interrupt (SIGINT) in the middle of start leaves what was attached to close()."""
    bcc = FakeBcc()
    real = bcc.BPF
    calls = {"n": 0}

    def bpf(src_file: bytes, cflags: list[str] | None = None) -> object:
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(src_file, cflags)

    monkeypatch.setattr(bcc, "BPF", bpf)
    monkeypatch.setitem(sys.modules, "bcc", bcc)
    src = BpfSource(HostFS(host))
    with pytest.raises(KeyboardInterrupt):
        src.start()
    src.close()
    assert [b.cleanups for b in bcc.loaded] == [1, 1]
