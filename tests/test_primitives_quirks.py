"""The kernel's quirks that an exact revert must respect, and what the host does not have."""

from __future__ import annotations

from pathlib import Path

from core.proposal import Action
from guardrails.executor import Executor
from primitives.base import Loc, Reach
from primitives.catalog import get, read_knobs
from primitives.host import Host
from tests.fakes.fake_kernel import FakeGpu, FakeHost, FakeTrainer, fake_host

VM = "/proc/sys/vm"


def _vm(fh: FakeHost, name: str) -> int:
    return int(fh.fs.read_value(f"{VM}/{name}"))


def _apply(ex: Executor, primitive: str, value: object, target: object = None) -> int:
    res = ex.apply(
        Action.model_validate({"primitive": primitive, "target": target, "value": value, "reason": "t"})
    )
    assert res.status == "applied", res.reason
    assert res.change_id is not None
    return res.change_id


def _revert(ex: Executor, change_id: int) -> None:
    res = ex.revert(change_id)
    assert res.status == "reverted", res.reason


# -- dirty limits: one member of each pair is in force ---------------------------------------


def test_dirty_bytes_zeroes_ratio_and_revert_restores_the_ratio(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    ex = Executor(fh.host)
    cid = _apply(ex, "vm.dirty_bytes", 1 << 30)
    assert (_vm(fh, "dirty_ratio"), _vm(fh, "dirty_bytes")) == (0, 1 << 30)
    _revert(ex, cid)
    assert (_vm(fh, "dirty_ratio"), _vm(fh, "dirty_bytes")) == (20, 0)


def test_ratio_applied_over_bytes_mode_reverts_to_the_bytes_that_were_set(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    fh.fs.write_text(f"{VM}/dirty_bytes", str(256 << 20))
    assert _vm(fh, "dirty_ratio") == 0
    ex = Executor(fh.host)
    cid = _apply(ex, "vm.dirty_ratio", 10)
    assert (_vm(fh, "dirty_ratio"), _vm(fh, "dirty_bytes")) == (10, 0)
    _revert(ex, cid)
    assert (_vm(fh, "dirty_ratio"), _vm(fh, "dirty_bytes")) == (0, 256 << 20)


def test_both_zero_is_restored_although_the_bytes_file_refuses_zero(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    fh.fs.write_text(f"{VM}/dirty_ratio", "0")
    assert (_vm(fh, "dirty_ratio"), _vm(fh, "dirty_bytes")) == (0, 0)
    ex = Executor(fh.host)
    cid = _apply(ex, "vm.dirty_bytes", 1 << 30)
    _revert(ex, cid)
    assert (_vm(fh, "dirty_ratio"), _vm(fh, "dirty_bytes")) == (0, 0)


def test_dirty_pair_saves_both_members_and_writes_back_only_the_one_set(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    p = get("vm.dirty_background_bytes")
    assert p is not None
    locs = p.locations(fh.host, None)
    assert [str(x) for x in locs] == [f"{VM}/dirty_background_bytes", f"{VM}/dirty_background_ratio"]
    plan = p.revert_plan({locs[0]: "0", locs[1]: "10"})
    assert [(str(w.loc), w.value) for w in plan] == [(f"{VM}/dirty_background_ratio", "10")]


def test_background_bytes_then_ratio_changes_unwind_in_order(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    before = fh.state()
    ex = Executor(fh.host)
    _apply(ex, "vm.dirty_background_bytes", 64 << 20)
    _apply(ex, "vm.dirty_background_ratio", 5)
    assert (_vm(fh, "dirty_background_ratio"), _vm(fh, "dirty_background_bytes")) == (5, 0)
    assert [r.status for r in ex.revert_all()] == ["reverted", "reverted"]
    assert fh.state() == before


# -- a scheduler switch resets nr_requests ------------------------------------------------


def test_scheduler_switch_resets_nr_requests_and_revert_restores_scheduler_first(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    q = "/sys/block/vdb/queue"
    ex = Executor(fh.host)
    nr_id = _apply(ex, "block.nr_requests", 64, "vdb")
    sched_id = _apply(ex, "block.scheduler", "none", "vdb")
    assert fh.fs.read_value(f"{q}/nr_requests") == "128"  # the kernel's reset, not our 64
    p = get("block.scheduler")
    assert p is not None
    assert [str(w.loc) for w in ex.managed[-1].revert] == [f"{q}/scheduler", f"{q}/nr_requests"]
    _revert(ex, sched_id)
    assert fh.fs.read_value(f"{q}/scheduler").split()[0] == "[mq-deadline]"
    assert fh.fs.read_value(f"{q}/nr_requests") == "64"
    _revert(ex, nr_id)
    assert fh.fs.read_value(f"{q}/nr_requests") == "256"


def test_scheduler_not_offered_by_the_kernel_is_refused(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    fh.fs.path("/sys/block/vdb/queue/scheduler").write_text("[mq-deadline] none \n")
    res = Executor(fh.host).apply(Action(primitive="block.scheduler", target="vdb", value="bfq", reason="t"))
    assert res.status == "refused" and "offers mq-deadline, none" in res.reason


# -- per-CPU governors -----------------------------------------------------------------


def test_mixed_governors_are_restored_cpu_by_cpu(tmp_path: Path) -> None:
    fh = fake_host(tmp_path, cpus=4)
    gov = "/sys/devices/system/cpu/cpu{}/cpufreq/scaling_governor"
    fh.fs.write_text(gov.format(0), "performance")
    fh.fs.write_text(gov.format(3), "powersave")
    p = get("cpufreq.governor")
    assert p is not None and p.read(fh.host, None) == "mixed"
    before = fh.state()
    ex = Executor(fh.host)
    cid = _apply(ex, "cpufreq.governor", "performance")
    assert {fh.fs.read_value(gov.format(c)) for c in range(4)} == {"performance"}
    _revert(ex, cid)
    assert [fh.fs.read_value(gov.format(c)) for c in range(4)] == [
        "performance",
        "schedutil",
        "schedutil",
        "powersave",
    ]
    assert fh.state() == before


def test_governor_of_a_cpu_list_touches_only_those_cpus(tmp_path: Path) -> None:
    fh = fake_host(tmp_path, cpus=4)
    ex = Executor(fh.host)
    _apply(ex, "cpufreq.governor", "performance", "2-3")
    govs = [fh.fs.read_value(f"/sys/devices/system/cpu/cpu{c}/cpufreq/scaling_governor") for c in range(4)]
    assert govs == ["schedutil", "schedutil", "performance", "performance"]


def test_no_cpufreq_is_unavailable_and_never_read(tmp_path: Path) -> None:
    fh = fake_host(tmp_path, cpufreq=False)
    p = get("cpufreq.governor")
    assert p is not None
    av = p.available(fh.host, None)
    assert not av.ok and "no cpufreq" in av.reason
    assert "cpufreq.governor" not in read_knobs(fh.fs)
    res = Executor(fh.host).apply(Action(primitive="cpufreq.governor", value="performance", reason="t"))
    assert res.status == "refused" and "no cpufreq" in res.reason


# -- GPU power limits stay inside NVML's constraints ------------------------------------------


def test_power_limit_outside_constraints_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    fh.gpu.limits = [650.0, 650.0]
    res = Executor(fh.host).apply(Action(primitive="gpu.power_limit_w", target=0, value=750, reason="t"))
    assert res.status == "refused" and "NVML constraints" in res.reason
    assert fh.gpu.limits == [650.0, 650.0]


def test_fractional_power_limit_is_restored_exactly(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    fh.gpu.limits[0] = 412.345
    ex = Executor(fh.host)
    cid = _apply(ex, "gpu.power_limit_w", 500, 0)
    _revert(ex, cid)
    assert fh.gpu.limits[0] == 412.345


def test_no_gpu_is_unavailable(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    p = get("gpu.power_limit_w")
    assert p is not None
    assert not p.available(Host(fh.fs), 0).ok
    assert not p.available(fh.host, 2).ok
    assert "gpu.power_limit_w@1" in read_knobs(fh.fs, gpus=[0, 1], gpu=FakeGpu([300.0, 310.5]))
    assert read_knobs(fh.fs, gpus=[0, 1], gpu=FakeGpu([300.0, 310.5]))["gpu.power_limit_w@1"] == 310.5
    assert not any(k.startswith("gpu.") for k in read_knobs(fh.fs, gpus=[0, 1]))


# -- readahead reaches only files opened after the change -------------------------------------


def test_readahead_asks_attached_hooks_to_reopen_files_on_apply_and_revert(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    p = get("block.read_ahead_kb")
    assert p is not None and p.reaches is Reach.NEW_OPENS and "opened" in p.reaches_note
    ex = Executor(fh.host)
    res = ex.apply(Action(primitive="block.read_ahead_kb", target="nvme0n1", value=2048, reason="t"))
    assert res.status == "applied"
    assert fh.trainer.reopened == ["resnet"]
    assert any("reopen" in n for n in res.notes)
    back = ex.revert(res.change_id or 0)
    assert back.status == "reverted" and fh.trainer.reopened == ["resnet", "resnet"]


def test_readahead_without_a_hook_says_running_loaders_keep_the_old_value(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    res = Executor(Host(fh.fs)).apply(
        Action(primitive="block.read_ahead_kb", target="nvme0n1", value=2048, reason="t")
    )
    assert res.status == "applied"
    assert any("keep the old readahead" in n for n in res.notes)


def test_hook_that_cannot_reopen_is_not_asked(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    fh.trainer.can_reopen = False
    ex = Executor(fh.host)
    res = ex.apply(Action(primitive="block.read_ahead_kb", target="nvme0n1", value=2048, reason="t"))
    assert fh.trainer.reopened == [] and any("cannot reopen" in n for n in res.notes)
    assert ex.in_force(res.change_id or 0) is True  # nothing to wait for


def test_readahead_is_in_force_once_the_loaders_reopened_their_files(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    fh.trainer.deferred.add("reopen_files")
    ex = Executor(fh.host)
    res = ex.apply(Action(primitive="block.read_ahead_kb", target="nvme0n1", value=2048, reason="t"))
    assert res.status == "applied" and any("next epoch" in n for n in res.notes)
    assert ex.in_force(res.change_id or 0) is False
    fh.trainer.land()
    assert ex.in_force(res.change_id or 0) is True
    # No hook attached: nothing to reopen through, in force at once.
    ex = Executor(Host(fh.fs))
    res = ex.apply(Action(primitive="block.read_ahead_kb", target="vdb", value=2048, reason="t"))
    assert ex.in_force(res.change_id or 0) is True


# -- trainer primitives need a hook for the job ----------------------------------------------


def test_loader_primitives_need_a_hook_for_that_job(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    p = get("loader.workers")
    assert p is not None
    assert not p.available(Host(fh.fs), "resnet").ok
    assert not p.available(fh.host, "bert").ok
    narrow = FakeTrainer({"resnet": {"loader.prefetch_factor": 2}})
    av = p.available(Host(fh.fs, trainer=narrow), "resnet")
    assert not av.ok and "cannot set loader.workers" in av.reason
    knobs = read_knobs(fh.fs, jobs=["resnet", "bert"], trainer=fh.trainer)
    assert knobs["loader.workers@resnet"] == 4 and "loader.workers@bert" not in knobs


def test_loader_workers_beyond_online_cpus_and_affinity_off_line_are_refused(tmp_path: Path) -> None:
    fh = fake_host(tmp_path, cpus=4)
    ex = Executor(fh.host)
    r1 = ex.apply(Action(primitive="loader.workers", target="resnet", value=8, reason="t"))
    assert r1.status == "refused" and "4 CPUs online" in r1.reason
    r2 = ex.apply(Action(primitive="loader.cpu_affinity", target="resnet", value="2-5", reason="t"))
    assert r2.status == "refused" and "not online" in r2.reason


def test_affinity_read_back_compares_cpu_sets_not_spelling(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    fh.trainer.state["resnet"]["loader.cpu_affinity"] = "0,1,2,3"
    p = get("loader.cpu_affinity")
    assert p is not None and p.read(fh.host, "resnet") == "0-3"


def test_block_target_names_cannot_escape_sysfs(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    p = get("block.read_ahead_kb")
    assert p is not None
    assert not p.available(fh.host, "../../etc").ok
    assert not p.available(fh.host, "sdz").ok
    assert p.locations(fh.host, "nvme0n1") == [Loc("file", "/sys/block/nvme0n1/queue/read_ahead_kb")]


def test_min_free_kbytes_is_capped_by_memory(tmp_path: Path) -> None:
    fh = fake_host(tmp_path)
    fh.fs.path("/proc/meminfo").write_text("MemTotal:        2000000 kB\n")
    res = Executor(fh.host).apply(Action(primitive="vm.min_free_kbytes", value=131072, reason="t"))
    assert res.status == "refused" and "of memory" in res.reason
