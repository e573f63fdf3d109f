"""Draw a held-out round of the real-incident matrix: `python -m evals.draw N` prints round N's
conditions as `evals/matrix.py` entries, then its set for `evals/split.py`.

A round holds one condition per family: two readers under an IOPS cap, one under a byte cap, a
starved loader, contention, reclaim, a checkpoint writer and a healthy uncapped reader, each
beside one kind of background noise, from the start or mid-window, at a 1 s or 2 s interval. The
draw is `random.Random(N * 1001)` over the ranges below, so anyone can check that a round was drawn,
not picked; a condition whose settings were written down before round N (`evals/matrix.py`) is
drawn again. A family whose every setting is written down (the starved loader's 96, by round 104)
draws from its wider ranges instead (WIDER), which no earlier round reached, so every round drawn
before draws alike; where those are used up too, the command says so in one line.
Earlier rounds were drawn by a script kept outside the repository, over the families and ranges
their conditions show; from round 59 on, by this module.
"""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from evals import split
from evals.matrix import CONDITIONS, Condition

WINDOWS_KB = range(32, 513, 8)  # readahead windows of the readers and the checkpoint's reader
IOPS = range(30, 301, 5)
BPS_MIB = range(16, 61)
HEADROOM_MB = range(160, 257, 4)  # a memory cgroup this far above the job's own use
HOGS = range(2, 7)
NOISE = {"rootwrites": "rootwrites", "dirty": "dirty", "memhog": "memhog", "hog": "hog-elsewhere"}


@dataclass
class Drawn:
    name: str
    scenario: str
    tags: list[str]
    fault: dict[str, int] = field(default_factory=dict)
    fix: dict[str, int] = field(default_factory=dict)
    setup: list[str] = field(default_factory=list)  # rendered `key: value` pairs, in order
    onset: str = "start"
    interval_s: float = 1.0

    def key(self) -> tuple[tuple[str, ...], str, float]:
        return settings(self)

    def source(self) -> str:
        lines = [
            "    _c(",
            f'        "{self.name}",',
            f'        "{self.scenario}",',
            f'        "{" ".join(self.tags)}",',
        ]
        for label, d in (("fault", self.fault), ("fix", self.fix)):
            if d:
                lines.append(
                    f"        {label}={{{', '.join(f'{k!r}: {x}' for k, x in d.items())}}},".replace("'", '"')
                )
        if self.setup:
            lines.append(f"        setup={{{', '.join(self.setup)}}},")
        if self.onset != "start":
            lines.append(f'        onset="{self.onset}",')
        if self.interval_s != 1.0:
            lines.append(f"        interval_s={self.interval_s},")
        lines.append("    ),")
        return "\n".join(lines)


def settings(c: Condition | Drawn) -> tuple[tuple[str, ...], str, float]:
    """What a condition sets, whatever its name: its tags (limits, window, layout, workers, noise),
    onset and interval."""
    return tuple(sorted(c.tags)), c.onset, c.interval_s


def _with_workers(workers: int) -> dict[str, int]:
    """The loader workers a phase sets: none where they are the scenario's own two."""
    return {"workers": workers} if workers != 2 else {}


def _noise(rng: random.Random, d: Drawn) -> str:
    """One kind of background noise, added to the condition's tags and setup; its short name."""
    noise = rng.choice(sorted(NOISE))
    while noise == "dirty" and "raw" in d.tags:  # dirty pages need a file system to be left in
        noise = rng.choice(sorted(NOISE))
    d.tags.append(f"noise-{NOISE[noise]}")
    d.setup.append(f'"noise": ("{NOISE[noise]}",)')
    return noise


def _common(rng: random.Random, d: Drawn, parts: list[str]) -> Drawn:
    """Noise, onset and interval, drawn alike for every family but the healthy reader (which starts
    healthy: no onset); the name gains their parts."""
    parts.append(_noise(rng, d))
    d.onset = rng.choice(("start", "mid"))
    d.interval_s = rng.choice((1.0, 2.0))
    parts += ["mid"] * (d.onset == "mid") + ["i2"] * (d.interval_s == 2.0)
    d.name = "-".join(parts)
    return d


def _reader(rng: random.Random, cap: str) -> Drawn:
    ra, raw, workers = rng.choice(WINDOWS_KB), rng.random() < 0.5, rng.choice((1, 2, 3))
    if cap == "iops":
        limit = rng.choice(IOPS)
        parts, tag = [f"ra{ra}-iops{limit}"], f"iops-{limit}"
        setup = [f'"read_iops": {limit}']
    else:
        limit = rng.choice(BPS_MIB)
        parts, tag = [f"ra{ra}-bps{limit}"], f"bps-{limit}m"
        setup = ['"read_iops": None', f'"read_bps": {limit} * 1024 * 1024']
    d = Drawn("", "readahead", [tag, f"ra-{ra}", "raw" if raw else "fs", f"workers-{workers}"])
    d.setup = ['"raw": True'] * raw + setup
    parts += ["raw"] * raw + [f"w{workers}"] * (workers != 2)
    d.fault = {"read_ahead_kb": ra} | _with_workers(workers)
    d.fix = _with_workers(workers)
    return _common(rng, d, parts)


