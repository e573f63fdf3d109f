"""The daemon: the closed loop as a service, reconfigured while it runs.

One thread does everything that touches the host or the loop: it ticks the loop
(collect, diagnose, propose, gate, apply, judge), then serves requests that arrived
since (a mode change, a reload), then looks at the config file, then refreshes
the API's snapshot. Requests from other threads (HTTP handlers, SIGHUP) are queued
and answered from that thread, so nothing else ever races the loop.

A reload re-reads the config file and the policy files. A bad file changes nothing
(the running config stays, and the log and the audit say why); a good one takes
effect at once without restoring held changes or restarting collectors, except a
held change the new config no longer allows (its primitive switched off, its value
outside the new bounds), whose originals are put back. New `collection:` settings go
to the running duty cycle; the settings in AT_START wait for the next start.
"""

from __future__ import annotations

import json
import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.config.load import ConfigError, Loaded, load_config
from agent.config.model import AT_START, AgentConfig
from agent.loop import ControlLoop, LoopEvent
from agent.proposers.base import Proposer
from agent.proposers.ladder import LadderProposer
from agent.wiring import Feed, build_loop, make_proposers
from guardrails.gate import Mode

Say = Callable[[str], object]
# (primary, rules) for a config: the proposers its `proposer` section names. Raises on a bad policy.
ProposersFor = Callable[[AgentConfig], tuple[Proposer | None, Proposer]]


@dataclass(frozen=True)
class Outcome:
    ok: bool
    message: str


def _quiet(line: str) -> None:
    pass


def _file_id(path: Path | None) -> tuple[int, int, int] | None:
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


