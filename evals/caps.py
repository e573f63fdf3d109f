"""Which rate a device cap holds flat, on every capped reader the matrix recorded.

A cap on requests per second and a cap on bytes per second look alike from the host while requests
are as large as the readahead window: both hold the read rate flat. The engine tells them apart by
which of the two rates is the flatter (`ON_REQUESTS` in agent/diagnosis/rules_io.py: requests/s at
most that many times as variable as kB/s reads as a cap that may be on requests). This measures
that test again on every recording of a capped reader in the suite, grouped by the window's size
and what the matrix capped, so the constant's provenance is a command rather than a few rounds'
figures: `python -m evals.caps [INCIDENTS_DIR]`. The engine trusts the test only under windows
above `CAP_TEST_KB`: there a cap held on bytes is the device's, and no window is named beside it.

The spread is the engine's own (`spread`: the coefficient of variation of the positive samples),
over the samples from the fault's onset on, for the device the engine takes the data to be read
from (`data_reader`).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent.diagnosis.rules_io import ON_REQUESTS, data_reader, spread
from core.incident import Incident, IncidentError, load_incident
from evals.matrix import by_name, cap_on
from evals.split import condition_of

# Window classes (kB, upper bound inclusive): the engine's small windows, then up to the 1 MiB
# past which its default policy leaves a window alone.
CLASSES: tuple[tuple[str, float], ...] = (
    ("up to 128 kB", 128.0),
    ("129-256 kB", 256.0),
    ("257-512 kB", 512.0),
    ("513-1023 kB", 1023.0),
    ("1 MiB and up", math.inf),
)


@dataclass(frozen=True)
class Reading:
    """One capped reader: the window, what the matrix capped, and how flat each rate held."""

    id: str
    window_kb: float
    cap: str  # "requests" or "bytes"
    requests_cv: float
    bytes_cv: float

    @property
    def on_requests(self) -> bool:
        """The engine's test: requests/s held about as flat as the bytes or flatter."""
        return self.requests_cv <= ON_REQUESTS * self.bytes_cv


def reading(inc: Incident, cap: str) -> Reading | None:
    """The flatness of both rates on the device the data is read from, from the onset on; None when
    either rate is missing or too short."""
    onset = inc.truth.onset_t or 0.0
    samples = [s.m for s in inc.samples if s.t >= onset]
    devices = {
        name[len("io.") : -len(".read_kbps")]
        for s in samples
        for name in s
        if name.startswith("io.") and name.endswith(".read_kbps")
    }
    if not devices:
        return None

    def column(name: str) -> list[float]:
        return [s[name] for s in samples if name in s]

    rates = {d: statistics.fmean(xs) for d in devices if (xs := column(f"io.{d}.read_kbps"))}
    reader = data_reader(rates)
    if reader is None:
        return None
    dev = reader[0]
    window = inc.knobs.get(f"block.read_ahead_kb@{dev}")
    req, byt = spread(column(f"io.{dev}.read_iops")), spread(column(f"io.{dev}.read_kbps"))
    if not isinstance(window, int | float) or req is None or byt is None:
        return None
    return Reading(inc.id, float(window), cap, req[1], byt[1])


def readings(folder: Path) -> list[Reading]:
    """Every capped reader of the matrix among the incidents under `folder`."""
    out: list[Reading] = []
    for path in sorted(p for p in folder.iterdir() if p.is_dir()):
        cond = by_name().get(condition_of(path.name) or "")
        cap = cap_on(cond) if cond is not None else None
        if cap is None:
            continue
        r = reading(load_incident(path), cap)
        if r is not None:
            out.append(r)
    return out


def class_of(window_kb: float) -> str:
    return next(name for name, top in CLASSES if window_kb <= top)


def table(rows: Iterable[Reading]) -> str:
    """Per window class and cap: how many recordings, the share the engine's test reads as a cap
    that may be on requests, and the median ratio of the two spreads."""
    groups: dict[tuple[str, str], list[Reading]] = {}
    for r in rows:
        groups.setdefault((class_of(r.window_kb), r.cap), []).append(r)
    lines = [
        f"| window | cap on | recordings | read as on requests (ratio <= {ON_REQUESTS:g}) | "
        "requests/s the flatter (ratio < 1) | median ratio |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name, _ in CLASSES:
        for cap in ("requests", "bytes"):
            g = groups.get((name, cap), [])
            if not g:
                continue
            ratios = [r.requests_cv / r.bytes_cv if r.bytes_cv > 0 else math.inf for r in g]
            on = sum(r.on_requests for r in g)
            flatter = sum(x < 1.0 for x in ratios)
            n = len(g)
            lines.append(
                f"| {name} | {cap} | {n} | {on / n:.2f} ({on}) | {flatter / n:.2f} ({flatter}) "
                f"| {statistics.median(ratios):.2f} |"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m evals.caps", description=__doc__.splitlines()[0])
    ap.add_argument("folder", nargs="?", default="evals/incidents", help="incidents to read")
    args = ap.parse_args(argv)
    folder = Path(args.folder)
    if not folder.is_dir():
        print(f"evals.caps: {folder}: not a folder", file=sys.stderr)
        return 2
    try:
        rows = readings(folder)
    except IncidentError as e:
        print(f"evals.caps: {e}", file=sys.stderr)
        return 2
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
