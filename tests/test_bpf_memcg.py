"""Reclaim the charging task does for its memory cgroup: optional tracepoints probed at run
time, folded into direct reclaim and given alone; fake map data, and one root test on the
real kernel with a v1 memory cgroup at its limit."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.sources.bpf_convert import vmscan_metrics
from agent.sources.bpf_source import BpfSource
from bpf import loader, snapshot
from bpf.loader import PROGRAM_DIR
from bpf.snapshot import VmscanRaw
from core.hostfs import HostFS
from core.vocabulary import is_known, parse
from tests.bpf_helpers import FakeBcc, FakeTable, write_all_events, write_event

MEMCG = ("mm_vmscan_memcg_reclaim_begin", "mm_vmscan_memcg_reclaim_end")
NODE = ("mm_vmscan_node_reclaim_begin", "mm_vmscan_node_reclaim_end")


def test_memcg_reclaim_counts_as_direct_and_alone() -> None:
    raw = VmscanRaw(
        reclaim_ns=10_000_000, reclaims=1, kswapd_wakeups=0, memcg_ns=30_000_000, memcg_reclaims=6
    )
    m = vmscan_metrics(raw, 2.0)
    assert m == {
        "mem.direct_reclaim_ms_per_s": 20.0,
        "mem.kswapd_wakeups_per_s": 0.0,
        "mem.memcg_reclaim_ms_per_s": 15.0,
    }
    assert all(is_known(k) for k in m)
    d = parse("mem.memcg_reclaim_ms_per_s")
    assert d is not None and d.definition.subsystem == "mem"


def test_node_reclaim_is_direct_and_a_kernel_without_memcg_events_says_nothing_of_cgroups() -> None:
    m = vmscan_metrics(VmscanRaw(reclaim_ns=0, node_ns=4_000_000, node_reclaims=2), 1.0)
    assert m == {"mem.direct_reclaim_ms_per_s": 4.0, "mem.kswapd_wakeups_per_s": 0.0}
    # Not attached is not zero: the cgroup figure is absent, not 0.
    assert "mem.memcg_reclaim_ms_per_s" not in vmscan_metrics(VmscanRaw(reclaim_ns=1), 1.0)


def _collector(features: frozenset[str], totals: list[int]) -> loader.Collector:
    bcc = FakeBcc()
    bcc.tables["vmscan"] = {
        "totals": FakeTable(array=[[t, 0] for t in totals]),
        "drops": FakeTable(array=[[0]]),
    }
    return loader.load(loader.COLLECTORS["vmscan"], bcc, features)


def test_read_vmscan_reads_only_the_parts_compiled_in() -> None:
    totals = [5, 1, 2, 7, 3, 11, 4]
    both = snapshot.read_vmscan(_collector(frozenset({"HAVE_MEMCG_RECLAIM", "HAVE_NODE_RECLAIM"}), totals))
    assert (both.memcg_ns, both.memcg_reclaims, both.node_ns, both.node_reclaims) == (7, 3, 11, 4)
    bare = snapshot.read_vmscan(_collector(frozenset(), totals))
    assert (bare.reclaim_ns, bare.reclaims, bare.kswapd_wakeups) == (5, 1, 2)
    assert bare.memcg_ns is None and bare.node_ns is None


def test_probe_features_needs_every_tracepoint_of_a_part(tmp_path: Path) -> None:
    write_all_events(tmp_path)
    spec = loader.COLLECTORS["vmscan"]
    fs = HostFS(str(tmp_path))
    tracefs = "/sys/kernel/tracing"
    assert loader.probe_features(spec, fs, tracefs) == frozenset()
    write_event(tmp_path, "vmscan", MEMCG[0], ["int order"])
    assert loader.probe_features(spec, fs, tracefs) == frozenset()  # begin without end
    write_event(tmp_path, "vmscan", MEMCG[1], ["unsigned long nr_reclaimed"])
    assert loader.probe_features(spec, fs, tracefs) == {"HAVE_MEMCG_RECLAIM"}
    for ev in NODE:
        write_event(tmp_path, "vmscan", ev, ["int nid"])
    assert loader.probe_features(spec, fs, tracefs) == {"HAVE_MEMCG_RECLAIM", "HAVE_NODE_RECLAIM"}


def _host(tmp_path: Path) -> Path:
    write_all_events(tmp_path)
    (tmp_path / f"lib/modules/{os.uname().release}/build/include").mkdir(parents=True)
    (tmp_path / "proc").mkdir()
    return tmp_path


def test_source_compiles_in_what_the_kernel_has(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    host = _host(tmp_path)
    for ev in MEMCG:
        write_event(host, "vmscan", ev, ["int order"])
    bcc = FakeBcc()
    monkeypatch.setitem(sys.modules, "bcc", bcc)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    src = BpfSource(HostFS(str(host)), collectors=["vmscan"])
    assert src.start().live
    (prog,) = bcc.loaded
    assert prog.cflags == [f"-I{PROGRAM_DIR}", "-DHAVE_MEMCG_RECLAIM"]
    st = src.collector_status()["vmscan"]
    assert st.live and "HAVE_NODE_RECLAIM" in st.reason
    bcc.tables["vmscan"]["totals"] = FakeTable(
        array=[[0, 0], [0, 0], [0, 0], [40_000_000, 0], [4, 0], [0, 0], [0, 0]]
    )
    m = src.collect()
    assert m["mem.memcg_reclaim_ms_per_s"] > 0
    assert m["mem.direct_reclaim_ms_per_s"] == pytest.approx(m["mem.memcg_reclaim_ms_per_s"])
    src.close()


MEMCG_V1 = Path("/sys/fs/cgroup/memory")


@pytest.mark.root
@pytest.mark.slow
@pytest.mark.skipif(
    os.geteuid() != 0
    or importlib.util.find_spec("bcc") is None
    or not Path("/sys/kernel/tracing/events/vmscan/mm_vmscan_memcg_reclaim_begin").is_dir()
    or not (MEMCG_V1 / "memory.limit_in_bytes").exists(),
    reason="needs root, bcc, the memcg reclaim tracepoints and a cgroup v1 memory hierarchy",
)
def test_reading_through_a_small_memory_cgroup_shows_as_memcg_reclaim(tmp_path: Path) -> None:
    """A file twice the cgroup's limit, read twice: its page cache is reclaimed by the reader itself."""
    data = tmp_path / "data"
    with data.open("wb") as f:
        for _ in range(96):
            f.write(os.urandom(1 << 20))
        f.flush()
        os.fsync(f.fileno())
        # Out of the page cache, so the reader inside the cgroup charges every page it reads.
        os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
    cg = MEMCG_V1 / f"idletune-test-{os.getpid()}"
    cg.mkdir()
    src = BpfSource(collectors=["vmscan"])
    try:
        (cg / "memory.limit_in_bytes").write_text(str(32 << 20))
        assert src.start().live
        src.collect()
        t0 = time.monotonic()
        subprocess.run(
            ["sh", "-c", f'echo $$ > {cg}/cgroup.procs && cat "$1" "$1" > /dev/null', "sh", str(data)],
            check=True,
            timeout=60,
        )
        assert time.monotonic() - t0 > 0
        m = src.collect()
    finally:
        src.close()
        cg.rmdir()
    assert m["mem.memcg_reclaim_ms_per_s"] > 0
    assert m["mem.direct_reclaim_ms_per_s"] >= m["mem.memcg_reclaim_ms_per_s"]
