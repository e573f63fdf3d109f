"""The control loop on a simulated host and clock: diagnose, propose, gate, apply, judge, restore."""

from __future__ import annotations

import json
from pathlib import Path

from agent.loop import ControlLoop, LoopConfig, PidLoop
from agent.proposers.rules import RuleProposer, load_policies
from agent.wiring import Feed, build_loop
from core.diagnosis import Category, Cause, Diagnosis
from core.proposal import Action
from core.report import HealthReport, HostInfo, JobInfo, build_report
from core.sample import Sample
from core.window import Window
from guardrails.audit import REGISTRY
from guardrails.effect import EffectConfig
from guardrails.filejournal import FileJournal
from guardrails.gate import Gate, GateConfig, Mode
from guardrails.pid import PidConfig
from guardrails.safemode import Level
from primitives.catalog import read_knobs
from primitives.host import Host
from tests.fakes.fake_kernel import FakeKernelFS, make_root

RA = "/sys/block/loop0/queue/read_ahead_kb"


class Sim:
    """A trainer whose throughput follows the data device's readahead, on a simulated clock."""

    def __init__(self, root: Path) -> None:
        self.t = 0.0
        self.fs: FakeKernelFS = make_root(root, devices=("loop0",))
        self.k = 0

    def clock(self) -> float:
        return self.t

    def ra(self) -> int:
        return int(self.fs.read_value(RA))

    def sample(self) -> Sample:
        self.t += 1.0
        self.k += 1
        ra = self.ra()
        wiggle = (self.k % 5 - 2) * 0.02  # a little deterministic noise
        sps = (100.0 if ra < 1024 else 340.0) if ra >= 64 else 30.0
        wait = 0.7 if ra < 1024 else 0.04
        return Sample(
            t=self.t,
            m={
                "trainer.job.samples_per_s": sps * (1 + wiggle),
                "trainer.job.data_wait_frac": wait,
                "io.loop0.avg_req_kb": float(min(ra, 1024)),
                "io.loop0.read_iops": 200.0,
            },
        )

    def report(self, window: Window) -> HealthReport:
        return build_report(
            window,
            HostInfo(cpus=2, block_devices=["loop0"]),
            knobs=dict(read_knobs(self.fs, ["loop0"])),
            jobs=[JobInfo(name="job", loader_workers=2)],
        )

    def feed(self) -> Feed:
        """What a loop on this simulation watches, on its clock, with actions on its fake root."""
        return Feed(
            sample=self.sample,
            report=self.report,
            host=Host(self.fs),
            clock=self.clock,
            diagnose=self.diagnose,
            simulated=True,
        )

    def diagnose(self, window: Window, report: HealthReport) -> Diagnosis:
        if self.ra() < 1024:
            return Diagnosis(
                causes=[
                    Cause(
                        category=Category.READAHEAD_MISMATCH,
                        confidence=0.8,
                        summary="small reads",
                        target="loop0",
                    )
                ]
            )
        return Diagnosis(causes=[Cause(category=Category.NONE, confidence=0.9, summary="healthy")])


def make_loop(tmp_path: Path, mode: Mode = "auto", **cfg: object) -> tuple[Sim, ControlLoop, FileJournal]:
    """The loop as every app wires it, on the simulation's feed, with its state in tmp_path/state."""
    sim = Sim(tmp_path / "root")
    feed = sim.feed()
    config = LoopConfig.model_validate(
        {"review_every_s": 5, "job": "job", "effect": EffectConfig(window_s=20, settle_s=2), **cfg}
    )
    loop = build_loop(
        config, feed, mode=mode, primary=None, rules=RuleProposer(load_policies([])), state=tmp_path / "state"
    )
    assert isinstance(loop.executor.journal, FileJournal)
    return sim, loop, loop.executor.journal


def _audit(tmp_path: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in (tmp_path / "state/audit.jsonl").read_text().splitlines()]


def test_closed_loop_fixes_readahead_after_consensus_and_keeps_it(tmp_path: Path) -> None:
    sim, loop, journal = make_loop(tmp_path)
    before = (
        REGISTRY.get_sample_value(
            "idletune_verdicts_total", {"primitive": "block.read_ahead_kb", "verdict": "beneficial"}
        )
        or 0.0
    )
    loop.run(60, sleep=lambda s: None)
    assert sim.ra() == 2048  # the default policy's goal, one step (x32 allowed) from 128
    rules = [a.get("rule") for a in _audit(tmp_path) if a["trigger"] == "diagnosis"]
    # Tier 1: two reviews wait for consensus, the third applies.
    assert rules[:3] == ["tier1.consensus", "tier1.consensus", "tier1.consensus"]
    [verdict] = [a for a in _audit(tmp_path) if a["trigger"] == "verdict"]
    assert verdict["verdict"] == "beneficial" and "rollback" not in verdict
    assert float(verdict["kpi_after"]) / float(verdict["kpi_before"]) > 3  # type: ignore[arg-type]
    after = REGISTRY.get_sample_value(
        "idletune_verdicts_total", {"primitive": "block.read_ahead_kb", "verdict": "beneficial"}
    )
    assert after == before + 1
    # Shutdown restores what the agent found.
    loop.shutdown()
    assert sim.ra() == 128 and journal.open_changes() == []


