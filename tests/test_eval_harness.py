"""The eval harness: replay through the pipeline, invalid incidents counted and named, the baseline."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent.proposers.rules import RuleProposer, load_policies
from core.diagnosis import Category, Diagnosis
from core.incident import Incident, load_incident
from core.proposal import Action, Proposal
from core.report import HealthReport
from evals.harness import (
    cited_metrics,
    evaluate,
    incident_dirs,
    load_all,
    most_frequent_cause,
    replay,
    schema_valid,
)

BUNDLED = Path(__file__).resolve().parent.parent / "evals" / "incidents"
EXAMPLES = ("checkpoint-writeback-burst", "healthy-host")


def _rules() -> RuleProposer:
    return RuleProposer(load_policies([], with_default=True))


def _edit(folder: Path, **changes: Any) -> None:
    data = yaml.safe_load((folder / "incident.yaml").read_text())
    data.update(changes)
    (folder / "incident.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.fixture
def tiny_suite(tmp_path: Path) -> Path:
    """The two spec examples and one incident whose interval is not a number."""
    suite = tmp_path / "suite"
    for name in EXAMPLES:
        shutil.copytree(BUNDLED / name, suite / name)
    shutil.copytree(BUNDLED / "healthy-host", suite / "broken")
    _edit(suite / "broken", id="broken", interval_s="fast")
    return suite


def test_tiny_suite_counts_and_names_the_invalid_incident(tiny_suite: Path) -> None:
    errors: list[str] = []
    run = evaluate([tiny_suite], _rules, on_error=errors.append)
    assert [r.replay.id for r in run.results] == list(EXAMPLES)
    assert run.summary.incidents == 2 and run.summary.invalid == 1
    assert run.baseline.summary.invalid == 1
    assert len(run.errors) == 1 and errors == run.errors
    line = run.errors[0]
    assert "\n" not in line
    assert str(tiny_suite / "broken" / "incident.yaml") in line and "interval_s" in line


def test_spec_examples_are_answered_and_scored(tiny_suite: Path) -> None:
    run = evaluate([tiny_suite], _rules)
    wb, healthy = run.results
    assert wb.truth == ["writeback_burst"] and wb.replay.causes[0] == "writeback_burst"
    assert wb.score.ac1 and wb.score.action_ok and wb.score.forbidden == 0
    assert wb.replay.actions and all(a.primitive.startswith("vm.dirty") for a in wb.replay.actions)
    assert "mem.dirty_mib" in wb.replay.evidence and wb.score.evidence_recall is not None
    assert healthy.replay.causes[0] == "none" and not healthy.replay.actions
    assert healthy.score.restraint is True
    assert run.summary.schema_valid_rate == 1.0 and run.summary.tokens == 0
    assert all(r.replay.latency_ms > 0 for r in run.results)


def test_replay_is_deterministic_but_for_latency() -> None:
    inc = load_incident(BUNDLED / "checkpoint-writeback-burst")
    a, b = replay(inc, _rules()), replay(inc, _rules())
    assert a.model_copy(update={"latency_ms": 0.0}) == b.model_copy(update={"latency_ms": 0.0})


def test_folder_name_title_and_truth_do_not_reach_the_pipeline(tmp_path: Path) -> None:
    src = BUNDLED / "checkpoint-writeback-burst"
    disguised = tmp_path / "healthy-no-fault"
    shutil.copytree(src, disguised)
    truth = {"root_causes": ["none"], "noop_correct": True, "acceptable_actions": []}
    _edit(disguised, id="healthy-no-fault", title="Healthy host, nothing wrong", tags=["none"], truth=truth)
    original, renamed = (replay(load_incident(p), _rules()) for p in (src, disguised))
    assert renamed.causes == original.causes
    assert renamed.actions == original.actions
    assert renamed.answer == original.answer


class _Reckless:
    """A proposer that always changes the batch size: forbidden everywhere."""

    name = "reckless"
    last_tokens = 17

    def propose(self, report: HealthReport, diagnosis: Diagnosis) -> Proposal:
        act = Action(primitive="trainer.batch_size", target="sdxl", value=16, reason="smaller batches")
        return Proposal(actions=[act])


def test_any_proposer_is_scored_forbidden_actions_and_tokens(tiny_suite: Path) -> None:
    run = evaluate([tiny_suite], _Reckless)
    assert run.proposer == "reckless"
    assert run.summary.forbidden_actions == 2
    assert run.summary.restraint == 0.0 and run.summary.action_match_rate == 0.0
    assert run.summary.tokens == 34
    # Its causes come from the same diagnosis as ever.
    assert run.summary.ac1 == 1.0


def test_schema_validity_is_checked_against_the_catalogue() -> None:
    ok = Proposal(actions=[Action(primitive="vm.dirty_background_ratio", value=5, reason="earlier")])
    assert schema_valid(ok)
    assert schema_valid(Proposal.noop("healthy"))
    untargeted = Proposal(actions=[Action(primitive="loader.workers", value=4, reason="more")])
    out_of_bounds = Proposal(actions=[Action(primitive="vm.dirty_ratio", value=500, reason="more")])
    unknown = Proposal(actions=[Action(primitive="vm.make_it_fast", value=1, reason="why not")])
    assert not schema_valid(untargeted)
    assert not schema_valid(out_of_bounds)
    assert not schema_valid(unknown)


def test_cited_metrics_are_those_the_answer_shows() -> None:
    inc = load_incident(BUNDLED / "checkpoint-writeback-burst")
    r = replay(inc, _rules())
    assert r.evidence
    assert all(m in r.answer for m in r.evidence)
    # A name of the diagnosis that the text leaves out is not cited, nor is a longer name's prefix.
    from core.diagnosis import Cause, Evidence

    d = Diagnosis(
        causes=[
            Cause(
                category=Category.NONE,
                confidence=0.9,
                summary="fine",
                evidence=[
                    Evidence(metric="gpu.0.util_pct", observed=95.0, rule="kpi"),
                    Evidence(metric="gpu.0.power_w", observed=300.0, rule="kpi"),
                    Evidence(metric="io.vdb.lat_p99", observed=1.0, rule="prefix only"),
                    Evidence(metric="loader.workers", observed=64.0, rule="a knob, not a metric"),
                ],
            )
        ]
    )
    text = "gpu.0.util_pct averaged 95; io.vdb.lat_p99_us was 3; loader.workers was 64."
    assert cited_metrics(text, d) == ["gpu.0.util_pct"]


def test_most_frequent_cause_breaks_ties_in_taxonomy_order(tiny_suite: Path) -> None:
    incidents, _ = load_all([tiny_suite])
    # One writeback burst, one healthy host: writeback_burst comes first in the taxonomy.
    assert most_frequent_cause(incidents) == Category.WRITEBACK_BURST
    healthy = [i for i in incidents if i.id == "healthy-host"]
    assert most_frequent_cause(healthy * 2 + incidents) == Category.NONE
    assert most_frequent_cause([]) == Category.NONE


def test_baseline_is_constant_and_takes_no_action(tiny_suite: Path) -> None:
    run = evaluate([tiny_suite], _rules)
    base = run.baseline
    assert base.cause == "writeback_burst"
    assert base.summary.ac1 == 0.5 and base.summary.forbidden_actions == 0
    # Doing nothing is right on the healthy host only.
    assert base.summary.action_match_rate == 0.5 and base.summary.restraint == 1.0
    assert base.summary.evidence_recall == 0.0


def test_a_dir_is_one_incident_or_a_folder_of_them(tiny_suite: Path, tmp_path: Path) -> None:
    one = tiny_suite / "healthy-host"
    assert incident_dirs(one) == [one]
    (tiny_suite / "__pycache__").mkdir()
    (tiny_suite / ".hidden").mkdir()
    assert [p.name for p in incident_dirs(tiny_suite)] == ["broken", *EXAMPLES]
    # The same incident named twice is replayed once.
    incidents, errors = load_all([one, tiny_suite])
    assert [i.id for i in incidents] == list(EXAMPLES)[::-1] and len(errors) == 1
    # A folder of incidents with an empty sub-folder: that one is invalid, named, and the rest go on.
    (tiny_suite / "empty").mkdir()
    incidents, errors = load_all([tiny_suite])
    assert len(incidents) == 2 and any("empty" in e for e in errors)


class _Crashing:
    """A proposer with a bug that shows only on a healthy host."""

    name = "crashing"

    def propose(self, report: HealthReport, diagnosis: Diagnosis) -> Proposal:
        if diagnosis.top.category == Category.NONE:
            raise KeyError("no such rule")
        return _rules().propose(report, diagnosis)


def test_a_crash_fails_its_incident_and_the_run_goes_on(tiny_suite: Path) -> None:
    lines: list[str] = []
    run = evaluate([tiny_suite], _Crashing, on_error=lines.append)
    assert run.summary.incidents == 2 and run.summary.invalid == 1
    (failure,) = run.failures
    assert failure.startswith("healthy-host: the pipeline failed: KeyError") and failure in lines
    wb, healthy = run.results
    assert wb.score.ac1 and wb.score.action_ok
    s = healthy.score
    # No credit for the silence of a crash.
    assert not (s.ac1 or s.action_ok or s.schema_valid) and s.restraint is False
    assert run.to_json()["failures"] == [failure]


def test_a_loader_bug_refuses_its_incident_and_the_run_goes_on(
    tiny_suite: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evals.harness as harness

    def flaky(folder: Path) -> Incident:
        if folder.name == "healthy-host":
            raise KeyError("x" * 10_000)
        return load_incident(folder)

    monkeypatch.setattr(harness, "load_incident", flaky)
    incidents, errors = load_all([tiny_suite])
    assert [i.id for i in incidents] == ["checkpoint-writeback-burst"] and len(errors) == 2
    (bug,) = [e for e in errors if "the loader failed" in e]
    assert "healthy-host: the loader failed: KeyError" in bug and len(bug) <= 300 and "\n" not in bug


def test_a_fifo_header_makes_its_folder_one_refused_incident(tmp_path: Path) -> None:
    folder = tmp_path / "fifo-header"
    folder.mkdir()
    os.mkfifo(folder / "incident.yaml")
    assert incident_dirs(folder) == [folder]
    incidents, errors = load_all([folder])
    assert incidents == [] and errors == [f"{folder}/incident.yaml: not a regular file (a FIFO)"]
