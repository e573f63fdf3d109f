"""Step timing kept by the training thread and read once a second by the link thread.

A step runs from one request for a batch to the next (the wait for the batch,
then the compute on it), unless the script marks steps itself with `step()`
(gradient accumulation: several batches a step). Samples are counted per batch.

The training thread pays two clock reads and two uncontended lock round trips
per batch. A wait or an epoch still in progress when the link thread reads is
split at that moment, so a loader stalled for a minute shows as data wait while
it stalls, not after.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from time import perf_counter


@dataclass
class Interval:
    """What happened since the previous snapshot."""

    interval_s: float
    steps: int
    step_s: float
    wait_s: float
    active_s: float
    samples: int | None


class Counters:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._snap_at = perf_counter()
        self._reset()
        self._waiting = False
        self._wait_mark = 0.0
        self._in_epoch = False
        self._active_mark = 0.0
        self._step_open = False
        self._step_mark = 0.0
        self.batch_size: int | None = None

    def _reset(self) -> None:
        self._steps = 0
        self._step_s = 0.0
        self._wait_s = 0.0
        self._active_s = 0.0
        self._samples = 0
        self._samples_known = True

    def epoch_start(self, now: float) -> None:
        with self._lock:
            self._in_epoch = True
            self._active_mark = now
            # Time between epochs (evaluation, checkpoints) is no step of this loader.
            self._step_mark = now
            self._step_open = False

    def epoch_end(self, now: float) -> None:
        with self._lock:
            if self._in_epoch:
                self._active_s += now - self._active_mark
            self._in_epoch = False
            self._waiting = False
            self._step_open = False

    def request(self, now: float, *, auto_steps: bool) -> None:
        """The loop asks for the next batch; in automatic mode this ends the step before."""
        with self._lock:
            if auto_steps:
                if self._step_open:
                    self._close_step(now)
                self._step_mark = now
                self._step_open = True
            self._wait_mark = now
            self._waiting = True

    def arrived(self, now: float, *, batch: bool) -> None:
        """The request returned: a batch, or the end of the epoch."""
        with self._lock:
            if self._waiting:
                self._wait_s += now - self._wait_mark
                self._waiting = False
            if batch:
                if self.batch_size is None:
                    self._samples_known = False
                else:
                    self._samples += self.batch_size

    def step(self, now: float) -> None:
        with self._lock:
            self._close_step(now)
            self._step_mark = now

    def _close_step(self, now: float) -> None:
        self._steps += 1
        self._step_s += now - self._step_mark

    def snapshot(self, now: float | None = None) -> Interval:
        with self._lock:
            t = perf_counter() if now is None else now
            if self._waiting:
                self._wait_s += t - self._wait_mark
                self._wait_mark = t
            if self._in_epoch:
                self._active_s += t - self._active_mark
                self._active_mark = t
            out = Interval(
                interval_s=t - self._snap_at,
                steps=self._steps,
                step_s=self._step_s,
                wait_s=self._wait_s,
                active_s=self._active_s,
                samples=self._samples if self._samples_known else None,
            )
            self._snap_at = t
            self._reset()
        return out
