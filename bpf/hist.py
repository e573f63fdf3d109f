"""Log2 histograms as the collectors produce them: slot k counts values in [2^k, 2^(k+1)).

The kernel folds a value of 0 into slot 0. Histograms are plain mappings of
slot to count so that kernel maps, bpftrace output and test data share one form.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

Log2Hist = dict[int, int]

MAX_SLOT = 63


def slot_of(value: float) -> int:
    """The slot that holds `value` (values below 1 fall in slot 0, as in the kernel)."""
    if value < 1:
        return 0
    return min(math.floor(math.log2(value)), MAX_SLOT)


def bucket_bounds(slot: int) -> tuple[float, float]:
    """[low, high) of a slot."""
    if slot < 0:
        raise ValueError(f"negative slot {slot}")
    return float(1 << slot), float(1 << (slot + 1))


def merge(hists: Iterable[Mapping[int, int]]) -> Log2Hist:
    """The histogram of all events of all `hists` (counts add slot by slot)."""
    out: Log2Hist = {}
    for h in hists:
        for slot, n in h.items():
            if n:
                out[slot] = out.get(slot, 0) + n
    return out


def total(hist: Mapping[int, int]) -> int:
    return sum(hist.values())


def percentile(hist: Mapping[int, int], q: float) -> float | None:
    """The q-quantile (0 <= q <= 1) of the events, None for an empty histogram.

    The event of rank ceil(q*N) (1-based, at least 1) is located, and with the
    bucket's c events assumed spread evenly, the i-th of them is placed at
    low + (i - 0.5)/c * (high - low): the result stays strictly inside the
    bucket that holds that event and never decreases as q grows.
    """
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile {q} outside [0, 1]")
    n = total(hist)
    if n <= 0:
        return None
    rank = min(max(math.ceil(q * n), 1), n)
    seen = 0
    for slot in sorted(s for s, c in hist.items() if c > 0):
        c = hist[slot]
        if seen + c >= rank:
            low, high = bucket_bounds(slot)
            return low + (rank - seen - 0.5) / c * (high - low)
        seen += c
    raise AssertionError("unreachable: rank is at most the total")
