"""The fixed split of recorded conditions: those the engine's thresholds were tuned on, and those held out.

Written down before the engine was tuned on the matrix (evals/matrix.py) and never changed to
suit a result: a held-out condition is scored, never looked at while choosing a threshold.
Every family keeps conditions on both sides, and each held-out one differs from its fit
siblings in a setting (device limit, readahead, workers, layout, onset, interval, noise).
Incidents outside the matrix (the generator's suite, the first five recordings) tuned the
engine before the matrix existed: they count as fit.
"""

from __future__ import annotations

import re

HELD_OUT: frozenset[str] = frozenset(
    {
        "ra64-iops100",
        "ra128-iops30",
        "ra64-iops100-raw",
        "ra128-iops200-i2",
        "ra128-iops200-dirty",
        "ra128-bps16",
        "starve-w0-p1",
        "starve-w0-p2-hog",
        "cont-h2",
        "cont-h4-mid",
        "wb-ckpt-mid",
        "recl-192",
        "healthy-ra4096-rootwrites",
        "healthy-w2-memhog",
    }
)

_MATRIX_ID = re.compile(r"^real-(?P<condition>.+)-(?P<repeat>\d+)$")


def condition_of(incident_id: str) -> str | None:
    """The matrix condition an incident was recorded under (`real-<condition>-<n>`), or None."""
    m = _MATRIX_ID.match(incident_id)
    return m.group("condition") if m else None


def split_of(incident_id: str) -> str:
    """`held-out` for an incident of a held-out condition, else `fit`."""
    return "held-out" if condition_of(incident_id) in HELD_OUT else "fit"
