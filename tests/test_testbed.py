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
# One measurement is two short windows on a shared VM, and the checkpoint's effect depends on where
# its writeback bursts fall in them: on this testbed six measurements of `writeback` (8 s windows)
# moved +58, +15, +102, +5, -2 and +65 %, three more with 20 s windows +9, +55 and +30 %. A
# scenario passes when one of up to ATTEMPTS measurements moves its KPI enough (about 3 % of runs
# fail at those odds); one whose fix does not help fails every time.
ATTEMPTS = 5


def _knobs() -> dict[str, str]:
    paths = [f"/proc/sys/vm/{k}" for k in ("dirty_ratio", "dirty_bytes", "dirty_background_ratio")]
    paths += ["/proc/sys/vm/dirty_background_bytes", "/proc/sys/kernel/sched_autogroup_enabled"]
    return {p: Path(p).read_text() for p in paths}


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_moves_its_kpi(name: str) -> None:
    from evals.testbed.runner import measure, movement
    from evals.testbed.state import state_file

    before = _knobs()
    tries: list[float] = []
    for _ in range(ATTEMPTS):
        fault, fix = measure(name, seconds=5.0)
        moved = movement(fault, fix)
        tries.append(moved)
        print(f"\n{name} fault: {fault.line()}\n{name} fix:   {fix.line()}\n{name} moved {100 * moved:+.0f}%")
        assert _knobs() == before
        if moved >= MIN_MOVEMENT:
            break
    shown = ", ".join(f"{100 * m:+.0f}%" for m in tries)
    assert moved >= MIN_MOVEMENT, f"{name}: samples/s moved only {shown}"
    # The job waits less for each step's data. Its share of the active time may stay level where the
    # fix speeds compute too: a fresh-clone run of `writeback` moved +35 % with the share at 47.3 %
    # and 47.6 %, the wait per step about 8.8 ms and 6.5 ms (the checkpoint writer, throttled, takes less
    # CPU from the trainer as well as less of the device).
    assert fix.wait_per_step_s < fault.wait_per_step_s
    assert not state_file().exists()
    assert not any("idletune-testbed" in line for line in Path("/proc/mounts").read_text().splitlines())
    assert not os.path.exists("/sys/fs/cgroup/blkio/idletune-testbed")
