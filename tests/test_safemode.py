"""The safe-mode ladder: LLM -> rules after K failures -> observe only on eBPF faults or CPU overuse."""

from __future__ import annotations

import threading

from agent.proposers.ladder import LadderProposer
from core.diagnosis import Category, Cause, Diagnosis
from core.proposal import Action, Proposal
from core.report import HealthReport, HostInfo, WindowInfo
from guardrails.safemode import Level, SafeMode, SafeModeConfig

REPORT = HealthReport(
    host=HostInfo(cpus=2), window=WindowInfo(start=0, end=1, samples=2, interval_s=1), metrics={}
)
DIAG = Diagnosis(causes=[Cause(category=Category.NONE, confidence=1.0, summary="fine")])
RULES = Proposal.noop("rules say nothing")


def level(s: SafeMode) -> Level:
    """Read through a call: mypy would otherwise keep the level narrowed across calls that change it."""
    return s.level


class Fixed:
    def __init__(self, name: str, result: Proposal | Exception, block: threading.Event | None = None) -> None:
        self.name = name
        self.result = result
        self.block = block
        self.calls = 0

    def propose(self, report: HealthReport, diagnosis: Diagnosis) -> Proposal:
        self.calls += 1
        if self.block is not None:
            self.block.wait(5)
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


def test_llm_is_used_while_it_works() -> None:
    llm_prop = Proposal(actions=[Action(primitive="vm.swappiness", value=30, reason="llm")])
    safe = SafeMode()
    ladder = LadderProposer(Fixed("llm", llm_prop), Fixed("rules", RULES), safe)
    assert ladder.propose(REPORT, DIAG) == llm_prop and ladder.last_used == "llm"
    assert level(safe) == Level.LLM


def test_k_llm_errors_in_a_row_step_down_to_rules() -> None:
    changes: list[tuple[Level, str]] = []
    safe = SafeMode(SafeModeConfig(llm_errors=2), on_change=lambda lv, why: changes.append((lv, why)))
    llm = Fixed("llm", ValueError("bad json"))
    ladder = LadderProposer(llm, Fixed("rules", RULES), safe)
    assert ladder.propose(REPORT, DIAG) == RULES and level(safe) == Level.LLM
    assert ladder.propose(REPORT, DIAG) == RULES and level(safe) == Level.RULES
    ladder.propose(REPORT, DIAG)
    assert llm.calls == 2 and ladder.last_used == "rules"  # no third try
    assert changes and changes[0][0] == Level.RULES and "bad json" in changes[0][1]


def test_a_timeout_counts_as_an_llm_failure() -> None:
    gate = threading.Event()
    safe = SafeMode(SafeModeConfig(llm_errors=1, llm_timeout_s=0.1))
    ladder = LadderProposer(Fixed("llm", RULES, block=gate), Fixed("rules", RULES), safe)
    ladder.propose(REPORT, DIAG)
    gate.set()
    assert level(safe) == Level.RULES and "no answer" in safe.reason
    ladder.close()


def test_bpf_faults_and_cpu_overuse_go_to_observe_only() -> None:
    safe = SafeMode(SafeModeConfig(bpf_faults=2), start=Level.RULES)
    safe.bpf_fault("collect failed")
    assert level(safe) == Level.RULES
    safe.bpf_fault("collect failed")
    assert level(safe) == Level.OBSERVE
    ladder = LadderProposer(None, Fixed("rules", RULES), safe)
    p = ladder.propose(REPORT, DIAG)
    assert not p.actions and "observe only" in (p.noop_reason or "")

    now, cpu = [0.0], [0.0]
    safe = SafeMode(
        SafeModeConfig(cpu_budget=0.2, cpu_window_s=10), clock=lambda: now[0], cpu_s=lambda: cpu[0]
    )
    for _ in range(20):
        now[0] += 1
        cpu[0] += 0.1  # 0.1 cores: under budget
        safe.check_cpu()
    assert level(safe) == Level.LLM
    for _ in range(20):
        now[0] += 1
        cpu[0] += 0.5
        safe.check_cpu()
    assert level(safe) == Level.OBSERVE and "budget" in safe.reason


def test_the_ladder_never_climbs_back() -> None:
    safe = SafeMode(start=Level.OBSERVE)
    assert not safe.escalate(Level.RULES, "x") and level(safe) == Level.OBSERVE


def test_the_ladder_counts_typed_model_failures_and_not_an_empty_choice() -> None:
    """Through StrictLLM a model failure is an exception of its own kind, whatever its reason says;
    a decision with no option to choose is answered by the rules and is not a failure."""
    from agent.llm.backend import Completion
    from agent.llm.fake import FakeModel
    from agent.proposers.ladder import ModelFailed, StrictLLM
    from agent.proposers.llm import LLMProposer, ModelFailure
    from agent.proposers.rules import RuleProposer, load_policies
    from tests.llm_helpers import diagnosis, healthy, report

    rules = RuleProposer(load_policies([]))
    broken = StrictLLM(LLMProposer(FakeModel.of(Completion("", "error", error="boom")), rules))
    try:
        broken.propose(report(), diagnosis())
        raise AssertionError("a model error must raise")
    except ModelFailed as e:
        assert e.kind is ModelFailure.ERROR and "boom" in str(e)

    safe = SafeMode(SafeModeConfig(llm_errors=2))
    idle = StrictLLM(LLMProposer(FakeModel(), rules))  # an empty queue: any call would fail the test
    ladder = LadderProposer(idle, rules, safe)
    for _ in range(3):
        assert ladder.propose(report(), healthy()) == rules.propose(report(), healthy())
    assert level(safe) == Level.LLM and ladder.last_used == "llm"

    failing = FakeModel.of(Completion("", "timeout", seconds=30.0), Completion("", "timeout", seconds=30.0))
    ladder = LadderProposer(StrictLLM(LLMProposer(failing, rules)), rules, safe)
    ladder.propose(report(), diagnosis())
    ladder.propose(report(), diagnosis())
    assert level(safe) == Level.RULES and "timeout" in safe.reason
    ladder.close()
