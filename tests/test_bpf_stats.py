"""What each eBPF program costs: the bpf(2) calls behind the per-program counters (a fake system
call), the ledger that keeps them across reloads and closes, and a real program on the real kernel."""

from __future__ import annotations

import ctypes
import gzip
import importlib.util
import os
import struct
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from agent.sources.bpf_source import BpfSource
from bpf import stats
from bpf.stats import BpfCalls, CostLedger, ProgramCost, RunTimeStats
from core.hostfs import HostFS
from tests.bpf_helpers import FakeBcc, FakeBPF, FakeTable, write_all_events


class FakeSyscall:
    """bpf(2) as the kernel answers it: a stats descriptor, and each program's info by descriptor."""

    def __init__(self, progs: dict[int, tuple[int, int, int]] | None = None, refuse: int = 0) -> None:
        self.progs = dict(progs or {})  # fd -> (id, run_time_ns, run_cnt)
        self.refuse = refuse  # errno for BPF_ENABLE_STATS, 0 to grant it
        self.calls: list[tuple[int, int]] = []  # (cmd, size)
        self.granted: list[int] = []

    def __call__(self, cmd: int, attr: Any, size: int) -> tuple[int, int]:
        self.calls.append((cmd, size))
        if cmd == stats.BPF_ENABLE_STATS:
            assert attr.type == stats.BPF_STATS_RUN_TIME
            if self.refuse:
                return -1, self.refuse
            r, w = os.pipe()  # a real descriptor, so that closing it can be seen
            os.close(w)
            self.granted.append(r)
            return r, 0
        assert cmd == stats.BPF_OBJ_GET_INFO_BY_FD
        if attr.bpf_fd not in self.progs:
            return -1, 9  # EBADF
        pid, ns, cnt = self.progs[attr.bpf_fd]
        # Write the fields where the kernel's struct bpf_prog_info has them.
        buf = (ctypes.c_uint8 * attr.info_len).from_address(attr.info)
        for off, value, fmt in ((4, pid, "<I"), (192, ns, "<Q"), (200, cnt, "<Q")):
            raw = struct.pack(fmt, value)
            buf[off : off + len(raw)] = list(raw)
        return 0, 0


def test_prog_info_matches_the_kernel_layout() -> None:
    assert stats.ProgInfo.id.offset == 4
    assert stats.ProgInfo.name.offset == 64
    assert stats.ProgInfo.run_time_ns.offset == 192
    assert stats.ProgInfo.run_cnt.offset == 200
    assert ctypes.sizeof(stats.ProgInfo) == 216


def test_program_cost_reads_run_time_and_count_from_the_info() -> None:
    sc = FakeSyscall({7: (42, 1_500_000, 300)})
    cost = BpfCalls(sc).program_cost(7)
    assert cost == ProgramCost(run_ns=1_500_000, runs=300, id=42)
    assert sc.calls == [(stats.BPF_OBJ_GET_INFO_BY_FD, 16)]
    with pytest.raises(OSError):
        BpfCalls(sc).program_cost(8)


def fake_root(tmp_path: Path, sysctl: str | None) -> HostFS:
    if sysctl is not None:
        p = tmp_path / "proc/sys/kernel/bpf_stats_enabled"
        p.parent.mkdir(parents=True)
        p.write_text(sysctl + "\n")
    return HostFS(tmp_path)


def test_stats_are_held_on_by_a_descriptor_closed_at_the_end(tmp_path: Path) -> None:
    sc = FakeSyscall()
    rt = RunTimeStats(fake_root(tmp_path, "0"), BpfCalls(sc))
    assert rt.start() and rt.on
    assert "BPF_ENABLE_STATS" in rt.how
    assert rt.start()  # a second start holds the same descriptor
    assert len(sc.granted) == 1
    fd = sc.granted[0]
    os.fstat(fd)
    rt.close()
    with pytest.raises(OSError):
        os.fstat(fd)
    assert not rt.on
    rt.close()  # idempotent
    # Nothing was written on the host.
    assert (tmp_path / "proc/sys/kernel/bpf_stats_enabled").read_text() == "0\n"