def _starved(rng: random.Random, preprocess: tuple[int, ...] = (2, 3, 4)) -> Drawn:
    workers, prep = rng.choice((0, 1)), rng.choice(preprocess)
    d = Drawn("", "starvation", [f"workers-{workers}", f"preprocess-{prep}"])
    d.fault = {"workers": workers} if workers else {}
    d.setup = [f'"preprocess": {prep}']
    return _common(rng, d, [f"starve-w{workers}-p{prep}"])


def _contention(rng: random.Random) -> Drawn:
    hogs, workers = rng.choice(HOGS), rng.choice((1, 2, 3))
    d = Drawn("", "contention", [f"hogs-{hogs}", f"workers-{workers}", "preprocess-2"])
    d.fault = {"hogs": hogs} | _with_workers(workers)
    d.fix = {"hogs": hogs}
    return _common(rng, d, [f"cont-h{hogs}-w{workers}"])


def _reclaim(rng: random.Random) -> Drawn:
    mb = rng.choice(HEADROOM_MB)
    d = Drawn("", "reclaim", [f"memcg-headroom-{mb}"], fault={"mem_headroom_mb": mb})
    return _common(rng, d, [f"recl-{mb}"])


def _checkpoint(rng: random.Random) -> Drawn:
    ra, workers = rng.choice(WINDOWS_KB), rng.choice((1, 2, 3))
    d = Drawn("", "writeback", ["writer", "fs", f"ra-{ra}", f"workers-{workers}"])
    d.fault = {"read_ahead_kb": ra} | _with_workers(workers)
    d.fix = dict(d.fault)
    return _common(rng, d, [f"wb-ckpt-ra{ra}"] + [f"w{workers}"] * (workers != 2))


def _healthy(rng: random.Random) -> Drawn:
    ra, workers = rng.choice(WINDOWS_KB), rng.choice((1, 2, 3))
    d = Drawn("", "readahead", ["healthy", "uncapped", f"ra-{ra}", "fs", f"workers-{workers}"])
    d.fault = {"read_ahead_kb": ra} | _with_workers(workers)
    d.fix = {"read_ahead_kb": 4096} | _with_workers(workers)
    d.setup = ['"read_iops": None']
    noise = _noise(rng, d)
    d.interval_s = rng.choice((1.0, 2.0))
    d.name = f"healthy-ra{ra}-uncapped-{noise}-w{workers}" + "-i2" * (d.interval_s == 2.0)
    return d


FAMILIES: tuple[Callable[[random.Random], Drawn], ...] = (
    lambda r: _reader(r, "iops"),
    lambda r: _reader(r, "iops"),
    lambda r: _reader(r, "bps"),
    _starved,
    _contention,
    _reclaim,
    _checkpoint,
    _healthy,
)
# A family's wider ranges, drawn from once its own are used up: the starved loader at heavier
# preprocessing (x5-x6 matrix passes per sample, where one or no loader worker starves the trainer
# the more).
WIDER: dict[Callable[[random.Random], Drawn], Callable[[random.Random], Drawn]] = {
    _starved: lambda r: _starved(r, (5, 6))
}
# Draws of one family before its ranges count as used up: a family with one setting left of a
# hundred finds it within this many tries but once in about e^50.
ATTEMPTS = 5000


class DrawError(Exception):
    """A round cannot be drawn: a family's settings, its wider ones too, are all written down."""


def written_down() -> dict[int, frozenset[str]]:
    """Each round's conditions by its number (evals/split.py: HELD_OUT is round 1, HELD_OUT_k round k)."""
    out = {1: split.HELD_OUT}
    for name, value in vars(split).items():
        m = re.fullmatch(r"HELD_OUT_(\d+)", name)
        if m:
            out[int(m.group(1))] = value
    return out


def _recorded(n: int) -> set[Any]:
    """What was written down before round n: the matrix less the conditions of round n and later."""
    later = set().union(*(names for k, names in written_down().items() if k >= n))
    before = [c for c in CONDITIONS if c.name not in later]
    return {settings(c) for c in before} | {c.name for c in before}


def draw(n: int) -> list[Drawn]:
    """Round n's conditions, one per family, none written down before it (so a round written down
    draws alike once it is in the matrix)."""
    rng = random.Random(n * 1001)
    seen, out = _recorded(n), []
    for k, family in enumerate(FAMILIES):
        d = _new(rng, family, seen)
        wider = WIDER.get(family)
        if d is None and wider is not None:
            d = _new(rng, wider, seen)
        if d is None:
            raise DrawError(f"round {n}: every setting of family {k + 1} of {len(FAMILIES)} is written down")
        seen |= {d.key(), d.name}
        out.append(d)
    return out


def _new(rng: random.Random, family: Callable[[random.Random], Drawn], seen: set[Any]) -> Drawn | None:
    """The family's first draw not written down, or None after ATTEMPTS draws."""
    for _ in range(ATTEMPTS):
        d = family(rng)
        if d.key() not in seen and d.name not in seen:
            return d
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not argv[0].isdigit():
        print("usage: python -m evals.draw N (the round's number)", file=sys.stderr)
        return 2
    try:
        drawn = draw(int(argv[0]))
    except DrawError as e:
        print(f"evals.draw: {e}", file=sys.stderr)
        return 2
    print("\n".join(d.source() for d in drawn))
    print()
    print("\n".join(f'        "{d.name}",' for d in drawn))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
