"""The embedded SmolLM2-135M for real (marked `llm`), and llama.cpp's grammar converter on our schemas."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from agent.grounding import check_grounded
from agent.llm.chat import Conversation
from agent.llm.loader import LLMSettings, embedded_model_path, open_model
from agent.llm.render import DEFAULT_BUDGET, render_report
from agent.proposers.llm import LLMProposer
from agent.proposers.narrow import decision_schema, options, policy_hints
from agent.proposers.rules import RuleProposer, load_policies
from evals.harness import load_all
from primitives.catalog import proposal_schema
from tests.llm_helpers import eight_gpu

BUNDLED = Path(__file__).resolve().parents[1] / "evals" / "incidents"
WB = BUNDLED / "checkpoint-writeback-burst"


def _cases() -> list[tuple[object, object]]:
    from agent.diagnosis.engine import diagnose

    incidents, _ = load_all([BUNDLED])
    out = []
    for inc in incidents:
        w = inc.window()
        r = inc.report(w)
        out.append((r, diagnose(w, r, inc.question)))
    return out


def test_every_decision_schema_of_the_suite_compiles_to_a_grammar() -> None:
    """No model is loaded: only llama.cpp's JSON-schema-to-grammar conversion is exercised."""
    pytest.importorskip("llama_cpp")
    from llama_cpp.llama_grammar import LlamaGrammar

    hints = policy_hints(load_policies([]))
    seen = 0
    for r, d in _cases():
        opts = options(r, d, hints)  # type: ignore[arg-type]
        LlamaGrammar.from_json_schema(json.dumps(decision_schema(opts)), verbose=False)
        seen += bool(opts)
    assert seen >= 10


@pytest.fixture(scope="module")
def model() -> object:
    pytest.importorskip("llama_cpp")
    path, why = embedded_model_path()
    if path is None:
        pytest.skip(why)
    opened = open_model(LLMSettings())
    assert opened.model is not None, opened.why_not
    return opened.model


@pytest.mark.llm
def test_embedded_model_loads_once_and_counts_tokens(model: object) -> None:
    assert open_model(LLMSettings()).model is model  # once per process
    r, d = eight_gpu()
    text = render_report(r, d, count=model.count_tokens)  # type: ignore[attr-defined]
    assert model.count_tokens(text) <= DEFAULT_BUDGET  # type: ignore[attr-defined]
    assert "diagnosis, ranked" in text


@pytest.mark.llm
def test_embedded_model_decides_under_the_schema(model: object) -> None:
    from agent.diagnosis.engine import diagnose
    from core.incident import load_incident

    inc = load_incident(WB)
    w = inc.window()
    r = inc.report(w)
    d = diagnose(w, r, inc.question)
    policies = load_policies([])
    # A generous timeout: a shared test machine may be slow; the bench measures speed.
    p = LLMProposer(model, RuleProposer(policies), timeout_s=120, hints=policy_hints(policies))  # type: ignore[arg-type]
    decision = p.decide(r, d)
    # The model ranks complete options by their likelihood: it reads, it does not generate.
    assert decision.completion is not None and decision.completion.prompt_tokens > 0
    assert decision.margin is not None and decision.margin >= 0
    assert Draft202012Validator(proposal_schema()).is_valid(decision.proposal.model_dump(mode="json"))
    if decision.source == "llm":
        knobs = {o.knob for o in options(r, d, policy_hints(policies))}
        assert all(a.knob in knobs for a in decision.proposal.actions)
    else:
        assert decision.why
    # The second decision on the same report reuses the kept prefix.
    again = p.decide(r, d)
    assert again.completion is not None and again.completion.cached_tokens > 0


@pytest.mark.llm
def test_embedded_model_answers_grounded(model: object) -> None:
    from agent.diagnosis.engine import diagnose
    from core.incident import load_incident

    inc = load_incident(WB)
    w = inc.window()
    r = inc.report(w)
    d = diagnose(w, r, inc.question)
    c = Conversation(model, r, d, timeout_s=120)  # type: ignore[arg-type]
    a = c.ask("Why are my GPUs idle?")
    assert check_grounded(a.text, r, d) == []
    assert "writeback_burst" in a.text and "Figures:" in a.text
