"""The LLM proposer on a queue-driven fake model: narrowing, validation, fallbacks and their counts."""

from __future__ import annotations

import json
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from agent.llm.backend import Completion
from agent.llm.fake import FakeModel
from agent.proposers.base import Proposer
from agent.proposers.llm import LLMProposer, LLMStats, ModelFailure
from agent.proposers.narrow import decision_schema, options, policy_hints
from agent.proposers.rules import RuleProposer, load_policies
from primitives.catalog import for_cause, proposal_schema
from tests.llm_helpers import diagnosis, healthy, reply, report

FULL = Draft202012Validator(proposal_schema())
REASON = "background writeback starts earlier and flushes in pieces"


def rules() -> RuleProposer:
    return RuleProposer(load_policies([]))


def proposer(model: FakeModel | None, **kw: Any) -> LLMProposer:
    return LLMProposer(model, rules(), **kw)


def test_is_a_proposer() -> None:
    assert isinstance(proposer(FakeModel()), Proposer)


def test_valid_choice_is_used_with_its_figures() -> None:
    act = {"primitive": "vm.dirty_background_ratio", "value": 1, "reason": REASON}
    model = FakeModel.of(reply([act]))
    p = proposer(model)
    d = p.decide(report(), diagnosis())
    assert d.source == "llm", d.why
    [a] = d.proposal.actions
    assert (a.primitive, a.target, a.value) == ("vm.dirty_background_ratio", None, 1)
    assert a.reason.startswith("writeback_burst (0.82): vm.dirty_background_ratio 10 -> 1: ")
    assert FULL.is_valid(d.proposal.model_dump(mode="json"))
    assert p.stats.llm_used == 1 and p.stats.decisions == 1
    assert p.last_tokens > 0 and p.stats.prompt_tokens > 0
    # The model was asked under the narrowed schema, at temperature-free settings of the proposer.
    call = model.calls[0]
    assert call.schema == decision_schema(options(report(), diagnosis()))
    assert call.timeout_s == 10.0


def test_valid_noop_is_used() -> None:
    p = proposer(FakeModel.of(reply(noop="the writeback is already handled by the operator")))
    d = p.decide(report(), diagnosis())
    assert d.source == "llm"
    assert not d.proposal.actions and d.proposal.noop_reason


def test_schema_narrowed_to_top_causes_plus_noop() -> None:
    opts = options(report(), diagnosis())
    allowed = {p.id for p in for_cause("writeback_burst")}
    assert opts and {o.primitive.id for o in opts} <= allowed
    schema = decision_schema(opts)
    acting, noop = schema["oneOf"]
    ids = {a["properties"]["primitive"]["const"] for a in acting["properties"]["actions"]["items"]["oneOf"]}
    assert ids == {o.primitive.id for o in opts}
    assert noop["properties"]["actions"] == {"const": []}
    # 0 bytes means the ratio is in force: the bytes knobs are no step away and are not offered.
    assert "vm.dirty_background_bytes" not in ids and "vm.dirty_bytes" not in ids


def test_values_are_one_step_from_now_inside_bounds() -> None:
    for o in options(report(), diagnosis()):
        for v in o.values:
            assert v != o.current
            if o.primitive.value.kind == "int":
                assert isinstance(v, int) and isinstance(o.current, int)
                assert o.primitive.value.min <= v <= o.primitive.value.max  # type: ignore[union-attr]
                assert o.primitive.step is None or o.primitive.step.allows(o.current, v)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "not JSON"),
        (
            reply([{"primitive": "vm.dirty_background_ratio", "value": 100, "reason": REASON}]),
            "decision schema",
        ),
        (
            reply([{"primitive": "vm.dirty_background_ratio", "value": 7, "reason": REASON}]),
            "decision schema",
        ),
        (reply([{"primitive": "vm.swappiness", "value": 20, "reason": REASON}]), "decision schema"),
        (reply([{"primitive": "vm.dirty_background_ratio", "value": 1, "reason": "abc"}]), "decision schema"),
        (
            reply([{"primitive": "vm.dirty_background_ratio", "value": 1, "reason": "a" * 121}]),
            "decision schema",
        ),
        (
            reply(
                [{"primitive": "vm.dirty_background_ratio", "value": 1, "reason": "set it to 1 now please"}]
            ),
            "decision",
        ),
        (reply([]), "decision schema"),
        (json.dumps({"actions": [], "noop_reason": "fine as is, nothing", "extra": 1}), "decision schema"),
    ],
)
def test_invalid_output_falls_back_with_the_reason(text: str, problem: str) -> None:
    p = proposer(FakeModel.of(text))
    d = p.decide(report(), diagnosis())
    assert d.source == "rules"
    assert problem in d.why
    assert d.proposal == rules().propose(report(), diagnosis())
    assert p.stats.fallback_invalid == 1 and p.stats.llm_used == 0


