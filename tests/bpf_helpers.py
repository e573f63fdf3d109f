"""Fake tracefs trees and a fake bcc module for the eBPF source tests."""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from bpf.loader import COLLECTORS
from bpf.snapshot import TID_SLOT_BASE, TID_SLOTS

FORMAT = """name: {event}
ID: 1
format:
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;
{fields}
print fmt: "x"
"""


def write_event(
    root: Path, category: str, event: str, fields: list[str], tracefs: str = "sys/kernel/tracing"
) -> None:
    d = root / tracefs / "events" / category / event
    d.mkdir(parents=True, exist_ok=True)
    body = "\n".join(f"\tfield:{f};\toffset:8;\tsize:4;\tsigned:0;" for f in fields)
    (d / "format").write_text(FORMAT.format(event=event, fields=body))


def write_all_events(root: Path) -> None:
    fields: dict[tuple[str, str], set[str]] = {}
    for spec in COLLECTORS.values():
        for tp in spec.tracepoints:
            fields.setdefault((tp.category, tp.event), set()).update(tp.fields)
    for (category, event), names in fields.items():
        write_event(root, category, event, [f"long {f}" for f in sorted(names)])


class FakeTable:
    """The slice of bcc's table API the collectors use: per-CPU arrays, drained hashes, lookups."""

    def __init__(
        self,
        array: list[list[int]] | None = None,
        items: list[tuple[Any, Any]] | None = None,
        lookups: dict[int, Any] | None = None,
        size: int | None = None,
    ) -> None:
        self.array = array
        self.items = list(items or [])
        self.lookups = dict(lookups or {})
        self.size = size  # an array read by lookups: its length

    @staticmethod
    def Key(k: int) -> int:
        return k

    def __len__(self) -> int:
        return self.size if self.size is not None else len(self.array or [])

    def __getitem__(self, k: int) -> Any:
        if self.array is not None:
            return self.array[k]
        if k not in self.lookups:
            raise KeyError(k)
        return self.lookups[k]

    def items_lookup_and_delete_batch(self) -> Iterator[tuple[Any, Any]]:
        items, self.items = self.items, []
        yield from items


class FakeGate:
    """A program's one-element `gate` array (common.h, struct span)."""

    class Leaf:
        def __init__(self, open_ns: int = 0, shut_ns: int = 0) -> None:
            self.open_ns = open_ns
            self.shut_ns = shut_ns

    def __init__(self) -> None:
        self.value = FakeGate.Leaf()
        self.writes: list[tuple[int, int]] = []

    @staticmethod
    def Key(k: int) -> int:
        return k

    def __len__(self) -> int:
        return 1

    def __getitem__(self, k: int) -> FakeGate.Leaf:
        return self.value

    def __setitem__(self, k: int, v: FakeGate.Leaf) -> None:
        self.value = v
        self.writes.append((v.open_ns, v.shut_ns))


class FakeBPF:
    """Stands in for bcc.BPF: tables come from `FakeBcc.tables[program name]`."""

    def __init__(self, bcc: FakeBcc, src_file: bytes, cflags: list[str] | None = None) -> None:
        self.name = Path(src_file.decode()).name.removesuffix(".bpf.c")
        self.cflags = list(cflags or [])
        if self.name in bcc.fail or any(f"-D{m}" not in self.cflags for m in bcc.needs.get(self.name, ())):
            raise Exception(f"Failed to compile BPF module {src_file!r}\nmore lines")
        if self.name in bcc.pending:
            bcc.tables[self.name] = bcc.pending.pop(self.name)
        self.tables = bcc.tables.setdefault(self.name, {"drops": FakeTable(array=[[0, 0]])})
        self.tables.setdefault("gate", FakeGate())  # type: ignore[arg-type]
        self.tables.setdefault("start", FakeTable())
        self.detached: set[str] = set()
        self.cleanups = 0
        self.bcc = bcc
        bcc.loaded.append(self)
        bcc.log.append(("attach", self))

    def get_table(self, name: bytes) -> FakeTable:
        return self.tables[name.decode()]

    def attach_tracepoint(self, tp: bytes, fn_name: bytes) -> None:
        assert fn_name == b"tracepoint__" + tp.replace(b":", b"__")
        self.detached.discard(tp.decode())
        self.bcc.tp_log.append(("attach", tp.decode(), self))

    def detach_tracepoint(self, tp: bytes) -> None:
        assert tp.decode() not in self.detached
        self.detached.add(tp.decode())
        self.bcc.tp_log.append(("detach", tp.decode(), self))

    def cleanup(self) -> None:
        self.cleanups += 1
        self.bcc.log.append(("detach", self))


