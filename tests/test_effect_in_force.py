"""Changes are judged from when they act, not from when they were requested.

A simulated job on a simulated clock: its throughput follows the loader workers its
loader runs with and the readahead its loaders opened their files with, both of which
change only at the end of an epoch (the trainer's safe point); memory pressure can be
made to rise with readahead. The loop is wired as every app wires it.
"""

from __future__ import annotations

import json
from pathlib import Path

from agent.loop import ControlLoop, LoopConfig
from agent.proposers.rules import RuleProposer, load_policies
from agent.wiring import Feed, build_loop
from core.diagnosis import Category, Cause, Diagnosis
from core.proposal import Action
from core.report import HealthReport, HostInfo, JobInfo, build_report
from core.sample import Sample
from core.window import Window
from guardrails.effect import EffectConfig, Judgement, Kpi, compare
from primitives.catalog import read_knobs
from primitives.host import Host
from tests.fakes.fake_kernel import FakeKernelFS, FakeTrainer, make_root

RA = "/sys/block/loop0/queue/read_ahead_kb"
SPS = "trainer.job.samples_per_s"
SETTLE, WINDOW = 2.0, 20.0


class SlowJob:
    """A job with long epochs: loader changes and reopened files take effect at `epoch_ends`."""

    def __init__(self, root: Path, *, hook: bool = True, pressure_per_mib: float = 0.0) -> None:
        self.t = 0.0
        self.k = 0
        self.fs: FakeKernelFS = make_root(root, devices=("loop0",), cpus=8)
        self.trainer = FakeTrainer({"job": {"loader.workers": 4, "loader.prefetch_factor": 2}})
        self.trainer.deferred |= {"loader.workers", "loader.prefetch_factor", "reopen_files"}
        self.hook = hook
        self.epoch_ends: list[float] = []
        self.opened_with = self.sysfs_ra()  # the readahead the loaders' open files carry
        self.pressure_per_mib = pressure_per_mib  # psi.mem.full_avg10 points per MiB of readahead

    def sysfs_ra(self) -> int:
        return int(self.fs.read_value(RA))

    def clock(self) -> float:
        return self.t

    def host(self) -> Host:
        return Host(self.fs, trainer=self.trainer if self.hook else None)

    def sample(self) -> Sample:
        self.t += 1.0
        self.k += 1
        if self.epoch_ends and self.t >= self.epoch_ends[0]:
            self.epoch_ends.pop(0)
            self.trainer.land()  # new workers, which open their files again
            self.opened_with = self.sysfs_ra()
        if not self.hook:
            self.opened_with = self.sysfs_ra()  # nothing to wait for in the simulation either
        workers = int(self.trainer.state["job"]["loader.workers"])
        sps = 100.0 * (3.0 if workers >= 8 else 1.0) * (2.0 if self.opened_with >= 1024 else 1.0)
        wiggle = (self.k % 5 - 2) * 0.02
        full = self.pressure_per_mib * self.opened_with / 1024
        return Sample(
            t=self.t,
            m={
                SPS: sps * (1 + wiggle),
                "trainer.job.data_wait_frac": 0.5,
                "psi.mem.full_avg10": full + (self.k % 3) * 0.05,
                "psi.mem.some_avg10": 2 * full + (self.k % 3) * 0.1,
            },
        )

    def report(self, window: Window) -> HealthReport:
        return build_report(
            window,
            HostInfo(cpus=8, block_devices=["loop0"]),
            knobs=dict(read_knobs(self.fs, ["loop0"])),
            jobs=[JobInfo(name="job", loader_workers=4)],
        )

    def diagnose(self, window: Window, report: HealthReport) -> Diagnosis:
        # Nothing for the rules to do: only the injected change moves a knob.
        return Diagnosis(causes=[Cause(category=Category.NONE, confidence=0.9, summary="quiet")])


def make_loop(tmp_path: Path, job: SlowJob, **effect: float) -> ControlLoop:
    feed = Feed(
        sample=job.sample,
        report=job.report,
        host=job.host(),
        clock=job.clock,
        diagnose=job.diagnose,
        simulated=True,
    )
    config = LoopConfig(
        review_every_s=5, job="job", effect=EffectConfig(window_s=WINDOW, settle_s=SETTLE, **effect)
    )
    return build_loop(
        config,
        feed,
        mode="auto",
        primary=None,
        rules=RuleProposer(load_policies([])),
        state=tmp_path / "state",
    )


def run_until_verdict(loop: ControlLoop, seconds: int) -> Judgement:
    for _ in range(seconds):
        loop.step()
        if loop.verdicts:
            break
    [j] = loop.verdicts
    return j


def verdict_record(tmp_path: Path) -> dict[str, object]:
    lines = (tmp_path / "state/audit.jsonl").read_text().splitlines()
    [rec] = [r for r in map(json.loads, lines) if r["trigger"] == "verdict"]
    return rec  # type: ignore[no-any-return]


def inject(loop: ControlLoop, primitive: str, target: str, value: int) -> None:
    d = loop.inject(Action(primitive=primitive, target=target, value=value, reason="test"), approved_by="t")
    assert d.decision == "approve", d


def verdict_from_the_request(loop: ControlLoop, requested: float) -> str:
    """What judging from the request time would have said, on the same samples."""
    kpi = Kpi(SPS, (SPS,), True)
    before = kpi.series(loop.window, requested - WINDOW, requested)
    after = kpi.series(loop.window, requested + SETTLE, requested + SETTLE + WINDOW)
    return compare(before, after, True, loop.config.effect).verdict


