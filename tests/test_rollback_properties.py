"""Properties of rollback over generated histories, and of replaying generated hostile journals.

1. Any sequence of applies (each as its own process would make it), single rollbacks in any
   order, operator writes and crashes mid-write ends, after `rollback --all`, with every
   location at the value idletune first found there, unless an operator wrote it (then at the
   operator's value), and with no open change left. (One known limit, skipped below: an
   operator's write to nr_requests after a scheduler switch that crashed before its record.)
2. A journal of generated lines nobody signed (known and unknown primitives, paths inside and
   outside the catalogue's locations, `..`, odd kinds and values) makes `rollback --all` write
   only to the catalogue's own locations, raise nothing but a one-line StateError, and finish
   quickly.
"""

from __future__ import annotations

import contextlib
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.proposal import Action
from core.statedir import StateError
from guardrails.executor import Executor
from guardrails.filejournal import FileJournal, this_process
from guardrails.recovery import rollback_all, rollback_one
from primitives import catalog
from primitives.host import Host
from tests.fakes.fake_kernel import FakeKernelFS, make_root

MIB = 1024 * 1024
Q = "/sys/block/loop0/queue"
VM = "/proc/sys/vm"
FILES = [
    f"{Q}/read_ahead_kb",
    f"{Q}/scheduler",
    f"{Q}/nr_requests",
    f"{VM}/swappiness",
    f"{VM}/dirty_ratio",
    f"{VM}/dirty_bytes",
]
# What idletune may set, and what an operator writes: never the same values, so that a value on
# the host always says who put it there.
APPLY: dict[tuple[str, str | None], list[int | str]] = {
    ("block.read_ahead_kb", "loop0"): [256, 512, 1024, 2048],
    ("block.scheduler", "loop0"): ["none", "kyber"],
    # Not 128 or 256: a scheduler switch resets nr_requests to one of those.
    ("block.nr_requests", "loop0"): [64, 512],
    ("vm.swappiness", None): [20, 30, 40, 50],
    ("vm.dirty_ratio", None): [5, 15, 30],
    ("vm.dirty_bytes", None): [128 * MIB, 256 * MIB],
}
OPERATOR: dict[str, list[str]] = {
    f"{Q}/read_ahead_kb": ["300", "700"],
    f"{Q}/scheduler": ["bfq"],
    f"{Q}/nr_requests": ["100", "300"],
    f"{VM}/swappiness": ["55", "65"],
    f"{VM}/dirty_ratio": ["25", "35"],
}


class Crash(Exception):
    """The process died between its writes and the journal's `applied` record."""


class CrashingJournal(FileJournal):
    def applied(self, change: Any) -> None:
        raise Crash()


def _read(fs: FakeKernelFS, path: str) -> str:
    raw = fs.read_value(path)
    return raw[raw.index("[") + 1 : raw.index("]")] if "[" in raw else raw


def _snapshot(fs: FakeKernelFS) -> dict[str, str]:
    return {f: _read(fs, f) for f in FILES}


op = st.one_of(
    st.tuples(st.just("apply"), st.sampled_from(sorted(APPLY, key=str)), st.integers(0, 3)),
    st.tuples(st.just("crash"), st.sampled_from(sorted(APPLY, key=str)), st.integers(0, 3)),
    st.tuples(st.just("rollback"), st.integers(0, 7)),
    st.tuples(st.just("operator"), st.sampled_from(sorted(OPERATOR)), st.integers(0, 3)),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(op, max_size=14))
