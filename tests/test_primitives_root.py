"""The real kernel: vm.dirty_background_ratio and a loop device's read_ahead_kb, applied and reverted."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from core.hostfs import HostFS
from core.proposal import Action
from guardrails.executor import Executor
from primitives.host import Host

pytestmark = pytest.mark.root

BG_RATIO = Path("/proc/sys/vm/dirty_background_ratio")
BG_BYTES = Path("/proc/sys/vm/dirty_background_bytes")


def _read(p: Path) -> str:
    return p.read_text().strip()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root")
def test_dirty_background_ratio_and_loop_readahead_on_the_real_kernel(tmp_path: Path) -> None:
    image = tmp_path / "disk.img"
    image.write_bytes(b"\0" * (16 << 20))
    original = {p: _read(p) for p in (BG_RATIO, BG_BYTES)}
    loop = subprocess.run(
        ["losetup", "--find", "--show", str(image)], check=True, capture_output=True, text=True
    ).stdout.strip()
    dev = Path(loop).name
    ra = Path(f"/sys/block/{dev}/queue/read_ahead_kb")
    ra_before = _read(ra)
    try:
        ex = Executor(Host(HostFS("/")))
        bg_goal = 5 if int(original[BG_RATIO]) != 5 else 6
        ra_goal = 1024 if int(ra_before) != 1024 else 512

        r1 = ex.apply(Action(primitive="vm.dirty_background_ratio", value=bg_goal, reason="root test"))
        r2 = ex.apply(Action(primitive="block.read_ahead_kb", target=dev, value=ra_goal, reason="root test"))
        assert r1.status == "applied", r1.reason
        assert r2.status == "applied", r2.reason
        assert _read(BG_RATIO) == str(bg_goal) and _read(BG_BYTES) == "0"
        assert _read(ra) == str(ra_goal)

        results = ex.revert_all()
        assert [r.status for r in results] == ["reverted", "reverted"], [r.reason for r in results]
        assert {p: _read(p) for p in (BG_RATIO, BG_BYTES)} == original
        assert _read(ra) == ra_before
    finally:
        # Whatever happened above, the host leaves as it came.
        if _read(BG_RATIO) != original[BG_RATIO] or _read(BG_BYTES) != original[BG_BYTES]:
            if original[BG_BYTES] != "0":
                BG_BYTES.write_text(original[BG_BYTES])
            else:
                BG_RATIO.write_text(original[BG_RATIO])
        if ra.exists() and _read(ra) != ra_before:
            ra.write_text(ra_before)
        subprocess.run(["losetup", "-d", loop], check=False)
