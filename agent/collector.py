"""The live collection loop: start sources, merge their metrics into Samples, keep the interval."""

from __future__ import annotations

import contextlib
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator
from types import FrameType
from typing import Any

from agent.sources.base import Reloadable, Source
from core.sample import Sample, SourceStatus
from core.window import Window

SignalHandler = Callable[[int, FrameType | None], Any] | int | None


def one_line(exc: BaseException) -> str:
    """An exception as one line: its type and the first line of its message."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


class Collector:
    """Polls sources every `interval_s`. Earlier sources win when two give the same
    name, so list the precise ones (eBPF) before the fallbacks (procfs)."""

    def __init__(
        self,
        sources: list[Source],
        interval_s: float = 1.0,
        *,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        if interval_s <= 0:
            raise ValueError("interval must be positive")
        self.sources = list(sources)
        self.interval_s = interval_s
        self._clock = clock
        # Sample times are wall time anchored once, then advanced by the monotonic
        # clock, so a clock step (NTP) cannot make a window run backwards.
        self._anchor = (wall(), clock())
        self._status: dict[str, SourceStatus] = {}
        self._live: list[Source] = []
        self._stop = threading.Event()
        self._ticks = 0
        self._drops: dict[str, int] = {}
        # Called with each sample, after the sources were read (the collection level's duty
        # cycle): every caller of tick() drives it.
        self.after_tick: list[Callable[[Sample], None]] = []

    @property
    def statuses(self) -> dict[str, SourceStatus]:
        return dict(self._status)

    def start(self) -> dict[str, SourceStatus]:
        """Start every source; a source that cannot run is reported, never raised."""
        for src in self.sources:
            try:
                st = src.start()
            except Exception as exc:  # a bug in a source must not stop the others
                st = SourceStatus(live=False, reason=f"start failed: {one_line(exc)}")
            self._status[src.name] = st
            if st.live:
                self._live.append(src)
            else:
                self._close_one(src)
        return self.statuses

    def _close_one(self, src: Source) -> None:
        # Closing is best effort: the source is already out of the run.
        with contextlib.suppress(Exception):
            src.close()

    def now(self) -> float:
        wall0, mono0 = self._anchor
        return wall0 + (self._clock() - mono0)

    def tick(self) -> Sample:
        """Collect once from each live source and merge; failing sources are dropped."""
        merged: dict[str, float] = {}
        cover: dict[str, float] = {}
        for src in list(self._live):
            try:
                metrics = src.collect()
                share = _coverage(src)
            except Exception as exc:
                self._live.remove(src)
                self._status[src.name] = SourceStatus(live=False, reason=f"collect failed: {one_line(exc)}")
                self._close_one(src)
                continue
            for name, value in metrics.items():
                v = float(value)
                # NaN/inf carry no figure and would poison every mean downstream.
                if math.isfinite(v) and name not in merged:
                    merged[name] = v
                    if name in share:
                        cover[name] = share[name]
        self._ticks += 1
        # Merge, so the last figures of a source that failed since are kept.
        self._drops.update(self._read_drops())
        sample = Sample(t=self.now(), m=merged, cover=cover)
        for hook in self.after_tick:
            hook(sample)
        return sample

    def drops(self) -> dict[str, int]:
        """Events lost by sources that count them (eBPF maps that filled up), as of
        the last tick: the counters live in the sources, which run() closes."""
        return dict(self._drops)

    def _read_drops(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for src in self._live:
            fn = getattr(src, "drops", None)
            if not callable(fn):
                continue
            try:
                for key, n in fn().items():
                    out[f"{src.name}.{key}"] = int(n)
            except Exception:  # drop counts are advisory; a closed source may refuse
                continue
        return out

    def reload(self) -> list[tuple[str, bool, str]]:
        """Reload the sources that can be, leaving the others and the interval as they are.

        One (source, ok, line) per source: a source that is not running, or that
        reads afresh each interval, has nothing to reload and is ok.
        """
        out: list[tuple[str, bool, str]] = []
        for src in self.sources:
            if src not in self._live:
                st = self._status.get(src.name)
                why = f"not running ({st.reason})" if st is not None and st.reason else "not running"
                out.append((src.name, True, why))
            elif isinstance(src, Reloadable):
                try:
                    ok, line = src.reload()
                except Exception as exc:  # a bug in one source must not stop the others' reload
                    ok, line = False, f"reload failed: {one_line(exc)}"
                out.append((src.name, ok, line))
            else:
                out.append((src.name, True, "nothing to reload"))
        return out

    def stop(self) -> None:
        """Ask run() to return after the current tick; a stop before run() makes it return at once."""
        self._stop.set()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self._stop.set()

    @contextlib.contextmanager
    def stopping_on_signals(self) -> Iterator[None]:
        """SIGINT/SIGTERM call stop() inside the block; the old handlers come back after.

        Wrap start() in it too when a source is slow to start (eBPF compiles for
        seconds), so an early Ctrl-C is a clean stop rather than a traceback.
        """
        old: dict[signal.Signals, SignalHandler] = {}
        # Python only lets the main thread install handlers.
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                old[sig] = signal.signal(sig, self._on_signal)
        try:
            yield
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)

    def run(
        self,
        duration_s: float,
        on_sample: Callable[[Sample], None] | None = None,
        *,
        close: bool = True,
    ) -> Window:
        """Collect for `duration_s`, or until SIGINT/SIGTERM or stop(), then close every source.

        Call start() first. Rates need a previous reading, so when nothing has been
        collected yet one priming collect is made and its sample discarded. With
        `close=False` the sources stay open (to read knobs or keep ticking after).
        """
        window = Window(horizon_s=max(duration_s + 10 * self.interval_s, 60.0))
        try:
            with self.stopping_on_signals():
                self._loop(duration_s, window, on_sample)
        finally:
            if close:
                self.close()
        return window

    def _loop(self, duration_s: float, window: Window, on_sample: Callable[[Sample], None] | None) -> None:
        if self._stop.is_set():
            return
        if self._ticks == 0:
            self.tick()
        t0 = self._clock()
        k = 1
        while not self._stop.is_set():
            due = t0 + k * self.interval_s
            if due - t0 > duration_s + 1e-9:
                break
            # Sleep to the k-th deadline (not interval after the last tick) so
            # collect time does not accumulate as drift.
            if self._stop.wait(max(0.0, due - self._clock())):
                break
            sample = self.tick()
            window.add(sample)
            if on_sample is not None:
                on_sample(sample)
            k += 1
            # A slow collect that overran deadlines skips them instead of bursting.
            behind = int((self._clock() - t0) / self.interval_s)
            k = max(k, behind + 1)

    def close(self) -> None:
        for src in self.sources:
            self._close_one(src)
        self._live.clear()


def _coverage(src: Source) -> dict[str, float]:
    """The share of the interval a source's figures were measured over, where it was not all of it."""
    fn = getattr(src, "coverage", None)
    return dict(fn()) if callable(fn) else {}


class UnavailableSource:
    """A source that could not even be built (module missing, turned off): it takes
    part in the run only to report, through start(), why it is absent."""

    def __init__(self, name: str, reason: str) -> None:
        self.name = name
        self.reason = reason

    def start(self) -> SourceStatus:
        return SourceStatus(live=False, reason=self.reason)

    def collect(self) -> dict[str, float]:
        return {}

    def close(self) -> None:
        return None
