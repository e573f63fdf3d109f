"""Job discovery: which processes are training jobs, and which processes belong to each.

Jobs come from three places, most jobs never cooperating:
- the operator: `--job NAME=PID` or the config file's `jobs: {NAME: PID}`;
- trainer hooks that announce themselves (agent.hook);
- NVML: processes holding a GPU, named after their script.

A job's loader workers are its descendants. They are found by walking
/proc/<pid>/task/<tid>/children every interval; a worker that lives less than
an interval can be missed. Following sched:sched_process_fork in eBPF would
catch those too; the /proc walk is the baseline that works without BPF.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.hook.protocol import safe_job_name
from agent.proctree import alive, children, descendants, ppid
from agent.sources.trainer_state import AnnouncedJob
from core.hostfs import HostFS
from core.report import JobInfo

GpuProcesses = Callable[[], dict[int, list[int]]]
Announced = Callable[[], list[AnnouncedJob]]

_PYTHON_OPTS_WITH_ARG = {"-W", "-X", "--check-hash-based-pycs"}
_MAX_ANCESTRY = 64


class JobSpecError(ValueError):
    """An operator's job given in a form we cannot use; the message is one line for the user."""


@dataclass(frozen=True)
class OperatorJob:
    name: str
    pid: int


def parse_job_spec(spec: str) -> OperatorJob:
    """`NAME=PID` from the command line."""
    name, sep, pid = spec.partition("=")
    if not sep or not name.strip() or not pid.strip().isdigit() or int(pid) <= 0:
        raise JobSpecError(f"--job wants NAME=PID (e.g. --job resnet50=4242), got {spec!r}")
    return OperatorJob(safe_job_name(name), int(pid))


def jobs_from_config(config: Mapping[str, Any]) -> list[OperatorJob]:
    """The config file's `jobs:` entry, a mapping of job name to pid."""
    raw = config.get("jobs")
    if raw is None:
        return []
    if not isinstance(raw, Mapping):
        raise JobSpecError("config: `jobs` must map job names to pids, e.g. `jobs: {resnet50: 4242}`")
    out: list[OperatorJob] = []
    for name, pid in raw.items():
        if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 0:
            raise JobSpecError(f"config: job {name!r} needs a pid (a positive integer), got {pid!r}")
        out.append(OperatorJob(safe_job_name(str(name)), pid))
    return out


@dataclass
class _Job:
    name: str
    found_by: str
    mains: list[int]
    pids: list[int] = field(default_factory=list)
    gpus: set[int] = field(default_factory=set)
    loader_workers: int = 0