def test_bounds_checked_even_when_the_narrowed_schema_is_bypassed() -> None:
    """llama.cpp grammars do not enforce minimum/maximum: the checks after decoding must."""
    from agent.proposers.validate import check

    opts = options(report(), diagnosis())
    loose: dict[str, Any] = {}
    bad = reply([{"primitive": "vm.dirty_background_ratio", "value": 51, "reason": REASON}])
    assert "50" in check(bad, loose, opts).problem  # outside 1..50
    far = reply([{"primitive": "vm.dirty_background_ratio", "value": 50, "reason": REASON}])
    assert "step" in check(far, loose, opts).problem
    twice = reply([{"primitive": "vm.dirty_background_ratio", "value": 1, "reason": REASON}] * 2)
    assert "twice" in check(twice, loose, opts).problem
    foreign = reply([{"primitive": "vm.swappiness", "value": 20, "reason": REASON}])
    assert "not among" in check(foreign, loose, opts).problem
    made_up = reply([{"primitive": "vm.turbo", "value": 1, "reason": REASON}])
    assert "unknown primitive" in check(made_up, loose, opts).problem


@pytest.mark.parametrize(
    "done",
    [
        Completion("", "timeout", prompt_tokens=900, seconds=10.2),
        # Finished, but only after the timeout: late output is never used.
        Completion(reply(noop="nothing to change at all here"), "stop", seconds=10.5),
    ],
)
def test_timeout_falls_back_and_is_counted(done: Completion) -> None:
    p = proposer(FakeModel.of(done))
    d = p.decide(report(), diagnosis())
    assert d.source == "rules" and "timeout" in d.why
    assert p.stats.fallback_timeout == 1


def test_timeout_is_configurable() -> None:
    model = FakeModel.of(Completion(reply(noop="nothing to change at all here"), "stop", seconds=0.4))
    p = proposer(model, timeout_s=0.25)
    assert p.decide(report(), diagnosis()).source == "rules"
    assert model.calls[0].timeout_s == 0.25


def test_backend_error_falls_back() -> None:
    p = proposer(FakeModel.of(Completion("", "error", error="connection refused")))
    d = p.decide(report(), diagnosis())
    assert d.source == "rules" and "connection refused" in d.why and p.stats.fallback_error == 1


def test_no_model_means_rules_with_the_reason() -> None:
    p = proposer(None, unavailable="llama-cpp-python is not installed")
    d = p.decide(report(), diagnosis())
    assert d.source == "rules" and "not installed" in d.why
    assert p.stats.fallback_unavailable == 1


def test_nothing_to_decide_calls_no_model() -> None:
    model = FakeModel()  # an empty queue raises if called
    p = proposer(model)
    d = p.decide(report(), healthy())
    assert d.source == "rules" and not model.calls
    assert p.stats.no_choice == 1
    weak = diagnosis(confidence=0.2)
    assert p.decide(report(), weak).source == "rules" and not model.calls


def test_stats_shared_across_proposers() -> None:
    shared = LLMStats()
    for _ in range(2):
        act = {"primitive": "vm.dirty_background_ratio", "value": 1, "reason": REASON}
        proposer(FakeModel.of(reply([act])), stats=shared).propose(report(), diagnosis())
    assert shared.llm_used == 2 and shared.decisions == 2


