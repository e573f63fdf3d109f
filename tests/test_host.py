"""Host detection over fake sysfs/procfs roots."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent.host import block_devices, detect_host
from core.cpulist import parse_cpulist
from core.hostfs import HostFS


def _w(root: Path, path: str, text: str) -> None:
    p = root / path.lstrip("/")
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def _disk(root: Path, name: str, size: int, stat: str = "0 0 0 0 0 0 0 0 0 0 0") -> None:
    _w(root, f"/sys/block/{name}/size", f"{size}\n")
    _w(root, f"/sys/block/{name}/stat", stat + "\n")


@pytest.mark.parametrize(("text", "n"), [("0-1\n", 2), ("0", 1), ("0-3,8,10-11", 7), ("", 0)])
def test_parse_cpu_list(text: str, n: int) -> None:
    assert len(parse_cpulist(text)) == n


def test_detect_host(tmp_path: Path) -> None:
    _w(tmp_path, "/sys/devices/system/cpu/online", "0-15\n")
    for node in ("node0", "node1"):
        (tmp_path / "sys/devices/system/node" / node).mkdir(parents=True)
    _w(tmp_path, "/sys/devices/system/node/online", "0-1\n")  # not a node directory
    _w(tmp_path, "/proc/sys/kernel/osrelease", "6.18.44-test\n")
    _disk(tmp_path, "nvme0n1", 1000)
    _disk(tmp_path, "sda", 1000)
    _disk(tmp_path, "loop0", 0)  # unbound
    _disk(tmp_path, "loop1", 2048)  # a mounted image: data may live there
    _disk(tmp_path, "zram0", 0)  # not initialised
    _disk(tmp_path, "zram1", 4096)  # initialised, never used
    _disk(tmp_path, "zram2", 4096, "5 0 40 1 0 0 0 0 0 1 1")
    _disk(tmp_path, "ram0", 8192, "5 0 40 1 0 0 0 0 0 1 1")
    _w(tmp_path, "/sys/block/sdb1/partition", "1\n")
    _disk(tmp_path, "sdb1", 100)
    host = detect_host(HostFS(tmp_path), gpus=8, gpu_model="H200")
    assert host.cpus == 16
    assert host.numa_nodes == 2
    assert host.kernel == "6.18.44-test"
    assert host.gpus == 8 and host.gpu_model == "H200"
    assert host.block_devices == ["loop1", "nvme0n1", "sda", "zram2"]


def test_detect_host_on_empty_root(tmp_path: Path) -> None:
    host = detect_host(HostFS(tmp_path))
    assert host.cpus == (os.cpu_count() or 1)
    assert host.numa_nodes == 1
    assert host.kernel is None
    assert host.gpus == 0
    assert host.block_devices == []
    assert block_devices(HostFS(tmp_path)) is None
