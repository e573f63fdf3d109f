"""The executor: refusals as values, journal before write, rollback, deferring to the operator."""

from __future__ import annotations

import errno
from pathlib import Path

from core.proposal import Action
from guardrails.executor import Executor
from guardrails.journal import ChangeRecord, MemoryJournal
from tests.fakes.fake_kernel import FakeKernelFS, fake_host


def _a(primitive: str, value: object, target: object = None) -> Action:
    return Action.model_validate(
        {"primitive": primitive, "target": target, "value": value, "reason": "because"}
    )


def test_refusals_are_results_with_reasons(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    ex = Executor(fh.host)
    before = fh.state()
    cases = {
        "vm.nonexistent": (_a("vm.nonexistent", 1), "not in the catalogue"),
        "out of bounds": (_a("vm.dirty_ratio", 99), "maximum"),
        "missing target": (_a("block.read_ahead_kb", 256), "target"),
        "gpu target as text": (_a("gpu.power_limit_w", 500, "0"), "target"),
        "bad choice": (_a("mm.thp_enabled", "sometimes"), "value"),
        "step": (_a("vm.swappiness", 0), "larger step"),
    }
    for name, (action, words) in cases.items():
        res = ex.apply(action)
        assert res.status == "refused", name
        assert words in res.reason, (name, res.reason)
    assert fh.state() == before
    assert ex.managed == []


def test_same_value_is_unchanged_and_writes_nothing(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    ex = Executor(fh.host)
    res = ex.apply(_a("vm.dirty_ratio", 20))
    assert res.status == "unchanged"
    assert fh.fs.writes == [] and ex.managed == []


def test_integral_float_value_is_taken_as_integer(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    res = Executor(fh.host).apply(_a("vm.dirty_ratio", 10.0))
    assert res.status == "applied" and fh.fs.read_value("/proc/sys/vm/dirty_ratio") == "10"


def test_journal_holds_the_originals_before_the_first_write(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    seen: list[tuple[str, list[str]]] = []

    class Watching(MemoryJournal):
        def before_write(self, change: ChangeRecord) -> None:
            # Called before any write: the host still has the original values.
            seen.append((fh.fs.read_value("/proc/sys/vm/dirty_bytes"), [str(w.value) for w in change.saved]))
            super().before_write(change)

    journal = Watching()
    ex = Executor(fh.host, journal=journal)
    res = ex.apply(_a("vm.dirty_bytes", 1 << 30))
    assert seen == [("0", ["0", "20"])]
    assert [c.state for c in journal.open_changes()] == ["applied"]
    ex.revert(res.change_id or 0)
    assert journal.open_changes() == []
    assert journal.records[1].state == "reverted"


class FailingFS(FakeKernelFS):
    def __init__(self, root: Path, fail_on: str) -> None:
        super().__init__(root)
        self.fail_on = fail_on

    def write_text(self, host_path: str, text: str) -> None:
        if host_path == self.fail_on:
            raise OSError(errno.EIO, "Input/output error")
        super().write_text(host_path, text)


def test_a_failed_write_midway_rolls_back_what_was_written(tmp_path: Path) -> None:
    fh = fake_host(tmp_path, cpus=4)
    fh.fs = FailingFS(tmp_path, "/sys/devices/system/cpu/cpu2/cpufreq/scaling_governor")
    before = fh.state()
    journal = MemoryJournal()
    res = Executor(fh.host, journal=journal).apply(_a("cpufreq.governor", "performance"))
    assert res.status == "failed"
    assert "Input/output error" in res.reason and "originals restored" in res.reason
    assert fh.state() == before
    assert journal.records[1].state == "failed" and journal.open_changes() == []


def test_a_trainer_refusal_is_a_failed_result_and_nothing_changes(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    fh.trainer.refuse.add("loader.workers")
    before = fh.state()
    res = Executor(fh.host).apply(_a("loader.workers", 3, "resnet"))
    assert res.status == "failed" and "locked by the training script" in res.reason
    assert fh.state() == before


def test_a_knob_changed_by_the_operator_is_released_not_written_back(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    ex = Executor(fh.host)
    res = ex.apply(_a("vm.swappiness", 30))
    fh.fs.write_text("/proc/sys/vm/swappiness", "45")  # the operator's own change
    back = ex.revert(res.change_id or 0)
    assert back.status == "released" and "someone else" in back.reason
    assert fh.fs.read_value("/proc/sys/vm/swappiness") == "45"
    assert ex.managed == []


def test_a_side_effect_undone_by_the_operator_also_releases(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    ex = Executor(fh.host)
    res = ex.apply(_a("vm.dirty_bytes", 1 << 30))
    fh.fs.write_text("/proc/sys/vm/dirty_ratio", "15")  # zeroes our dirty_bytes
    assert ex.revert(res.change_id or 0).status == "released"
    assert fh.fs.read_value("/proc/sys/vm/dirty_ratio") == "15"


def test_revert_of_an_unknown_change_is_refused(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    assert Executor(fh.host).revert(7).status == "refused"


def test_applied_result_says_when_a_change_reaches_the_workload(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    res = Executor(fh.host).apply(_a("loader.workers", 3, "resnet"))
    assert res.status == "applied" and res.notes and res.notes[0].startswith("reaches: ")


def test_a_change_the_trainer_defers_is_pending_and_managed(tmp_path: Path) -> None:
    fh = fake_host(tmp_path, cpus=8)
    fh.trainer.deferred.add("loader.workers")
    ex = Executor(fh.host)
    res = ex.apply(_a("loader.workers", 6, "resnet"))
    assert res.status == "pending" and res.after == 4
    assert any(n == "pending: takes effect next epoch" for n in res.notes)
    assert [c.id for c in ex.managed] == [res.change_id]
    fh.trainer.land()
    assert fh.trainer.state["resnet"]["loader.workers"] == 6
    back = ex.revert(res.change_id or 0)
    assert back.status == "reverted" and back.notes == ["pending: takes effect next epoch"]
    fh.trainer.land()
    assert fh.trainer.state["resnet"]["loader.workers"] == 4


def test_in_force_says_when_a_change_acts(tmp_path: Path) -> None:
    fh = fake_host(tmp_path, cpus=8)
    fh.trainer.deferred.add("loader.workers")
    ex = Executor(fh.host)
    sysctl = ex.apply(_a("vm.dirty_ratio", 15))
    assert sysctl.status == "applied" and ex.in_force(sysctl.change_id or 0) is True  # at once
    res = ex.apply(_a("loader.workers", 6, "resnet"))
    cid = res.change_id or 0
    assert res.status == "pending" and ex.in_force(cid) is False
    fh.trainer.land()  # the trainer's next epoch
    assert ex.in_force(cid) is True
    del fh.trainer.state["resnet"]  # the job ended: nothing to read
    assert ex.in_force(cid) is None
    assert ex.in_force(999) is None  # not a managed change


def test_reverting_a_change_still_pending_cancels_it(tmp_path: Path) -> None:
    fh = fake_host(tmp_path, cpus=8)
    fh.trainer.deferred.add("loader.workers")
    ex = Executor(fh.host)
    res = ex.apply(_a("loader.workers", 6, "resnet"))
    assert ex.revert(res.change_id or 0).status == "reverted"
    fh.trainer.land()
    assert fh.trainer.state["resnet"]["loader.workers"] == 4 and fh.trainer.waiting == {}


def test_a_pending_change_overridden_by_someone_else_is_released(tmp_path: Path) -> None:
    fh = fake_host(tmp_path, cpus=8)
    fh.trainer.deferred.add("loader.workers")
    ex = Executor(fh.host)
    res = ex.apply(_a("loader.workers", 6, "resnet"))
    fh.trainer.land()
    fh.trainer.state["resnet"]["loader.workers"] = 5
    assert ex.revert(res.change_id or 0).status == "released"
    assert fh.trainer.state["resnet"]["loader.workers"] == 5
