"""What the loaded programs cost: the kernel's run-time statistics, read through bpf(2).

The kernel counts each program's runs and the time spent in them only while
statistics are on. They are turned on with the BPF_ENABLE_STATS command, which
keeps them on for as long as the returned file descriptor is open: when the
agent exits, even by a crash, the kernel closes it and statistics go back to
what they were. No sysctl is written. Where the command is refused (a kernel
before 5.8) and `kernel.bpf_stats_enabled` is already 1, statistics are read as
they are; otherwise run time is not measured, and the reason says how to turn
it on.

Each program's totals come from BPF_OBJ_GET_INFO_BY_FD on its descriptor.
While statistics are on, every BPF program on the host, not only ours, pays
for two clock reads per run (tens of nanoseconds).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import platform
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.hostfs import HostFS

# bpf(2) commands and the statistics type, from include/uapi/linux/bpf.h.
BPF_OBJ_GET_INFO_BY_FD = 15
BPF_ENABLE_STATS = 32
BPF_STATS_RUN_TIME = 0
# The system call's number, per architecture (it is not in the C library's headers for ctypes).
SYS_BPF = {"x86_64": 321, "aarch64": 280, "arm64": 280, "ppc64le": 361, "s390x": 351, "riscv64": 280}
STATS_SYSCTL = "/proc/sys/kernel/bpf_stats_enabled"


class ProgInfo(ctypes.Structure):
    """The head of struct bpf_prog_info up to recursion_misses; the kernel fills what we size."""

    _fields_ = [
        ("type", ctypes.c_uint32),
        ("id", ctypes.c_uint32),
        ("_head", ctypes.c_uint8 * 56),  # tag .. map_ids
        ("name", ctypes.c_char * 16),  # offset 64
        ("_middle", ctypes.c_uint8 * 112),  # ifindex .. prog_tags
        ("run_time_ns", ctypes.c_uint64),  # offset 192
        ("run_cnt", ctypes.c_uint64),
        ("recursion_misses", ctypes.c_uint64),
    ]


class _InfoAttr(ctypes.Structure):
    """The part of union bpf_attr that BPF_OBJ_GET_INFO_BY_FD reads."""

    _fields_ = [("bpf_fd", ctypes.c_uint32), ("info_len", ctypes.c_uint32), ("info", ctypes.c_uint64)]


class _StatsAttr(ctypes.Structure):
    """The part of union bpf_attr that BPF_ENABLE_STATS reads."""

    _fields_ = [("type", ctypes.c_uint32)]


# bpf(cmd, attr, size) -> result, errno: the one system call, replaced by a fake in tests.
Syscall = Callable[[int, Any, int], tuple[int, int]]


def _libc_syscall() -> Syscall:
    nr = SYS_BPF.get(platform.machine())
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    fn = libc.syscall
    fn.restype = ctypes.c_long

    def call(cmd: int, attr: Any, size: int) -> tuple[int, int]:
        if nr is None:
            return -1, 38  # ENOSYS: an architecture whose number we do not know
        ret = int(fn(ctypes.c_long(nr), ctypes.c_int(cmd), ctypes.byref(attr), ctypes.c_uint(size)))
        return ret, ctypes.get_errno() if ret < 0 else 0

    return call


@dataclass(frozen=True)
class ProgramCost:
    """One program's running totals: nanoseconds spent in it and times it ran (0 while stats are off)."""

    run_ns: int
    runs: int
    id: int = 0  # the kernel's id of the program, unique while the host is up

    def __add__(self, other: ProgramCost) -> ProgramCost:
        return ProgramCost(self.run_ns + other.run_ns, self.runs + other.runs)


class BpfCalls:
    """The two bpf(2) commands cost accounting needs."""

    def __init__(self, syscall: Syscall | None = None) -> None:
        self._syscall = syscall or _libc_syscall()

    def enable_stats(self) -> int:
        """A descriptor that keeps run-time statistics on while it is open; OSError when refused."""
        attr = _StatsAttr(type=BPF_STATS_RUN_TIME)
        fd, err = self._syscall(BPF_ENABLE_STATS, attr, ctypes.sizeof(attr))
        if fd < 0:
            raise OSError(err, os.strerror(err))
        return fd

    def program_cost(self, prog_fd: int) -> ProgramCost:
        """Run time and run count of the program behind `prog_fd`; OSError for a descriptor of none."""
        info = ProgInfo()
        attr = _InfoAttr(bpf_fd=prog_fd, info_len=ctypes.sizeof(info), info=ctypes.addressof(info))
        ret, err = self._syscall(BPF_OBJ_GET_INFO_BY_FD, attr, ctypes.sizeof(attr))
        if ret < 0:
            raise OSError(err, os.strerror(err))
        return ProgramCost(run_ns=int(info.run_time_ns), runs=int(info.run_cnt), id=int(info.id))


class RunTimeStats:
    """Run-time statistics held on for this process: `on` says whether the kernel counts, `how` why."""

    def __init__(self, fs: HostFS | None = None, calls: BpfCalls | None = None) -> None:
        self._fs = fs or HostFS()
        self._calls = calls
        self._fd: int | None = None
        self.on = False
        self.how = "not started"

    @property
    def calls(self) -> BpfCalls:
        if self._calls is None:
            self._calls = BpfCalls()
        return self._calls

    def start(self) -> bool:
        """Turn statistics on for as long as this object is open (or find them on); True when they count."""
        if self._fd is not None:
            return True
        try:
            self._fd = self.calls.enable_stats()
        except OSError as e:
            refused = e.strerror or str(e)
        else:
            self.on, self.how = True, "on while the agent runs (BPF_ENABLE_STATS)"
            return True
        # An older kernel has the sysctl only. It is read, never written: a write here would
        # outlive a crash of the agent, and host writes go through the executor alone.
        try:
            sysctl = self._fs.read_value(STATS_SYSCTL)
        except OSError:
            sysctl = ""
        if sysctl == "1":
            self.on, self.how = True, f"on by kernel.bpf_stats_enabled (BPF_ENABLE_STATS refused: {refused})"
        else:
            self.on = False
            self.how = (
                f"not measured: BPF_ENABLE_STATS refused ({refused}) and kernel.bpf_stats_enabled is off; "
                "`sysctl kernel.bpf_stats_enabled=1` measures it"
            )
        return self.on

    def close(self) -> None:
        """Let statistics go back to what they were before start(); idempotent."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)
            self.on, self.how = False, "closed"


ZERO = ProgramCost(0, 0)


class CostLedger:
    """Running totals per program name across the instances that ran under it.

    Programs are told apart by their kernel id. One that is no longer seen (its
    collector reloaded, duty-cycled off, or closed) keeps what it was last seen
    to have counted, so a name's totals never go down; what it ran after that
    last sighting is not counted.
    """

    def __init__(self) -> None:
        self._live: dict[int, tuple[str, ProgramCost]] = {}
        self._retired: dict[str, ProgramCost] = {}

    def see(self, name: str, cost: ProgramCost) -> None:
        """The latest totals of one running program."""
        self._live[cost.id] = (name, cost)

    def settle(self, running: set[int]) -> None:
        """Retire every program not in `running` (kernel ids), keeping its last totals."""
        for pid in [p for p in self._live if p not in running]:
            name, cost = self._live.pop(pid)
            self._retired[name] = self._retired.get(name, ZERO) + cost

    def totals(self) -> dict[str, ProgramCost]:
        out = dict(self._retired)
        for name, cost in self._live.values():
            out[name] = out.get(name, ZERO) + cost
        return {k: ProgramCost(v.run_ns, v.runs) for k, v in sorted(out.items())}
