"""Temporal correlation: does an anomaly start just before or during the lost work?

A cause precedes its effect: dirty pages pile up before the flush stalls reads, a
noisy neighbour starts before the loaders starve. An anomaly that begins well after
the GPUs started losing work is more likely a consequence, and one that never
overlaps lost work is not blamed at all (it is simply never measured inside a span).
"""

from __future__ import annotations

from agent.diagnosis.baseline import Frame
from agent.diagnosis.lostwork import Span


def onset(
    frame: Frame, name: str, span: Span, threshold: float, *, rising: bool = True, lead: int = 0
) -> float | None:
    """Time the metric first crossed `threshold` and mostly stayed there, searching from `lead`
    samples before the span to its end; None when it never did."""
    col = frame.column(name)
    if col is None:
        return None
    lo = max(0, span.i0 - lead)
    hits = [(v >= threshold if rising else v <= threshold) if v == v else False for v in col[lo : span.i1]]
    # "Mostly stayed": at least half of the next three samples also cross, so one noisy
    # sample does not date the onset.
    for k, hit in enumerate(hits):
        if hit and sum(hits[k : k + 3]) >= min(2, len(hits) - k):
            return frame.ts[lo + k]
    return None


def timing_weight(t_onset: float | None, span: Span, interval_s: float) -> float:
    """1 for an anomaly that starts before or at the span's start, less for one that starts late."""
    if t_onset is None:
        return 1.0
    duration = max(span.t_end - span.t_start, interval_s)
    late = t_onset - span.t_start
    grace = max(0.25 * duration, 2 * interval_s)
    if late <= grace:
        return 1.0
    # Starting in the second half of the span: probably a consequence of the lost work.
    return max(0.6, 1.0 - 0.4 * (late - grace) / duration)
