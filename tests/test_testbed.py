"""Each testbed scenario, run briefly as root: its KPI must move by 20% or more from fault to fix.

The figures are printed (pytest -s shows them); the host is restored after each.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from evals.testbed.scenarios import SCENARIOS

pytestmark = [
    pytest.mark.root,
    pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="the testbed extra is missing"),
]

MIN_MOVEMENT = 0.20


def _knobs() -> dict[str, str]:
    paths = [f"/proc/sys/vm/{k}" for k in ("dirty_ratio", "dirty_bytes", "dirty_background_ratio")]
    paths += ["/proc/sys/vm/dirty_background_bytes", "/proc/sys/kernel/sched_autogroup_enabled"]
    return {p: Path(p).read_text() for p in paths}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_moves_its_kpi(name: str) -> None:
    from evals.testbed.runner import measure, movement
    from evals.testbed.state import state_file

    before = _knobs()
    fault, fix = measure(name, seconds=5.0)
    moved = movement(fault, fix)
    print(f"\n{name} fault: {fault.line()}\n{name} fix:   {fix.line()}\n{name} moved {100 * moved:+.0f}%")
    assert moved >= MIN_MOVEMENT, f"{name}: samples/s moved only {100 * moved:+.0f}%"
    assert fix.data_wait_frac < fault.data_wait_frac
    assert _knobs() == before
    assert not state_file().exists()
    assert not any("idletune-testbed" in line for line in Path("/proc/mounts").read_text().splitlines())
    assert not os.path.exists("/sys/fs/cgroup/blkio/idletune-testbed")
