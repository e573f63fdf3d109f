"""What the host is: CPUs, NUMA nodes, kernel, block devices (read through HostFS)."""

from __future__ import annotations

import os
import re

from core.cpulist import parse_cpulist
from core.hostfs import HostFS
from core.report import HostInfo

# Used only when /sys/block is absent (a bare fake root, a container without sysfs):
# sysfs is the authority on what is a whole disk, names are a guess.
_PARTITION_NAME = re.compile(r"^((sd|vd|xvd|hd)[a-z]+\d+|(nvme\d+n\d+|mmcblk\d+|nbd\d+|loop\d+)p\d+)$")


def _read_int(fs: HostFS, path: str) -> int | None:
    try:
        return int(fs.read_value(path).split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _stat_is_idle(fs: HostFS, name: str) -> bool:
    try:
        fields = fs.read_value(f"/sys/block/{name}/stat").split()
    except OSError:
        return True
    return all(f == "0" for f in fields)


def is_unused_device(fs: HostFS, name: str) -> bool:
    """Devices that exist but carry no data: unbound loops, uninitialised or idle zram, ramdisks."""
    if name.startswith("ram"):
        return True
    if name.startswith("loop"):
        # An unbound loop device has size 0; a bound one may be a data set image.
        return _read_int(fs, f"/sys/block/{name}/size") in (None, 0)
    if name.startswith("zram"):
        # zram is swap or a scratch disk; it only matters once something uses it.
        return _read_int(fs, f"/sys/block/{name}/size") in (None, 0) or _stat_is_idle(fs, name)
    return False


def looks_like_partition(name: str) -> bool:
    return _PARTITION_NAME.match(name) is not None


def block_devices(fs: HostFS) -> list[str] | None:
    """Whole disks worth reporting, or None when this host exposes no /sys/block."""
    if not fs.exists("/sys/block"):
        return None
    out: list[str] = []
    for name in fs.listdir("/sys/block"):
        # /sys/block holds whole disks only, but be safe with odd bind mounts.
        if fs.exists(f"/sys/block/{name}/partition") or is_unused_device(fs, name):
            continue
        out.append(name)
    return out


def _cpus(fs: HostFS) -> int:
    try:
        n = len(parse_cpulist(fs.read_value("/sys/devices/system/cpu/online")))
    except (OSError, ValueError):
        n = 0
    return n if n > 0 else (os.cpu_count() or 1)


def _numa_nodes(fs: HostFS) -> int:
    nodes = [e for e in fs.listdir("/sys/devices/system/node") if re.fullmatch(r"node\d+", e)]
    return max(1, len(nodes))


def _kernel(fs: HostFS) -> str | None:
    try:
        return fs.read_value("/proc/sys/kernel/osrelease") or None
    except OSError:
        return None


def detect_host(fs: HostFS, *, gpus: int = 0, gpu_model: str | None = None) -> HostInfo:
    """Describe the host; GPU figures come from whoever can see the GPUs (NVML)."""
    return HostInfo(
        cpus=_cpus(fs),
        numa_nodes=_numa_nodes(fs),
        gpus=gpus,
        gpu_model=gpu_model,
        kernel=_kernel(fs),
        block_devices=block_devices(fs) or [],
    )
