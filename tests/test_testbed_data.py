"""The testbed's data reader on a raw device region, and its noise loads' command line."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the testbed extra is missing")
def test_shards_on_a_raw_device_are_regions_read_to_their_end_only(tmp_path: Path) -> None:
    from evals.testbed.trainer import ShardStream

    device = tmp_path / "disk.img"  # stands in for a block device: shards are byte ranges of it
    sample_kb = 4
    device.write_bytes(bytes(range(256)) * (3 * 16 * 16))  # 3 shards of 16 samples of 4 KiB
    size = 16 * sample_kb * 1024
    shards = [(str(device), i * size, size) for i in range(3)]
    got = list(ShardStream(shards[:2], sample_kb, preprocess=0, drop_behind=True))
    assert len(got) == 32  # two regions, 16 samples each; nothing read past a region
    whole = list(ShardStream([(str(device), 0, 3 * size)], sample_kb, preprocess=0, drop_behind=False))
    assert len(whole) == 48


def test_noise_loads_refuse_a_bad_command_line() -> None:
    res = subprocess.run(
        [sys.executable, "-m", "evals.testbed.load", "memhog"], capture_output=True, text=True, timeout=60
    )
    assert res.returncode != 0 and "usage:" in res.stderr and "memhog MB" in res.stderr