class Daemon:
    def __init__(
        self,
        loaded: Loaded,
        loop: ControlLoop,
        feed: Feed,
        proposers_for: ProposersFor,
        *,
        path: Path | None = None,
        after_tick: Callable[[], object] | None = None,
        say: Say = _quiet,
    ) -> None:
        self.loaded = loaded
        self.loop = loop
        self.feed = feed
        self._proposers_for = proposers_for
        # The file a reload reads: the one loaded, or the one named that did not exist yet.
        self.path = path if path is not None else loaded.path
        self.after_tick = after_tick
        self._say = say
        self._file = _file_id(self.path)
        self._requests: queue.Queue[tuple[Callable[[], Outcome], Future[Outcome]]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self.last_reload = Outcome(True, "loaded at start")

    @property
    def mode(self) -> Mode:
        return self.loop.gate.mode

    # -- requests from other threads ------------------------------------------------------

    def submit(self, fn: Callable[[], Outcome], timeout_s: float | None = None) -> Outcome:
        """Run `fn` on the loop's thread (at once when it is not running) and return its outcome."""
        if self._thread is None or not self._thread.is_alive():
            return fn()
        fut: Future[Outcome] = Future()
        self._requests.put((fn, fut))
        wait = timeout_s if timeout_s is not None else 5.0 + 2 * self.loop.config.interval_s
        try:
            return fut.result(timeout=wait)
        except TimeoutError:
            return Outcome(False, f"the loop did not answer within {wait:g} s; it will still act on it")

    def request_reload(self) -> None:
        """From a signal handler: queue a reload without waiting for it."""
        self._requests.put((self.reload, Future()))

    def _serve_requests(self) -> None:
        while True:
            try:
                fn, fut = self._requests.get_nowait()
            except queue.Empty:
                return
            try:
                out = fn()
            except Exception as e:  # a bug in one request must not stop the loop
                out = Outcome(False, f"{type(e).__name__}: {e}")
            if not fut.done():
                fut.set_result(out)

    # -- mode --------------------------------------------------------------------------

    def set_mode(self, mode: Mode, by: str) -> Outcome:
        old = self.mode
        if mode == old:
            return Outcome(True, f"already in {mode} mode")
        gate = self.loop.gate
        gate.config = gate.config.model_copy(update={"mode": mode})
        why = f"mode {old} -> {mode}, by {by}"
        self.loop.audit.write("mode", reason=why)
        self._say(why)
        return Outcome(True, why)

    # -- reload ------------------------------------------------------------------------

    def reload(self) -> Outcome:
        """Re-read the config and policy files; keep the running config if either is wrong."""
        self._file = _file_id(self.path)
        try:
            new = load_config(self.path)
            primary, rules = self._proposers_for(new.config)
        except (ConfigError, ValueError, OSError) as e:
            why = f"config not reloaded, the running one stays: {e}"
            self.loop.audit.write("config", reason=why)
            self._say(why)
            self.last_reload = Outcome(False, why)
            return self.last_reload
        out = self._apply(new, primary, rules)
        self.last_reload = out
        return out

    def _apply(self, new: Loaded, primary: Proposer | None, rules: Proposer) -> Outcome:
        old, cfg = self.loaded.config, new.config
        loop = self.loop
        # A mode set at run time stands until the file itself says something new about it.
        mode = cfg.mode if cfg.mode != old.mode else self.mode
        loop.gate.config = cfg.gate_config(mode=mode)
        lc = cfg.loop_config().model_copy(update={"interval_s": loop.config.interval_s})
        loop.config = lc
        loop.tracker.config = lc.effect
        loop.safe.config = cfg.safe_mode
        loop.proposer = LadderProposer(primary, rules, loop.safe)
        notes: list[str] = []
        for c in list(loop.executor.managed):
            # The gate now holds the new config: what it would refuse may not stay either.
            why = loop.gate.switched_off(c.primitive) or loop.gate.outside_bounds(c.primitive, c.value)
            if why is not None:
                res = loop.restore(c.id, "config", f"config reloaded: {why}; originals restored")
                notes.append(f"restored {c.knob} ({res.status})")
        live = self.feed.live
        if live is not None and cfg.collection != old.collection:
            lvl = live.reconfigure_collection(cfg.collection)
            changed = _changes(old.collection.model_dump(), cfg.collection.model_dump())
            notes.append(f"collection {changed}; level {lvl.level}")
        later = [k for k in AT_START if _get(old, k) != _get(cfg, k)]
        if later:
            notes.append(f"{', '.join(later)} take effect at the next start")
        self.loaded = new
        src = str(new.path) if new.path is not None else "defaults (no file)"
        msg = f"config reloaded from {src}; mode {mode}" + (f"; {'; '.join(notes)}" if notes else "")
        loop.audit.write("config", reason=msg)
        self._say(msg)
        return Outcome(True, msg)

    def reload_collectors(self) -> Outcome:
        """A new build of each eBPF program attached before the old one goes, counts carried over.

        Called from the asking thread, not the loop's: a compile takes seconds, and the sources
        let the loop go on collecting while it runs."""
        live = self.feed.live
        if live is None:
            return Outcome(False, "this daemon watches no live collectors to reload")
        ok, msg = live.reload_collectors()
        self.loop.audit.write("config", reason=f"collectors reloaded: {msg}" if ok else f"collectors: {msg}")
        return Outcome(bool(ok), str(msg))

    # -- running -----------------------------------------------------------------------

    def _after_step(self) -> None:
        self._serve_requests()
        if self.path is not None and _file_id(self.path) != self._file:
            self.reload()
        if self.after_tick is not None:
            self.after_tick()

    def tick(self) -> None:
        """One step of the loop and whatever is due after it (tests drive the daemon this way)."""
        self.loop.step()
        self._after_step()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="idletune-loop", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self.loop.stopping.is_set():
            try:
                self.loop.run(None, after_step=self._after_step)
            except Exception as e:  # a bug in one tick: say so, wait a tick, go on
                self._say(f"loop error, resuming: {type(e).__name__}: {e}")
                self.loop.stopping.wait(self.loop.config.interval_s)

    def stop(self, timeout_s: float = 30.0) -> list[str]:
        """Stop the loop, then restore or keep its changes as configured; lines saying what was done."""
        self.loop.stop()
        if self._thread is not None:
            self._thread.join(timeout=timeout_s)
        self._serve_requests()  # answer whoever still waits
        out = [f"restored: {r.knob}: {r.status}: {r.reason}" for r in self.loop.shutdown()]
        self.feed.close()
        return out


def _get(config: AgentConfig, dotted: str) -> Any:
    v: Any = config
    for part in dotted.split("."):
        v = getattr(v, part)
    return v.model_dump(mode="json") if hasattr(v, "model_dump") else v


def _changes(old: dict[str, Any], new: dict[str, Any]) -> str:
    """`a 1 -> 2, b true -> false`: the keys whose values differ."""
    return ", ".join(
        f"{k} {json.dumps(old.get(k))} -> {json.dumps(v)}" for k, v in new.items() if old.get(k) != v
    )


def config_proposers(config: AgentConfig) -> tuple[Proposer | None, Proposer]:
    """The proposers the config's `proposer` section names; ValueError for a policy file that is wrong."""
    from agent.proposers.policy import PolicyError

    try:
        primary, rules, _ = make_proposers(
            config.proposer.kind,
            config.proposer.policies,
            with_default=config.proposer.default_policy,
            llm_settings=config.llm,
        )
    except PolicyError as e:
        raise ValueError(str(e)) from None
    return primary, rules


def build_daemon(
    loaded: Loaded,
    feed: Feed,
    *,
    path: Path | None = None,
    state: str | Path | None = None,
    proposers_for: ProposersFor = config_proposers,
    after_tick: Callable[[], object] | None = None,
    say: Say = _quiet,
    on_event: Callable[[LoopEvent], None] | None = None,
) -> Daemon:
    """The daemon on `feed` as `loaded` configures it. Raises ValueError for a bad policy file and
    StateError for an unsafe state dir; the caller closes the feed."""
    cfg = loaded.config
    primary, rules = proposers_for(cfg)
    loop = build_loop(
        cfg.loop_config(),
        feed,
        mode=cfg.mode,
        primary=primary,
        rules=rules,
        state=state,
        say=say,
        on_event=on_event,
        gate_config=cfg.gate_config(),
        safe_mode=cfg.safe_mode,
    )
    return Daemon(loaded, loop, feed, proposers_for, path=path, after_tick=after_tick, say=say)