class FakeBcc(ModuleType):
    def __init__(self, fail: set[str] | None = None, needs: dict[str, tuple[str, ...]] | None = None) -> None:
        super().__init__("bcc")
        self.fail = fail or set()
        self.needs = needs or {}  # program -> macros without which it does not load
        self.tables: dict[str, dict[str, FakeTable]] = {}
        # The maps the next instance of a program gets (a reload's), instead of the current ones.
        self.pending: dict[str, dict[str, FakeTable]] = {}
        self.loaded: list[FakeBPF] = []
        self.log: list[tuple[str, FakeBPF]] = []  # ("attach" | "detach", instance), in order
        # ("attach" | "detach", tracepoint, instance) of the duty cycle's attaches and detaches
        self.tp_log: list[tuple[str, str, FakeBPF]] = []

    def BPF(self, src_file: bytes, cflags: list[str] | None = None) -> FakeBPF:
        return FakeBPF(self, src_file, cflags)


def tid_counts(slots: dict[int, int]) -> list[int]:
    """Running per-thread counts as the kernel keeps them: 32 slots from host slot 8."""
    return [slots.get(i + TID_SLOT_BASE, 0) for i in range(TID_SLOTS)]


# The fake host's one disk (major 259, minor 1) as the programs key it, and the slots of the
# scheduler program's per-thread array.
NVME = (259 << 20) | 1
SLOTS = 1024


def fake_host(root: Path, threads: tuple[tuple[int, int], ...] = ((42, 42),)) -> Path:
    """A fake host root for the eBPF source: tracefs, kernel headers, HZ, one NVMe disk, and the
    (pid, tid) threads given."""
    write_all_events(root)
    (root / f"lib/modules/{os.uname().release}/build/include").mkdir(parents=True)
    (root / "proc").mkdir()
    (root / "proc/config.gz").write_bytes(gzip.compress(b"CONFIG_HZ=100\n"))
    for pid, tid in threads:
        (root / f"proc/{pid}/task/{tid}").mkdir(parents=True)
    d = root / "sys/dev/block/259:1"
    d.mkdir(parents=True)
    (d / "uevent").write_text("MAJOR=259\nMINOR=1\nDEVNAME=nvme0n1\n")
    return root


def sched_maps(hist_len: int = 64) -> dict[str, FakeTable]:
    """The scheduler program's maps, empty."""
    return {
        "hist": FakeTable(array=[[0, 0] for _ in range(hist_len)]),
        "counters": FakeTable(array=[[0, 0], [0, 0]]),
        "slots": FakeTable(size=SLOTS, lookups={}),
        "tasks": FakeTable(lookups={}),
        "cgroups": FakeTable(),
        "drops": FakeTable(array=[[0, 0]]),
    }


def block_maps() -> dict[str, FakeTable]:
    """The block program's maps, empty."""
    return {"lat": FakeTable(), "stats": FakeTable(), "drops": FakeTable(array=[[0, 0]])}


def all_maps() -> dict[str, dict[str, FakeTable]]:
    """Every collector's maps, empty: what a live host started on fake_host() loads."""

    def counts(n: int) -> FakeTable:
        return FakeTable(array=[[0, 0] for _ in range(n)])

    return {
        "block": block_maps(),
        "sched": sched_maps(),
        "vmscan": {"totals": counts(3), "drops": counts(1)},
        "writeback": {"totals": counts(2), "drops": counts(1)},
        "filemap": {"misses": counts(1), "drops": counts(1)},
    }