def test_a_kernel_without_the_command_is_read_through_the_sysctl(tmp_path: Path) -> None:
    rt = RunTimeStats(fake_root(tmp_path, "1"), BpfCalls(FakeSyscall(refuse=22)))
    assert rt.start()
    assert "kernel.bpf_stats_enabled" in rt.how


def test_without_either_run_time_is_not_measured_and_the_reason_says_how_to(tmp_path: Path) -> None:
    rt = RunTimeStats(fake_root(tmp_path, "0"), BpfCalls(FakeSyscall(refuse=22)))
    assert not rt.start()
    assert rt.how.startswith("not measured: BPF_ENABLE_STATS refused")
    assert "sysctl kernel.bpf_stats_enabled=1" in rt.how
    assert (tmp_path / "proc/sys/kernel/bpf_stats_enabled").read_text() == "0\n"


def test_the_ledger_keeps_what_a_retired_program_counted() -> None:
    led = CostLedger()
    led.see("sched/sched_switch", ProgramCost(100, 10, id=1))
    led.settle({1})
    assert led.totals() == {"sched/sched_switch": ProgramCost(100, 10)}
    # A reload: the old instance's last totals, then the new one alone.
    led.see("sched/sched_switch", ProgramCost(150, 15, id=1))
    led.see("sched/sched_switch", ProgramCost(5, 1, id=2))
    led.settle({1, 2})
    assert led.totals() == {"sched/sched_switch": ProgramCost(155, 16)}
    led.see("sched/sched_switch", ProgramCost(30, 4, id=2))
    led.settle({2})
    assert led.totals() == {"sched/sched_switch": ProgramCost(180, 19)}
    led.settle(set())  # closed: the totals stay
    assert led.totals() == {"sched/sched_switch": ProgramCost(180, 19)}


# -- the eBPF source, on a fake bcc ------------------------------------------------------


class Funcs(FakeBcc):
    """A fake bcc whose objects name their programs as bcc does, each with its own descriptor."""

    def __init__(self, sc: FakeSyscall) -> None:
        super().__init__()
        self.sc = sc
        self.next_fd = 100

    def BPF(self, src_file: bytes, cflags: list[str] | None = None) -> FakeBPF:
        b = super().BPF(src_file, cflags)
        events = {"block": ["block_rq_issue", "block_rq_complete"], "writeback": ["balance_dirty_pages"]}[
            b.name
        ]
        funcs = {}
        for ev in events:
            self.next_fd += 1
            self.sc.progs[self.next_fd] = (self.next_fd, 0, 0)
            funcs[f"tracepoint__{b.name}__{ev}".encode()] = SimpleNamespace(fd=self.next_fd)
        b.funcs = funcs  # type: ignore[attr-defined]
        return b


@pytest.fixture
def host(tmp_path: Path) -> Path:
    write_all_events(tmp_path)
    (tmp_path / f"lib/modules/{os.uname().release}/build/include").mkdir(parents=True)
    (tmp_path / "proc/sys/kernel").mkdir(parents=True)
    (tmp_path / "proc/sys/kernel/bpf_stats_enabled").write_text("0\n")
    (tmp_path / "proc/config.gz").write_bytes(gzip.compress(b"CONFIG_HZ=100\n"))
    return tmp_path


def run(sc: FakeSyscall, fd: int, ns: int, cnt: int) -> None:
    pid, _, _ = sc.progs[fd]
    sc.progs[fd] = (pid, ns, cnt)


