"""Every primitive: read, apply through the executor, read back, revert, and the host is byte-identical."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.knob import KnobValue, Target
from core.proposal import Action
from guardrails.executor import Executor
from primitives.catalog import all_primitives, get
from tests.fakes.fake_kernel import fake_host

# A value one step from the fake root's defaults, and the target, for every primitive.
CASES: dict[str, tuple[Target, KnobValue, KnobValue]] = {
    # id: (target, value before, value to apply)
    "vm.dirty_ratio": (None, 20, 10),
    "vm.dirty_background_ratio": (None, 10, 5),
    "vm.dirty_bytes": (None, 0, 536870912),
    "vm.dirty_background_bytes": (None, 0, 134217728),
    "vm.dirty_writeback_centisecs": (None, 500, 100),
    "vm.dirty_expire_centisecs": (None, 3000, 1500),
    "vm.swappiness": (None, 60, 20),
    "vm.min_free_kbytes": (None, 67584, 131072),
    "kernel.numa_balancing": (None, 1, 0),
    "kernel.sched_autogroup_enabled": (None, 1, 0),
    "block.read_ahead_kb": ("nvme0n1", 128, 1024),
    "block.nr_requests": ("nvme0n1", 256, 64),
    "block.scheduler": ("vdb", "mq-deadline", "none"),
    "cpufreq.governor": (None, "schedutil", "performance"),
    "mm.thp_enabled": (None, "madvise", "never"),
    "mm.thp_defrag": (None, "madvise", "defer+madvise"),
    "loader.workers": ("resnet", 4, 3),
    "loader.prefetch_factor": ("resnet", 2, 4),
    "loader.cpu_affinity": ("resnet", "0-3", "0-1"),
    "gpu.power_limit_w": (1, 400, 500),
    "trainer.batch_size": ("resnet", 256, 512),
}


def test_every_catalogue_primitive_has_a_case() -> None:
    assert set(CASES) == {p.id for p in all_primitives()}


@pytest.mark.parametrize("pid", sorted(CASES))
def test_apply_then_revert_restores_every_byte(tmp_path: Path, pid: str) -> None:
    fh = fake_host(tmp_path)
    p = get(pid)
    assert p is not None
    target, before, value = CASES[pid]
    host = fh.host
    assert p.available(host, target).ok
    assert p.read(host, target) == before
    original = fh.state()

    ex = Executor(host)
    res = ex.apply(Action(primitive=pid, target=target, value=value, reason="test"))
    assert res.status == "applied", res.reason
    assert res.before == before and res.after == value
    assert p.read(host, target) == value
    assert fh.state() != original

    back = ex.revert(res.change_id or 0)
    assert back.status == "reverted", back.reason
    assert p.read(host, target) == before
    assert fh.state() == original
    assert ex.managed == []


def test_selection_file_keeps_kernel_format_after_revert(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    path = fh.fs.path("/sys/kernel/mm/transparent_hugepage/enabled")
    ex = Executor(fh.host)
    res = ex.apply(Action(primitive="mm.thp_enabled", value="always", reason="test"))
    assert path.read_text() == "[always] madvise never\n"
    ex.revert(res.change_id or 0)
    assert path.read_text() == "always [madvise] never\n"
