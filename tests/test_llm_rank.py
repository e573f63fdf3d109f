"""The ranking LLM proposer on a fake scorer: candidates, choice, margin, abstention, retrieval."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from agent.llm.backend import Scores
from agent.llm.fake import FakeScorer
from agent.proposers import rank
from agent.proposers.examples import Example, Key, key_of, load_examples, nearest
from agent.proposers.llm import LLMProposer, ModelFailure
from agent.proposers.narrow import policy_hints
from agent.proposers.rules import RuleProposer, load_policies
from evals.build_examples import build, render
from evals.harness import evaluate, excluded_for
from evals.split import ROUNDS
from primitives.catalog import get, proposal_schema
from tests.llm_helpers import diagnosis, report

FULL = Draft202012Validator(proposal_schema())
SUITE = Path(__file__).resolve().parent.parent / "evals" / "incidents"


def rules() -> RuleProposer:
    return RuleProposer(load_policies([]))


def ranker(model: FakeScorer, **kw: object) -> LLMProposer:
    r = rules()
    return LLMProposer(model, r, hints=policy_hints(r.rules), **kw)  # type: ignore[arg-type]


def candidates() -> list[rank.Candidate]:
    r = rules()
    dec = rank.decision(report(), diagnosis(), policy_hints(r.rules), r.propose(report(), diagnosis()))
    return dec.candidates


def test_candidates_hold_the_noop_first_and_the_rules_proposal() -> None:
    cands = candidates()
    assert cands[0].text == rank.NOOP and not cands[0].actions
    ruled = [c for c in cands if c.rules]
    want = rules().propose(report(), diagnosis())
    assert [(a.primitive, a.target, a.value) for a in want.actions] == list(ruled[0].actions)
    assert len({c.text for c in cands}) == len(cands)


def test_best_scoring_option_is_taken_with_its_margin() -> None:
    n = len(candidates())
    pick = n - 1
    model = FakeScorer.scoring([-3.0] * pick + [-1.0])
    p = ranker(model)
    d = p.decide(report(), diagnosis())
    assert d.source == "llm" and d.failure is None, d.why
    assert d.margin == 2.0 and p.margin == 2.0 and p.answered_by == "llm"
    [a] = d.proposal.actions
    assert rank.action_text(a.primitive, a.target, a.value) == candidates()[pick].text
    assert FULL.is_valid(d.proposal.model_dump(mode="json"))
    # One scoring call, every candidate scored after the same prompt, which ends at the answer.
    [call] = model.score_calls
    assert call.prefix.endswith("Answer:") and len(call.continuations) == n
    assert p.stats.llm_used == 1 and model.calls == []


def test_noop_chosen_is_an_explicit_noop() -> None:
    p = ranker(FakeScorer.scoring([0.0]))
    d = p.decide(report(), diagnosis())
    assert d.source == "llm" and not d.proposal.actions and d.proposal.noop_reason


def test_small_margin_abstains_to_the_rules_without_a_model_failure() -> None:
    p = ranker(FakeScorer.scoring([-1.0, -1.05]), threshold=0.1)
    d = p.decide(report(), diagnosis())
    assert d.source == "rules" and d.failure is None and "margin" in d.why
    assert d.proposal == rules().propose(report(), diagnosis())
    assert p.stats.abstained == 1 and p.margin is not None and abs(p.margin - 0.05) < 1e-9


def test_timeout_and_error_fall_back_typed() -> None:
    late = Scores((), (), "timeout", seconds=11.0)
    broken = Scores((), (), "error", error="decode failed")
    p = ranker(FakeScorer.scoring(late, broken))
    assert p.decide(report(), diagnosis()).failure is ModelFailure.TIMEOUT
    assert p.decide(report(), diagnosis()).failure is ModelFailure.ERROR
    assert p.stats.fallback_timeout == 1 and p.stats.fallback_error == 1


def test_nothing_to_choose_calls_no_model() -> None:
    model = FakeScorer()
    p = ranker(model)
    d = p.decide(report(), diagnosis("gpu_thermal_throttle"))
    assert d.source == "rules" and d.failure is None and model.score_calls == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.floats(min_value=-50, max_value=0, allow_nan=False), min_size=1, max_size=12))
def test_whatever_the_scores_the_output_validates_inside_the_options(scores: list[float]) -> None:
    p = ranker(FakeScorer.scoring(scores))
    d = p.decide(report(), diagnosis())
    assert FULL.is_valid(d.proposal.model_dump(mode="json"))
    allowed = {c.actions for c in candidates()}
    assert tuple((a.primitive, a.target, a.value) for a in d.proposal.actions) in allowed
    for a in d.proposal.actions:
        prim = get(a.primitive)
        assert prim is not None and prim.proposable and a.primitive != "trainer.batch_size"
        lo, hi = getattr(prim.value, "min", None), getattr(prim.value, "max", None)
        if lo is not None and isinstance(a.value, int):
            assert lo <= a.value <= hi


def _example(id_: str, cause: str, answer: str) -> Example:
    return Example(id=id_, key=Key(causes=[cause], metrics=[], knobs=[]), case=f"c {id_}", answer=answer)


def test_retrieval_is_deterministic_and_never_returns_the_excluded() -> None:
    pool = [_example(f"e{i}", "writeback_burst" if i % 2 else "none", "no change") for i in range(10)]
    key = key_of(diagnosis(), ["writeback_burst"], {})
    got = nearest(pool, key, 3, lambda i: i == "e1")
    assert [e.id for e in got] == ["e3", "e5", "e7"]
    assert got == nearest(list(reversed(pool)), key, 3, lambda i: i == "e1")


def test_an_incident_never_retrieves_itself_its_condition_or_the_held_out() -> None:
    excluded = excluded_for("real-ra128-iops30-1")
    assert excluded("real-ra128-iops30-1") and excluded("real-ra128-iops30-2")
    held = sorted(ROUNDS[-1])[0]
    assert excluded(f"real-{held}-1")  # held out: never an example
    assert not excluded("real-ra128-iops200-1") and not excluded("syn-numa-remote-96c-8gpu-s503")
    examples, why = load_examples()
    assert examples and not why
    for ex in examples[:40]:
        key = ex.key
        assert all(not excluded_for(ex.id)(e.id) for e in nearest(examples, key, 3, excluded_for(ex.id)))
        assert ex.id not in {e.id for e in nearest(examples, key, 3, excluded_for(ex.id))}


def test_bundled_examples_file_is_current() -> None:
    from agent.proposers.examples import EXAMPLES_FILE

    assert EXAMPLES_FILE.read_text(encoding="utf-8") == render(build([SUITE]))


def test_eval_json_says_who_answered_and_the_margin() -> None:
    model = FakeScorer.scoring(*([[0.0, -2.0]] * 3))
    folders = [SUITE / "checkpoint-writeback-burst", SUITE / "healthy-host"]
    run = evaluate(folders, lambda: ranker(model))
    doc = run.to_json()
    by = {i["id"]: (i["answered_by"], i["margin"]) for i in doc["incidents"]}
    assert by["checkpoint-writeback-burst"] == ("llm", 2.0)
    assert by["healthy-host"] == ("rules", None)  # nothing to choose: the rules answered


def test_nearest_cases_that_disagree_on_acting_leave_the_decision_to_the_rules() -> None:
    top = diagnosis().top.category.value
    split = [_example("a", top, rank.NOOP), _example("b", top, "block.read_ahead_kb@vdb = 1024")]
    model = FakeScorer.scoring([-3.0, -1.0])
    p = ranker(model, examples=split)
    d = p.decide(report(), diagnosis())
    assert d.source == "rules" and d.failure is None and "disagree" in d.why
    assert d.proposal == rules().propose(report(), diagnosis())
    assert model.score_calls == [] and p.stats.contested == 1 and p.stats.abstained == 0
    # Cases that agree, or that disagree only under another top cause, still go to the model.
    agreed = [_example("a", top, rank.NOOP), _example("b", top, rank.NOOP), _example("c", "none", "x = 1")]
    model = FakeScorer.scoring([-3.0, -1.0])
    p = ranker(model, examples=agreed)
    assert p.decide(report(), diagnosis()).source == "llm" and len(model.score_calls) == 1
    assert p.stats.contested == 0


def test_a_disagreeing_case_tied_with_the_shown_ones_counts_though_not_shown() -> None:
    top = diagnosis().top.category.value
    pool = [_example(i, top, rank.NOOP) for i in "abc"] + [
        _example("d", top, "block.read_ahead_kb@vdb = 1024")
    ]
    model = FakeScorer.scoring([-3.0, -1.0])
    p = ranker(model, examples=pool)
    key = pool[0].key
    assert [e.id for e in nearest(pool, key, 3)] == ["a", "b", "c"]  # ties go by id: d is not shown
    d = p.decide(report(), diagnosis())
    assert d.source == "rules" and "disagree" in d.why and model.score_calls == []