def test_prompt_leads_with_the_constant_rules_for_the_prefix_cache() -> None:
    model = FakeModel.of(
        reply(noop="nothing to change at all here"), reply(noop="still nothing to change here")
    )
    p = proposer(model)
    p.propose(report(), diagnosis())
    p.propose(report(), diagnosis())
    first, second = model.calls
    assert first.messages[0] == second.messages[0]
    assert first.messages[0]["role"] == "system" and "writeback_burst" not in first.messages[0]["content"]
    user = first.messages[1]["content"]
    assert "cause writeback_burst 82%: mem.dirty_mib = 5233, baseline 200, threshold 1000" in user
    assert "- vm.dirty_background_ratio: 10 -> 1 or 40" in user


def test_policy_hints_keep_the_policys_primitives_and_directions() -> None:
    hints = policy_hints(load_policies([]))
    opts = options(report(), diagnosis(), hints)
    assert [(o.primitive.id, o.values) for o in opts] == [
        ("vm.dirty_background_ratio", (1,)),
        ("vm.dirty_ratio", (5,)),
    ]
    # Rules in both directions (readahead up for small requests, down for large) keep both.
    ra = options(report(), diagnosis("readahead_mismatch"), hints)
    assert [(o.primitive.id, o.values) for o in ra] == [("block.read_ahead_kb", (128, 16384))]
    # A cause the policy has no rule for offers the catalogue's primitives for it, either way.
    cpu = {o.knob: o.values for o in options(report(), diagnosis("cpu_contention"), {})}
    assert cpu == {"loader.workers@sdxl": (0, 32)}
    # A cause the policy only explains (a no-op rule, no action rule) offers nothing.
    assert options(report(), diagnosis("cpu_contention"), hints) == []
    # Of a cause's primitives, only those this host has are offered: storage latency's deeper
    # prefetch needs the loader's settings (none here), its larger window a device (nvme0n1).
    storage = options(report(), diagnosis("storage_latency"), hints)
    assert [(o.knob, o.values) for o in storage] == [("block.read_ahead_kb@nvme0n1", (16384,))]


def test_policy_hints_reach_the_model_through_the_proposer() -> None:
    model = FakeModel.of(reply(noop="nothing to change at all here"))
    p = LLMProposer(model, rules(), hints=policy_hints(load_policies([])))
    p.propose(report(), diagnosis())
    user = model.calls[0].messages[1]["content"]
    assert "- vm.dirty_background_ratio: 10 -> 1\n" in user and "block.nr_requests" not in user


def test_build_without_a_model_falls_back_in_one_line() -> None:
    from pathlib import Path

    from agent.llm.loader import LLMSettings
    from agent.proposers.llm import build

    fallback = rules()
    p, note = build(LLMSettings(model=Path("/nonexistent/x.gguf")), fallback=fallback)
    assert p.model is None and p.fallback is fallback and "not found" in note and "\n" not in note
    assert p.hints and ("writeback_burst", "vm.dirty_ratio") in p.hints
    assert p.decide(report(), diagnosis()).source == "rules"


@pytest.mark.parametrize(
    ("model", "failure"),
    [
        (None, ModelFailure.UNAVAILABLE),
        (FakeModel.of(Completion("", "timeout", seconds=10.2)), ModelFailure.TIMEOUT),
        (FakeModel.of(Completion("", "error", error="connection refused")), ModelFailure.ERROR),
        (FakeModel.of(reply([])), ModelFailure.INVALID),
        (FakeModel.of(reply(noop="the writeback is already handled by the operator")), None),
    ],
)
def test_each_fallback_says_what_failed_as_a_type(
    model: FakeModel | None, failure: ModelFailure | None
) -> None:
    d = proposer(model).decide(report(), diagnosis())
    assert d.failure == failure
    assert (d.source == "llm") == (failure is None)


def test_nothing_to_choose_is_no_model_failure() -> None:
    d = proposer(FakeModel()).decide(report(), healthy())
    assert d.source == "rules" and d.failure is None
