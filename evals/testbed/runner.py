"""Run testbed scenarios: set up, start the job in a phase, measure its KPI, tear down.

    run_scenario("readahead", phase="fault", seconds=8) -> KPI
    measure("readahead", seconds=8) -> (fault KPI, fix KPI)
    stop() -> problems undoing (empty when clean)

Every change goes through the undo log first (evals.testbed.state), so `stop()`
from any process restores the host. One run holds the testbed at a time (a lock beside the
undo log): a second run, or a `stop()`, while it is held is refused rather than tearing down
a setup still in use. Needs root, torch and a free loop device.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from core.statedir import LockHeld, pid_lock, secure_dir, state_dir
from evals.testbed import hostsetup as hs
from evals.testbed.scenarios import NOISES, PHASES, SCENARIOS, Phase, PhaseName, Scenario
from evals.testbed.state import UndoLog, state_file

JOB = "testbed"
START_TIMEOUT_S = 60.0  # torch import and worker start-up on a busy 2-core host
CPU_SHARES = 16384  # 16 times a default task group's weight
LOCK_NAME = "testbed.lock"


class TestbedError(Exception):
    """A scenario that cannot run here; the message is one line saying what to do."""


@dataclass(frozen=True)
class KPI:
    samples_per_s: float
    data_wait_frac: float  # of the trainer's active time
    seconds: float
    steps: int
    wait_per_step_s: float  # seconds waited for data in each step

    def line(self) -> str:
        return (
            f"{self.samples_per_s:8.1f} samples/s  data wait {100 * self.data_wait_frac:5.1f}%"
            f"  ({self.steps} steps in {self.seconds:.1f} s)"
        )


def movement(fault: KPI, fix: KPI) -> float:
    """Relative change of throughput from fault to fix (0.2 = 20% more samples/s)."""
    return (fix.samples_per_s - fault.samples_per_s) / max(fault.samples_per_s, 1e-9)


def scenario(name: str) -> Scenario:
    try:
        return SCENARIOS[name]
    except KeyError:
        raise TestbedError(f"no scenario {name!r}; choose one of: {', '.join(SCENARIOS)}") from None


class Testbed:
    """One scenario's host state: data device, cgroups, and the processes of the current phase."""

    def __init__(self, sc: Scenario, log: UndoLog, workdir: Path) -> None:
        self.sc = sc
        self.log = log
        self.workdir = workdir
        self.dev = ""
        self.data: list[Path] = []
        self.mnt = workdir
        self.cgroups: dict[str, Path] = {}
        self.procs: list[subprocess.Popen[bytes]] = []
        self.noise: list[subprocess.Popen[bytes]] = []
        self.trainer: subprocess.Popen[bytes] | None = None
        self.status = workdir / "status.json"
        self.keep = False  # leave the setup in place when the session ends (`testbed stop` undoes it)

    # -- setup -------------------------------------------------------------------------

    def setup(self, *, throttle: bool = True) -> None:
        """Data device, shards and cgroups; the device throttle too, unless a run switches it on later."""
        sc = self.sc
        self.log.note(scenario=sc.name, started=time.time())
        if not self.workdir.exists():
            self.log.add("dir", path=str(self.workdir))
            self.workdir.mkdir(parents=True)
        for leftover in (self.status, self.workdir / "trainer.log"):
            self.log.add("file", path=str(leftover))
        self.dev, self.mnt = hs.make_data_device(self.log, self.workdir, sc.image_mb, raw=sc.raw)
        self.log.note(device=self.dev, mount=str(self.mnt))
        if sc.raw:
            hs.write_raw(self.dev, sc.data_mb)
            self.data = [Path(self.dev)]
        else:
            self.data = hs.write_shards(self.mnt / "data", sc.data_mb // sc.shard_mb, sc.shard_mb)
        cpu = hs.make_cgroup(self.log, "cpu", "job")
        # The host is shared: a heavy weight keeps other work's noise out of the figures.
        # Everything a scenario starts (job, hogs, writer) runs in this one group.
        for group in (cpu.parent, cpu):  # the weight counts at every level
            (group / "cpu.shares").write_text(str(CPU_SHARES))
        self.cgroups["cpu"] = cpu
        self.cgroups["blkio"] = hs.make_cgroup(self.log, "blkio", "job")
        if throttle:
            self.throttle()
        if any(p.mem_headroom_mb is not None for p in (sc.fault, sc.fix)):
            self.cgroups["memory"] = hs.make_cgroup(self.log, "memory", "job")

    def throttle(self) -> None:
        """The scenario's limits on the job's reads from the data device (the cgroup goes at teardown)."""
        blkio, devno = self.cgroups["blkio"], hs.dev_numbers(self.dev)
        if self.sc.read_iops is not None:
            (blkio / "blkio.throttle.read_iops_device").write_text(f"{devno} {self.sc.read_iops}")
        if self.sc.read_bps is not None:
            (blkio / "blkio.throttle.read_bps_device").write_text(f"{devno} {self.sc.read_bps}")

    def switch(self, phase: Phase) -> None:
        """Bring a running job's surroundings to `phase` without restarting it: knobs, the hogs, the
        writer, the memory limit (loader workers need a restart and stay as they are)."""
        self._knobs(phase)
        self._load(phase)
        if phase.mem_headroom_mb is not None and "memory" in self.cgroups:
            self._limit_memory(phase.mem_headroom_mb)

    def _knobs(self, phase: Phase) -> None:
        self.log.knob(hs.queue_knob(self.dev, "read_ahead_kb"), str(phase.read_ahead_kb))
        if phase.scheduler is not None:
            self.log.knob(hs.queue_knob(self.dev, "scheduler"), phase.scheduler)
        for key, value in phase.sysctls.items():
            self.log.knob(hs.sysctl_path(key), value)

    def _load(self, phase: Phase) -> None:
        """The hogs and the checkpoint writer beside the job, in its CPU group."""
        if phase.hogs:
            # One session for all hogs: with autogroup on they share the CPU as one group.
            argv = hs.python_argv("evals.testbed.load", "hogs", str(phase.hogs))
            self.procs.append(hs.spawn(self.log, argv, cgroups=[self.cgroups["cpu"]]))
        if phase.writer:
            argv = hs.python_argv("evals.testbed.load", "writer", str(self.mnt / "ckpt"))
            self.procs.append(hs.spawn(self.log, argv, cgroups=[self.cgroups["cpu"]]))

    def apply(self, phase: Phase) -> None:
        """Knobs first, then the page cache dropped, then the load beside the job."""
        self._knobs(phase)
        mem = self.cgroups.get("memory")
        if mem is not None:
            (mem / "memory.limit_in_bytes").write_text("-1")
        if self.sc.cold:
            hs.drop_cache(self.data)
        else:
            # CPU-bound scenarios: a cold first epoch would make them I/O-bound instead.
            hs.warm_cache(self.data)
        if phase.warm and mem is not None:
            # Read in the job's memory group but outside its I/O throttle: the cache the
            # job would have built over its first epoch, without waiting for it.
            warm = hs.spawn(self.log, ["cat", *map(str, self.data)], cgroups=[mem])
            warm.wait(timeout=120)
            self.log.forget_process(warm.pid)
        self._load(phase)

    def start_noise(self) -> None:
        """The scenario's background noise, outside the job's groups, running until teardown."""
        argvs = {
            "dirty": ("dirtier", str(self.mnt / "staged.bin"), "600"),
            "rootwrites": ("rootwriter", str(self.workdir / "rootwrites.bin")),
            "hog-elsewhere": ("hogs", "1"),
            "memhog": ("memhog", "4096"),
        }
        for kind in self.sc.noise:
            if kind == "dirty" and self.sc.raw:
                raise TestbedError("dirty noise needs a file system on the data device")
            args = argvs.get(kind)
            if args is None:
                raise TestbedError(f"no noise {kind!r}; choose from {', '.join(NOISES)}")
            if kind in ("dirty", "rootwrites"):
                self.log.add("file", path=args[1])
            self.noise.append(hs.spawn(self.log, hs.python_argv("evals.testbed.load", *args)))

    def start_trainer(self, phase: Phase, lifetime_s: float | None = None) -> None:
        sc = self.sc
        with contextlib.suppress(FileNotFoundError):
            self.status.unlink()
        data = (
            ["--data", self.dev, "--raw-shards", str(sc.data_mb // sc.shard_mb)]
            if sc.raw
            else ["--data", str(self.mnt / "data")]
        )
        args = [
            *data,
            "--shard-mb", str(sc.shard_mb),
            "--status", str(self.status),
            "--job", JOB,
            "--workers", str(phase.workers),
            "--preprocess", str(sc.preprocess),
        ]  # fmt: skip
        if sc.drop_behind:
            args.append("--drop-behind")
        groups = list(self.cgroups.values())
        self.trainer = hs.spawn(
            self.log,
            ["env", "PYTHONWARNINGS=ignore", *hs.python_argv("evals.testbed.trainer", *args)],
            cgroups=groups,
            lifetime_s=lifetime_s,
            log_file=self.workdir / "trainer.log",
        )
        self.log.note(trainer_pid=self.trainer.pid, phase_workers=phase.workers)
        self._wait_first_steps()
        if phase.mem_headroom_mb is not None and "memory" in self.cgroups:
            self._limit_memory(phase.mem_headroom_mb)

    def _wait_first_steps(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            st = self.read_status()
            if st is not None and st["steps"] >= 2:
                return
            if self.trainer is not None and self.trainer.poll() is not None:
                tail = (self.workdir / "trainer.log").read_text()[-400:]
                raise TestbedError(f"the trainer exited ({self.trainer.returncode}): {tail.strip()}")
            time.sleep(0.2)
        raise TestbedError(f"the trainer made no step within {START_TIMEOUT_S:.0f} s")

    def _limit_memory(self, headroom_mb: int) -> None:
        """Limit to what the job holds itself (not page cache) plus headroom, known only once it runs."""
        mem = self.cgroups["memory"]
        stat = dict(line.split() for line in (mem / "memory.stat").read_text().splitlines())
        own = int(stat["total_rss"]) + int(stat.get("total_shmem", "0"))
        limit = own + headroom_mb * 1024 * 1024
        (mem / "memory.limit_in_bytes").write_text(str(limit))
        self.log.note(memory_limit=limit)

    # -- measuring ---------------------------------------------------------------------

    def read_status(self) -> dict[str, float] | None:
        try:
            data: dict[str, float] = json.loads(self.status.read_text())
        except (OSError, ValueError):
            return None
        return data

    def kpi(self, seconds: float) -> KPI:
        """The KPI over at least `seconds`, and never less than the scenario's own window:
        a shorter one than a cycle of its fault measures where in the cycle it fell."""
        time.sleep(self.sc.settle_s)
        a = self.read_status()
        time.sleep(max(seconds, self.sc.min_window_s))
        b = self.read_status()
        if a is None or b is None or b["t"] <= a["t"]:
            raise TestbedError("the trainer stopped writing its status")
        dt = b["t"] - a["t"]
        active = b["active_s"] - a["active_s"]
        wait = b["wait_s"] - a["wait_s"]
        steps = int(b["steps"] - a["steps"])
        return KPI(
            samples_per_s=(b["samples"] - a["samples"]) / dt,
            data_wait_frac=wait / active if active > 0 else 0.0,
            seconds=dt,
            steps=steps,
            wait_per_step_s=wait / steps if steps > 0 else 0.0,
        )

    def stop_phase(self) -> None:
        for proc in [*self.procs, *([self.trainer] if self.trainer else [])]:
            hs.stop_process(self.log, proc)
        self.procs.clear()
        self.trainer = None

    def stop_noise(self) -> None:
        for proc in self.noise:
            hs.stop_process(self.log, proc)
        self.noise.clear()


# -- the API -------------------------------------------------------------------------


def _require_root() -> None:
    if os.geteuid() != 0:
        raise TestbedError("the testbed changes loop devices, cgroups and kernel knobs: run it as root")


def _open_log(explicit_dir: str | None) -> UndoLog:
    path = state_file(explicit_dir)
    if path.exists():
        raise TestbedError(f"a testbed scenario is still set up ({path}): run `idletune testbed stop` first")
    return UndoLog(path)


@contextlib.contextmanager
def _teardown_on_signals() -> Iterator[None]:
    """SIGTERM ends a run like Ctrl-C does, so the finally clauses undo the setup."""

    def raise_interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGTERM, raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _workdir(explicit_dir: str | None) -> Path:
    return Path(state_dir(explicit_dir)) / "testbed"


@contextlib.contextmanager
def _held(explicit_dir: str | None) -> Iterator[None]:
    """The testbed, held by this process while the block runs; TestbedError, changing nothing, while
    another process holds it. The kernel drops the lock when its holder exits, by a crash too, so a
    dead run's setup can always be undone and a live one's never is."""
    path = state_file(explicit_dir).with_name(LOCK_NAME)
    secure_dir(path.parent)
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(pid_lock(path))
        except LockHeld as e:
            raise TestbedError(
                f"another testbed run (pid {e.holder}) is using the testbed: wait for it, or stop that "
                "process (its teardown undoes its setup)"
            ) from None
        yield


@contextlib.contextmanager
def session(sc: Scenario, state: str | None = None) -> Iterator[Testbed]:
    """A testbed for `sc` (not yet set up) whose setup is undone when the block ends, by an error,
    Ctrl-C or SIGTERM too, unless the block set `keep`. Refused without root, while another run
    holds the testbed, or while another scenario is still set up."""
    _require_root()
    with _held(state):
        log = _open_log(state)
        bed = Testbed(sc, log, _workdir(state))
        try:
            with _teardown_on_signals():
                yield bed
        finally:
            if not bed.keep:
                bed.stop_phase()
                bed.stop_noise()
                _undo(log)


def run_scenario(
    name: str,
    phase: PhaseName = "fault",
    seconds: float = 8.0,
    *,
    keep: bool = False,
    lifetime_s: float = 900.0,
    state: str | None = None,
) -> KPI:
    """Set up `name`, run its job in `phase`, measure for `seconds`.

    With keep=True the scenario stays up (job, load, knobs) for the agent to watch
    until `stop()`; the job ends by itself after `lifetime_s` in any case.
    """
    sc = scenario(name)
    with session(sc, state) as tb:
        tb.setup()
        p = sc.phase(phase)
        tb.apply(p)
        tb.start_trainer(p, lifetime_s=lifetime_s if keep else None)
        tb.log.note(phase=phase)
        result = tb.kpi(seconds)
        tb.keep = keep
        return result


def measure(name: str, seconds: float = 8.0, *, state: str | None = None) -> tuple[KPI, KPI]:
    """The scenario's KPI in its fault phase, then in its fix phase, on one setup."""
    sc = scenario(name)
    out: list[KPI] = []
    with session(sc, state) as tb:
        tb.setup()
        for ph in PHASES:
            p = sc.phase(ph)
            tb.apply(p)
            tb.start_trainer(p)
            tb.log.note(phase=ph)
            out.append(tb.kpi(seconds))
            tb.stop_phase()
    return out[0], out[1]


def _undo(log: UndoLog) -> None:
    problems = log.undo_all()
    if problems:
        raise TestbedError("teardown left changes behind: " + "; ".join(problems))


def stop(state: str | None = None) -> list[str]:
    """Undo whatever a testbed run left set up (a kept scenario, a run that died); safe to call
    when nothing is. TestbedError, undoing nothing, while a run still holds the testbed."""
    path = state_file(state)
    if not path.exists():
        return []
    with _held(state):
        return UndoLog(path).undo_all()


def current(state: str | None = None) -> dict[str, object] | None:
    """What the state file says is set up now, or None."""
    path = state_file(state)
    if not path.exists():
        return None
    return dict(UndoLog(path).info)
