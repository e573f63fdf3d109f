"""A rolling buffer of Samples: the window every later stage reads."""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable, Iterator

from core.sample import Sample


class Window:
    """Samples in time order, keeping at most `horizon_s` seconds of history."""

    def __init__(self, horizon_s: float = 600.0, samples: Iterable[Sample] = ()) -> None:
        if horizon_s <= 0:
            raise ValueError("window horizon must be positive")
        self.horizon_s = horizon_s
        self._buf: deque[Sample] = deque()
        for s in samples:
            self.add(s)

    def add(self, sample: Sample) -> None:
        if self._buf and sample.t < self._buf[-1].t:
            raise ValueError(f"sample at t={sample.t} is older than the last one (t={self._buf[-1].t})")
        self._buf.append(sample)
        cutoff = sample.t - self.horizon_s
        while self._buf and self._buf[0].t < cutoff:
            self._buf.popleft()

    def copy(self) -> Window:
        """The same samples, apart from this window's later additions (no re-checking)."""
        out = Window(self.horizon_s)
        out._buf = self._buf.copy()
        return out

    def __len__(self) -> int:
        return len(self._buf)

    def __iter__(self) -> Iterator[Sample]:
        return iter(self._buf)

    @property
    def samples(self) -> list[Sample]:
        return list(self._buf)

    @property
    def start(self) -> float | None:
        return self._buf[0].t if self._buf else None

    @property
    def end(self) -> float | None:
        return self._buf[-1].t if self._buf else None

    def names(self) -> set[str]:
        out: set[str] = set()
        for s in self._buf:
            out.update(s.m)
        return out

    def series(self, name: str) -> list[tuple[float, float]]:
        """(t, value) for every sample that measured `name`."""
        return [(s.t, s.m[name]) for s in self._buf if name in s.m]

    def interval_s(self) -> float | None:
        """Median spacing of samples, or None with fewer than two."""
        if len(self._buf) < 2:
            return None
        ts = [s.t for s in self._buf]
        gaps = sorted(b - a for a, b in itertools.pairwise(ts))
        return gaps[len(gaps) // 2]