def test_recommend_mode_applies_nothing(tmp_path: Path) -> None:
    sim, loop, _ = make_loop(tmp_path, mode="recommend")
    loop.run(40, sleep=lambda s: None)
    assert sim.ra() == 128
    rules = [a.get("rule") for a in _audit(tmp_path)]
    assert set(rules) == {"tier1.consensus", "mode.recommend"}
    assert rules.count("mode.recommend") >= 4  # it keeps recommending, and applies nothing


def test_observe_mode_only_diagnoses(tmp_path: Path) -> None:
    sim, loop, _ = make_loop(tmp_path, mode="observe")
    loop.run(30, sleep=lambda s: None)
    assert sim.ra() == 128 and not (tmp_path / "state/audit.jsonl").exists()
    assert any(e.kind == "diagnosis" for e in loop.events)


def test_a_harmful_change_is_rolled_back_within_one_window_and_quarantined(tmp_path: Path) -> None:
    sim, loop, _ = make_loop(tmp_path)
    sim.fs.write_text(RA, "2048")  # a healthy host: the job streams at full speed
    loop.run(25, sleep=lambda s: None)
    d = loop.inject(
        Action(primitive="block.read_ahead_kb", target="loop0", value=16, reason="harm"), approved_by="test"
    )
    assert d.decision == "approve" and sim.ra() == 16
    loop.run(25, sleep=lambda s: None)
    assert sim.ra() == 2048
    [v] = loop.verdicts
    assert v.verdict == "harmful" and not v.keep
    rb = next(a for a in _audit(tmp_path) if a["trigger"] == "verdict")
    assert rb["rollback"]["status"] == "reverted"  # type: ignore[index]
    assert "block.read_ahead_kb" in loop.gate.quarantined
    # The quarantine is in the journal: a gate built by a restarted agent keeps it.
    since = FileJournal(tmp_path / "state").quarantines()["block.read_ahead_kb"]
    later = Gate(GateConfig(), clock=lambda: since + 60, quarantines={"block.read_ahead_kb": since})
    assert "block.read_ahead_kb" in later.quarantined
    [applied] = [a for a in _audit(tmp_path) if a["trigger"] == "manual"]
    assert float(rb["t"]) - float(applied["t"]) <= 2 + 20 + 1  # type: ignore[arg-type]  # settle + window + a tick


def test_an_operator_change_is_respected(tmp_path: Path) -> None:
    sim, loop, journal = make_loop(tmp_path)
    loop.run(20, sleep=lambda s: None)
    assert sim.ra() == 2048
    sim.fs.write_text(RA, "512")  # the operator's own choice
    loop.run(30, sleep=lambda s: None)
    assert sim.ra() == 512
    assert any(e.kind == "operator" for e in loop.events)
    assert loop.executor.managed == [] and journal.open_changes() == []
    assert "block.read_ahead_kb@loop0" in loop.gate.operator_knobs
    loop.shutdown()
    assert sim.ra() == 512  # never written back


def test_safe_mode_observe_restores_originals(tmp_path: Path) -> None:
    sim, loop, _ = make_loop(tmp_path)
    loop.run(20, sleep=lambda s: None)
    assert sim.ra() == 2048
    loop.safe.escalate(Level.OBSERVE, "test: too many eBPF faults")
    loop.step()
    assert sim.ra() == 128
    loop.run(30, sleep=lambda s: None)
    assert sim.ra() == 128


def test_keep_on_exit_leaves_changes_and_hands_them_to_the_journal(tmp_path: Path) -> None:
    sim, loop, journal = make_loop(tmp_path, keep_on_exit=True)
    loop.run(20, sleep=lambda s: None)
    loop.shutdown()
    assert sim.ra() == 2048
    [entry] = journal.open_entries()
    assert entry.owner is None  # kept on purpose: no later start treats it as a crash's leftover


def test_pid_drives_a_continuous_knob(tmp_path: Path) -> None:
    pid = PidLoop(
        primitive="vm.dirty_ratio",
        metric="trainer.job.data_wait_frac",
        pid=PidConfig(lo=2, hi=60, max_step=10, kp=0.2, ki=0.0, direction=1),
    )
    sim, loop, _ = make_loop(tmp_path, pid=[pid])
    loop.gate.config.consensus = 1
    loop.run(6, sleep=lambda s: None)
    # The readahead rule acted too: a PID change is judged on its own, not as the cause's one change.
    assert sim.ra() == 2048
    dr = int(sim.fs.read_value("/proc/sys/vm/dirty_ratio"))
    # Data wait 0.7 is far above the 0.05 setpoint: the knob goes up by one bounded step.
    assert 20 < dr <= 30
