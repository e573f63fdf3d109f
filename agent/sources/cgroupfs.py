"""Cgroup v2 ids to paths, the workload a path names, and a cgroup's memory pressure.

The kernel names a cgroup by its id (bpf_get_current_cgroup_id()), which on cgroup
v2 is the inode number of its directory; a walk of the cgroup2 mount maps one to
the other. The walk is cached and redone only when an unknown id turns up, at most
once per `rescan_s`, so a short-lived cgroup cannot make every read walk the tree.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

from core.hostfs import HostFS

# Where distributions mount the v2 hierarchy: alone, or beside v1 ("hybrid").
CGROUP2_MOUNTS = ("/sys/fs/cgroup", "/sys/fs/cgroup/unified")
RESCAN_S = 5.0

_CONTAINER = re.compile(
    r"^(?:(?P<runtime>docker|cri-containerd|crio|libpod)-)?(?P<id>[0-9a-f]{64})(?:\.scope)?$"
)
# systemd driver: kubepods-burstable-pod<uid with _>.slice; cgroupfs driver: pod<uid with ->.
_POD = re.compile(
    r"^(?:kubepods(?:-[a-z]+)*-)?pod(?P<uid>[0-9a-f]{8}[-_](?:[0-9a-f]{4}[-_]){3}[0-9a-f]{12})(?:\.slice)?$"
)
_UNIT = re.compile(r"^[^/]+\.(?:service|scope)$")


@dataclass(frozen=True)
class Workload:
    """What a cgroup path reveals: a container, the pod it belongs to, or a systemd unit."""

    container_id: str | None = None
    runtime: str | None = None
    pod_uid: str | None = None
    unit: str | None = None

    @property
    def name(self) -> str | None:
        """A short, stable name for people and schedulers: pod/container, container, or unit."""
        short = self.container_id[:12] if self.container_id else None
        if self.pod_uid and short:
            return f"pod-{self.pod_uid}/{short}"
        if self.pod_uid:
            return f"pod-{self.pod_uid}"
        if short:
            return f"{self.runtime or 'container'}-{short}"
        return self.unit


def workload_of(path: str) -> Workload:
    """The innermost container, pod and unit named along a cgroup path."""
    container = runtime = pod = unit = None
    for part in path.strip("/").split("/"):
        if m := _CONTAINER.match(part):
            container, runtime = m.group("id"), m.group("runtime")
        elif m := _POD.match(part):
            pod = m.group("uid").replace("_", "-")
        elif _UNIT.match(part):
            unit = part
    # A container's scope is a unit too, but its id is the better name.
    return Workload(container, runtime, pod, None if container else unit)


def cgroup2_root(fs: HostFS) -> str | None:
    """The host path where the cgroup v2 hierarchy is mounted, or None (v1 only)."""
    for mount in CGROUP2_MOUNTS:
        if fs.exists(f"{mount}/cgroup.controllers"):
            return mount
    return None


class CgroupPaths:
    """Cgroup id -> path relative to the v2 root ("/" for the root cgroup)."""

    def __init__(
        self, fs: HostFS, *, rescan_s: float = RESCAN_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.fs = fs
        self.root = cgroup2_root(fs)
        self._rescan_s = rescan_s
        self._clock = clock
        self._by_id: dict[int, str] = {}
        self._scanned: float | None = None

    def _scan(self) -> None:
        self._scanned = self._clock()
        if self.root is None:
            return
        base = self.fs.path(self.root)
        found: dict[int, str] = {}
        # onerror ignores cgroups removed mid-walk.
        for dirpath, _dirs, _files in os.walk(base, onerror=lambda e: None):
            try:
                ino = os.stat(dirpath).st_ino
            except OSError:
                continue
            rel = os.path.relpath(dirpath, base)
            found[ino] = "/" if rel == "." else "/" + rel
        self._by_id = found

    def path(self, cgroup_id: int) -> str | None:
        if cgroup_id not in self._by_id:
            now = self._clock()
            if self._scanned is None or now - self._scanned >= self._rescan_s:
                self._scan()
        return self._by_id.get(cgroup_id)

    def id_of(self, path: str) -> int | None:
        """The id of the cgroup at `path` (relative to the v2 root)."""
        if self.root is None:
            return None
        try:
            return os.stat(self.fs.path(self.root + ("" if path == "/" else path))).st_ino
        except OSError:
            return None

    def memory_pressure(self, path: str) -> float | None:
        """`some avg10` of the cgroup's memory.pressure, as a share 0..1; None where absent."""
        if self.root is None:
            return None
        file = f"{self.root}{'' if path == '/' else path}/memory.pressure"
        if path == "/":
            file = "/proc/pressure/memory"  # the root cgroup has no file of its own
        try:
            text = self.fs.read_text(file)
        except OSError:
            return None
        for line in text.splitlines():
            if line.startswith("some "):
                for field in line.split()[1:]:
                    key, _, value = field.partition("=")
                    if key == "avg10":
                        try:
                            return min(max(float(value) / 100.0, 0.0), 1.0)
                        except ValueError:
                            return None
        return None


def own_cgroup(fs: HostFS, pid: int | str = "self") -> str | None:
    """The v2 cgroup path of a process (the `0::` line of /proc/<pid>/cgroup)."""
    try:
        text = fs.read_text(f"/proc/{pid}/cgroup")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("0::"):
            return line[3:].strip() or "/"
    return None