class JobRegistry:
    """The jobs on this host now; refreshed at most every `max_age_s` when asked."""

    def __init__(
        self,
        fs: HostFS | None = None,
        *,
        operator: Sequence[OperatorJob] = (),
        gpu_processes: GpuProcesses | None = None,
        announced: Announced | None = None,
        max_age_s: float = 0.5,
    ) -> None:
        self._fs = fs or HostFS()
        self._operator = list(operator)
        self._gpu_processes = gpu_processes
        self._announced = announced
        self._max_age_s = max_age_s
        self._jobs: list[_Job] = []
        self._at: float | None = None
        self.notes: list[str] = []

    def pids_by_job(self) -> dict[str, list[int]]:
        """Job name -> pids, main pid (rank 0) first, then other ranks, then their descendants."""
        self._fresh()
        return {j.name: list(j.pids) for j in self._jobs}

    def job_infos(self) -> list[JobInfo]:
        self._fresh()
        return [
            JobInfo(
                name=j.name,
                pid=j.mains[0],
                gpus=sorted(j.gpus),
                loader_workers=j.loader_workers,
                found_by=j.found_by,
            )
            for j in self._jobs
        ]

    def _fresh(self) -> None:
        now = time.monotonic()
        if self._at is None or now - self._at >= self._max_age_s:
            self.refresh()
            self._at = now

    def refresh(self) -> None:
        fs = self._fs
        notes: list[str] = []
        jobs: list[_Job] = []
        claimed: dict[int, _Job] = {}  # main pid -> job

        def add(job: _Job) -> None:
            jobs.append(job)
            for p in job.mains:
                claimed[p] = job

        # The hook's name is the one its trainer.<job>.* figures and control targets
        # carry, so it wins over the operator's for the same process.
        for a in self._announced() if self._announced is not None else []:
            mains = [p for p in a.pids if p not in claimed and alive(fs, p)]
            if mains:
                add(_Job(a.name, "hook", mains))
        for op in self._operator:
            if op.pid in claimed:
                continue
            if not alive(fs, op.pid):
                notes.append(f"job {op.name}: pid {op.pid} is not running")
                continue
            add(_Job(op.name, "operator", [op.pid]))

        gpu_of = self._gpus_by_pid()
        for group in self._nvml_groups(gpu_of, claimed):
            add(group)

        taken: set[str] = set()
        for j in jobs:
            j.name = _unique(j.name, taken)
            taken.add(j.name)
            self._fill(j, gpu_of)
        self._jobs = jobs
        self.notes = notes

    def _gpus_by_pid(self) -> dict[int, set[int]]:
        out: dict[int, set[int]] = {}
        if self._gpu_processes is None:
            return out
        for gpu, pids in self._gpu_processes().items():
            for p in pids:
                out.setdefault(p, set()).add(gpu)
        return out

    def _nvml_groups(self, gpu_of: dict[int, set[int]], claimed: dict[int, _Job]) -> list[_Job]:
        """GPU processes that no job claims yet, grouped into jobs.

        A GPU process under another GPU process, or under a named job, is part of
        that job (a spawned rank, a worker that touched CUDA). Top-level GPU
        processes with the same name and the same parent, other than init, are the
        ranks of one job (torchrun, mpirun).
        """
        tops: list[int] = []
        for p in sorted(gpu_of):
            if p in claimed or not alive(self._fs, p):
                continue
            if not any(a in claimed or a in gpu_of for a in self._ancestors(p)):
                tops.append(p)
        groups: dict[tuple[str, int], list[int]] = {}
        for p in tops:
            parent = ppid(self._fs, p)
            # Siblings under init (or an unknown parent) share no launcher: each its own job.
            key = parent if parent is not None and parent > 1 else -p
            groups.setdefault((self.process_name(p), key), []).append(p)
        return [_Job(name, "nvml", pids) for (name, _), pids in groups.items()]

    def _ancestors(self, pid: int) -> list[int]:
        out: list[int] = []
        p = ppid(self._fs, pid)
        while p is not None and p > 1 and len(out) < _MAX_ANCESTRY:
            out.append(p)
            p = ppid(self._fs, p)
        return out

    def _fill(self, job: _Job, gpu_of: dict[int, set[int]]) -> None:
        pids = list(job.mains)
        seen = set(pids)
        workers = 0
        for main in job.mains:
            workers = max(workers, len(children(self._fs, main)))
            for d in descendants(self._fs, main):
                if d not in seen:
                    seen.add(d)
                    pids.append(d)
        job.pids = pids
        job.loader_workers = workers
        job.gpus = {g for p in pids for g in gpu_of.get(p, set())}

    def process_name(self, pid: int) -> str:
        """A job name for a process: its script's name for an interpreter, else its command."""
        try:
            argv = [a for a in self._fs.read_text(f"/proc/{pid}/cmdline").split("\0") if a]
        except OSError:
            argv = []
        name = _name_from_argv(argv)
        if name is None:
            try:
                name = self._fs.read_value(f"/proc/{pid}/comm")
            except OSError:
                name = f"pid{pid}"
        return safe_job_name(name)


def _name_from_argv(argv: list[str]) -> str | None:
    if not argv:
        return None
    exe = os.path.basename(argv[0])
    if not exe.startswith("python"):
        return _stem(exe)
    args = iter(argv[1:])
    for a in args:
        if a == "-m":
            module = next(args, "")
            return module.replace(".", "-") or None
        if a == "-c":
            return None  # inline code has no name worth more than comm
        if a in _PYTHON_OPTS_WITH_ARG:
            next(args, None)
            continue
        if a.startswith("-"):
            continue
        return _stem(os.path.basename(a))
    return None


def _stem(base: str) -> str:
    return base[:-3] if base.endswith(".py") else base


def _unique(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    n = 2
    while f"{name}-{n}" in taken:
        n += 1
    return f"{name}-{n}"