def test_a_loader_change_is_judged_after_the_safe_point_that_put_it_in_force(tmp_path: Path) -> None:
    job = SlowJob(tmp_path / "root")
    loop = make_loop(tmp_path, job)
    for _ in range(30):
        loop.step()
    inject(loop, "loader.workers", "job", 8)
    requested = job.t
    assert loop.executor.in_force(loop.executor.managed[0].id) is False  # accepted for the next epoch
    job.epoch_ends = [requested + 60]  # the epoch in progress ends a minute later
    j = run_until_verdict(loop, 150)
    assert j.requested_at == requested and j.in_force_at == requested + 60
    assert j.after_from == requested + 60 + SETTLE
    assert j.verdict == "beneficial" and j.keep
    assert j.comparison.before is not None and j.comparison.before < 110  # the old workers' rate
    assert job.trainer.state["job"]["loader.workers"] == 8
    # Judged from the request, the same run would have compared the old workers with themselves.
    assert verdict_from_the_request(loop, requested) == "neutral"
    assert verdict_record(tmp_path)["in_force_after_s"] == 60
    assert any("in force after 60 s" in e.text for e in loop.events)


def test_a_change_never_in_force_is_reverted_at_the_deadline_and_not_quarantined(tmp_path: Path) -> None:
    job = SlowJob(tmp_path / "root")
    loop = make_loop(tmp_path, job, in_force_deadline_s=120)
    for _ in range(30):
        loop.step()
    inject(loop, "loader.prefetch_factor", "job", 4)
    requested = job.t
    for _ in range(119):  # no epoch ends: the request waits in the hook
        loop.step()
        assert not loop.verdicts
    j = run_until_verdict(loop, 5)
    assert job.t == requested + 120
    assert j.verdict == "never_in_force" and not j.keep and j.in_force_at is None
    assert "120 s" in j.comparison.why
    rec = verdict_record(tmp_path)
    assert rec["verdict"] == "never_in_force" and rec["rollback"]["status"] == "reverted"  # type: ignore[index]
    # Reverted through the executor: the pending request is cancelled, the journal closed.
    assert job.trainer.waiting == {} and job.trainer.state["job"]["loader.prefetch_factor"] == 2
    assert loop.executor.managed == [] and loop.executor.journal.open_changes() == []
    assert "loader.prefetch_factor" not in loop.gate.quarantined


def test_readahead_waits_for_the_loaders_to_reopen_their_files(tmp_path: Path) -> None:
    job = SlowJob(tmp_path / "root")
    loop = make_loop(tmp_path, job)
    for _ in range(30):
        loop.step()
    inject(loop, "block.read_ahead_kb", "loop0", 2048)
    requested = job.t
    assert job.sysfs_ra() == 2048 and job.trainer.reopened == ["job"]
    job.epoch_ends = [requested + 45]
    j = run_until_verdict(loop, 120)
    assert j.in_force_after_s == 45 and j.after_from == requested + 45 + SETTLE
    assert j.verdict == "beneficial" and j.keep
    assert verdict_from_the_request(loop, requested) == "neutral"


def test_sysfs_changes_are_judged_from_the_request(tmp_path: Path) -> None:
    job = SlowJob(tmp_path / "root", hook=False)
    loop = make_loop(tmp_path, job)
    for _ in range(30):
        loop.step()
    inject(loop, "block.read_ahead_kb", "loop0", 2048)
    requested = job.t
    j = run_until_verdict(loop, 40)
    assert j.in_force_at == requested and j.after_from == requested + SETTLE
    assert job.t == requested + SETTLE + WINDOW  # judged as soon as its window has passed
    assert j.verdict == "beneficial" and j.keep and j.vetoed_by is None


def test_a_guard_vetoes_a_change_whose_kpi_improved_while_memory_pressure_rose(tmp_path: Path) -> None:
    job = SlowJob(tmp_path / "root", hook=False, pressure_per_mib=5.0)  # 2 MiB readahead: +10 points
    loop = make_loop(tmp_path, job)
    for _ in range(30):
        loop.step()
    inject(loop, "block.read_ahead_kb", "loop0", 2048)
    j = run_until_verdict(loop, 40)
    assert j.comparison.after is not None and j.comparison.before is not None
    assert j.comparison.after > 1.5 * j.comparison.before  # the KPI liked it
    assert j.verdict == "harmful" and not j.keep
    assert j.vetoed_by is not None and j.vetoed_by.metric == "psi.mem.full_avg10"
    assert j.vetoed_by.before < 1 and j.vetoed_by.after > 10
    assert "psi.mem.full_avg10" in j.comparison.why
    # Rolled back and quarantined as any harmful change.
    assert job.sysfs_ra() == 128
    assert verdict_record(tmp_path)["rollback"]["status"] == "reverted"  # type: ignore[index]
    assert "block.read_ahead_kb" in loop.gate.quarantined


def test_the_before_window_ends_at_the_request_not_when_the_change_is_in_force() -> None:
    """A readahead cut reaches every file opened after it, well before the last reader reopens its
    own: the stretch between request and in force must not count as "before"."""
    from guardrails.effect import EffectTracker

    cfg = EffectConfig(window_s=10, settle_s=1, min_samples=5)
    w = Window(horizon_s=600)
    for t in range(1, 61):
        # 100 before the request at t=20, 50 once it starts acting (t > 20), in force at t=30.
        w.add(Sample(t=float(t), m={SPS: (100.0 if t <= 20 else 50.0) + (t % 3)}))
    tr = EffectTracker(cfg)
    tr.start(1, Action(primitive="block.read_ahead_kb", target="loop0", value=16, reason="t"),
             None, Kpi(SPS, (SPS,), True), w, 20.0, in_force=False)  # fmt: skip
    tr.took_effect(1, 30.0)
    [j] = tr.due(w, 60.0)
    assert j.verdict == "harmful" and j.comparison.before is not None and j.comparison.before > 99
