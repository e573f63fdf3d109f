"""When the hot-path collectors measured: spans of monotonic time, and their share of each interval.

A span opens at any moment (a trigger, a person asking, the duty cycle) and ends
at a collect, which shuts the programs' gates before it reads their maps. So each
interval between two collects holds at most the tail of one span and the start of
the next, and what the maps held at a collect was counted inside the spans.
"""

from __future__ import annotations


class Spans:
    """The spans of the hot path, in monotonic ns; the last one may still be open."""

    def __init__(self) -> None:
        self._spans: list[tuple[int, int | None]] = []
        # The open_ns written to the programs' gates for the current (or last) span; 0 while
        # the programs measure from their load, as they do until a duty cycle first shuts them.
        self.gate_open = 0

    @property
    def is_open(self) -> bool:
        return bool(self._spans) and self._spans[-1][1] is None

    def loaded(self, t_ns: int) -> None:
        """The programs were loaded and attached with an all-zero gate: measuring since `t_ns`."""
        self._spans = [(t_ns, None)]
        self.gate_open = 0

    def open(self, t_ns: int) -> None:
        if self.is_open:
            raise ValueError("a span is already open")
        self._spans.append((t_ns, None))
        self.gate_open = t_ns

    def shut(self, t_ns: int) -> None:
        if not self.is_open:
            raise ValueError("no span is open")
        start, _ = self._spans[-1]
        self._spans[-1] = (start, max(t_ns, start))

    def measured_ns(self, since_ns: int, now_ns: int) -> int:
        """How long the spans covered of (since_ns, now_ns]; those ended by `now_ns` are then dropped
        (the next interval begins there)."""
        total = 0
        for start, end in self._spans:
            stop = now_ns if end is None else min(end, now_ns)
            total += max(0, stop - max(start, since_ns))
        self._spans = [(s, e) for s, e in self._spans if e is None or e > now_ns]
        return total