def test_rollback_ends_at_the_first_seen_values_unless_an_operator_wrote(ops: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        fs = make_root(Path(tmp) / "root", devices=("loop0",))
        state = Path(tmp) / "state"
        expected = _snapshot(fs)
        for o in ops:
            if o[0] in ("apply", "crash"):
                (primitive, target), k = o[1], o[2]
                values = APPLY[(primitive, target)]
                action = Action(primitive=primitive, target=target, value=values[k % len(values)], reason="t")
                journal = FileJournal(state) if o[0] == "apply" else CrashingJournal(state)
                with contextlib.suppress(Crash):
                    Executor(Host(fs), journal=journal).apply(action)
            elif o[0] == "rollback":
                open_ids = [c.id for c in FileJournal(state).open_changes()]
                if open_ids:
                    j = FileJournal(state, owner=this_process())
                    rollback_one(Executor(Host(fs), journal=j), j, open_ids[o[1] % len(open_ids)])
            else:
                path, k = o[1], o[2]
                interrupted = [c for c in FileJournal(state).open_changes() if c.state == "writing"]
                if path.endswith("/nr_requests") and any(
                    c.primitive == "block.scheduler" for c in interrupted
                ):
                    # Known limit: a scheduler switch cut off before its record resets nr_requests to a
                    # value no record holds, so a later write there cannot be told from that reset;
                    # recovery restores nr_requests. (The window is the microseconds between the
                    # write and the journal's `applied` line.)
                    continue
                before = _snapshot(fs)
                fs.write_text(path, OPERATOR[path][k % len(OPERATOR[path])])
                after = _snapshot(fs)
                # The operator owns what the write changed, side effects included (a scheduler switch
                # sets nr_requests even when it lands on the value it had).
                touched = {path} | {f for f in FILES if after[f] != before[f]}
                if path.endswith("/scheduler") and after[path] != before[path]:
                    touched.add(f"{Q}/nr_requests")
                expected.update({f: after[f] for f in touched})
        j = FileJournal(state, owner=this_process())
        results = rollback_all(Executor(Host(fs), journal=j), j)
        assert all(r.status in ("reverted", "released") for r in results), results
        assert FileJournal(state).open_changes() == []
        assert _snapshot(fs) == expected, (ops, results)


# -- hostile journals -----------------------------------------------------------------------


def _allowed(fs: FakeKernelFS) -> set[str]:
    """Every file a catalogue primitive saves, for every target this fake host has."""
    host = Host(fs)
    out: set[str] = set()
    for p in catalog.all_primitives():
        for target in (None, "nvme0n1", "vdb", "0-3", "0,1"):
            try:
                out.update(loc.where for loc in p.locations(host, target) if loc.kind in ("file", "select"))
            except (OSError, LookupError, ValueError, AssertionError, TypeError):
                continue
    return out


paths = st.one_of(
    st.sampled_from(
        [*FILES[3:], "/etc/passwd", "/proc/sys/vm/../../../etc/passwd", "/sys/block/vdb/queue/nr_requests"]
    ),
    st.text(alphabet="/.abcdev0_", min_size=1, max_size=40),
)
values = st.one_of(
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True),
    st.text(max_size=30),
    st.sampled_from(["60", "0", "[none]"]),
)
locs = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["file", "select", "trainer", "nvml", "shell"]),
        "where": paths,
        "key": st.text(max_size=8),
    }
)
writes = st.lists(st.fixed_dictionaries({"loc": locs, "value": values}), max_size=3)
changes = st.fixed_dictionaries(
    {
        "primitive": st.one_of(
            st.sampled_from(
                [
                    "vm.swappiness",
                    "vm.dirty_ratio",
                    "block.read_ahead_kb",
                    "block.scheduler",
                    "cpufreq.governor",
                ]
            ),
            st.text(max_size=20),
        ),
        "target": st.one_of(
            st.none(), st.sampled_from(["vdb", "nvme0n1", "../x", "0-3"]), st.integers(-2, 5)
        ),
        "value": values,
        "reason": st.just("crafted"),
        "saved": writes,
        "revert": writes,
        "after": writes,
        "state": st.sampled_from(["writing", "applied"]),
    }
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(changes, min_size=1, max_size=5))
def test_a_hostile_journal_writes_only_catalogue_locations(planted: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        fs = make_root(Path(tmp) / "root")
        decoy = Path(tmp) / "root" / "etc" / "passwd"
        decoy.parent.mkdir(parents=True)
        decoy.write_text("root:x:0:0::/root:/bin/sh\n")
        state = Path(tmp) / "state"
        state.mkdir()
        with open(state / "journal.jsonl", "w") as f:
            for i, c in enumerate(planted, start=1):
                line = {"t": 1.0, "event": "applied", "id": i, "owner": None, "change": {**c, "id": i}}
                f.write(json.dumps(line, default=str) + "\n")
        allowed = _allowed(fs)
        t0 = time.monotonic()
        try:
            j = FileJournal(state, owner=this_process())
            results = rollback_all(Executor(Host(fs), journal=j), j)
        except StateError as e:  # a line the schema refuses: the whole journal is left for a person
            assert "\n" not in str(e) and len(str(e)) < 400
            results = []
        assert time.monotonic() - t0 < 5.0
        assert all(path in allowed for path, _ in fs.writes), (fs.writes, results)
        assert decoy.read_text() == "root:x:0:0::/root:/bin/sh\n"