def test_the_source_counts_each_program_across_a_reload_and_a_close(
    host: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sc = FakeSyscall()
    bcc = Funcs(sc)
    bcc.tables = {
        "block": {"lat": FakeTable(), "stats": FakeTable(), "drops": FakeTable(array=[[0, 0]])},
        "writeback": {"totals": FakeTable(array=[[0], [0], [0]]), "drops": FakeTable(array=[[0]])},
    }
    monkeypatch.setitem(sys.modules, "bcc", bcc)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    src = BpfSource(HostFS(host), collectors=["block", "writeback"], bpf_calls=BpfCalls(sc))
    assert src.start().live
    assert src.run_time_status()[0]
    assert len(sc.granted) == 1
    issue = 101  # block's first program
    run(sc, issue, 2_000, 10)
    costs = src.program_costs()
    assert set(costs) == {"block/block_rq_issue", "block/block_rq_complete", "writeback/balance_dirty_pages"}
    assert costs["block/block_rq_issue"] == ProgramCost(2_000, 10)

    new_issue = 104  # after block's two and writeback's one, the new block object's first
    swapped: list[int] = []

    def during_settle(_s: float) -> None:
        run(sc, issue, 2_400, 11)  # the old instance counts on while both are attached
        swapped.append(1)

    monkeypatch.setattr("time.sleep", during_settle)
    ok, _ = src.reload()
    assert ok and swapped
    assert sc.progs[new_issue][0] == new_issue
    run(sc, issue, 2_500, 12)  # after the swap, before its detach: past its last reading, not counted
    run(sc, new_issue, 700, 3)
    costs = src.program_costs()
    # The old instance's totals at the swap, plus the new one's: never less than before.
    assert costs["block/block_rq_issue"] == ProgramCost(3_100, 14)

    src.close()
    with pytest.raises(OSError):
        os.fstat(sc.granted[0])
    assert src.program_costs()["block/block_rq_issue"] == ProgramCost(3_100, 14)


def test_run_time_stats_can_be_turned_off(host: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sc = FakeSyscall()
    bcc = Funcs(sc)
    bcc.tables = {"writeback": {"totals": FakeTable(array=[[0], [0], [0]]), "drops": FakeTable(array=[[0]])}}
    monkeypatch.setitem(sys.modules, "bcc", bcc)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    src = BpfSource(HostFS(host), collectors=["writeback"], run_time_stats=False, bpf_calls=BpfCalls(sc))
    assert src.start().live
    assert sc.granted == []
    measured, how = src.run_time_status()
    assert not measured and "cost.bpf_stats: false" in how
    src.close()


# -- the real kernel ---------------------------------------------------------------------------


def _stats_fds() -> int:
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            n += os.readlink(f"/proc/self/fd/{fd}") == "anon_inode:bpf-stats"
        except OSError:
            continue
    return n


@pytest.mark.root
@pytest.mark.skipif(
    os.geteuid() != 0
    or importlib.util.find_spec("bcc") is None
    or not Path("/sys/kernel/tracing/events").is_dir(),
    reason="needs root, bcc and tracefs",
)
def test_a_real_program_is_measured_while_it_runs_and_the_kernel_setting_is_left_alone() -> None:
    """The scheduler collector on the real kernel: switches make its counters move."""
    sysctl = Path(stats.STATS_SYSCTL).read_text()
    before = _stats_fds()
    src = BpfSource(collectors=["sched"])
    try:
        assert src.start().live
        measured, how = src.run_time_status()
        assert measured, how
        first = src.program_costs()["sched/sched_switch"]
        # Context switches: a child that sleeps and wakes a few hundred times.
        subprocess.run(
            [sys.executable, "-c", "import time\nfor _ in range(300): time.sleep(0.0005)"], check=True
        )
        then = src.program_costs()["sched/sched_switch"]
        assert then.runs >= first.runs + 300
        assert then.run_ns > first.run_ns
        assert _stats_fds() == before + 1
    finally:
        src.close()
    assert _stats_fds() == before
    # Statistics went back with the descriptor; the sysctl was never written.
    assert Path(stats.STATS_SYSCTL).read_text() == sysctl
    kept = src.program_costs()["sched/sched_switch"]
    assert kept.runs >= then.runs
