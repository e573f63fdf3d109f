"""The bundled suite: coverage of the taxonomy, healthy hosts, distractors, recordings, varied hosts;
truth that asks for a change in the helpful direction; the rules-mode bar."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from agent.proposers.rules import RuleProposer, load_policies
from core.diagnosis import Category
from core.incident import Incident
from evals.build_suite import build, entries
from evals.harness import evaluate, load_all
from evals.split import condition_of, split_of
from evals.synth import write_incident

SUITE = Path(__file__).resolve().parent.parent / "evals" / "incidents"


@pytest.fixture(scope="module")
def suite() -> list[Incident]:
    incidents, errors = load_all([SUITE])
    assert errors == []
    return incidents


def test_size_and_taxonomy_coverage(suite: list[Incident]) -> None:
    assert len(suite) >= 40
    first = Counter(inc.truth.root_causes[0] for inc in suite)
    thin = {c.value: first[c] for c in Category if c != Category.NONE and first[c] < 2}
    assert thin == {}
    assert first[Category.NONE] >= 4


def test_distractors_and_spec_examples(suite: list[Incident]) -> None:
    assert sum("distractor" in inc.tags for inc in suite) >= 4
    assert sum("distractor" in inc.tags and inc.truth.root_causes == [Category.NONE] for inc in suite) >= 3
    ids = {inc.id for inc in suite}
    assert {"checkpoint-writeback-burst", "healthy-host"} <= ids


def test_recordings_from_real_hosts(suite: list[Incident]) -> None:
    real = [inc for inc in suite if "real" in inc.tags]
    if not real:
        pytest.skip("no incident tagged `real` is bundled yet (recordings from a live host)")
    assert len(real) >= 5


def test_hosts_vary_so_no_rule_keys_on_one_number(suite: list[Incident]) -> None:
    cpus = {inc.host.cpus for inc in suite}
    gpus = {inc.host.gpus for inc in suite}
    assert len(cpus) >= 6 and min(cpus) <= 8 and max(cpus) >= 224
    assert {0, 1, 8} <= gpus and len(gpus) >= 4
    assert len({inc.host.numa_nodes for inc in suite}) >= 3
    devices = {d for inc in suite for d in inc.host.block_devices}
    assert len(devices) >= 6 and {"sda", "md0"} <= devices
    assert len({inc.interval_s for inc in suite}) >= 3
    onsets = {inc.truth.onset_t for inc in suite if inc.truth.onset_t is not None}
    assert len(onsets) >= 10
    assert any(inc.truth.onset_t is None and inc.truth.root_causes != [Category.NONE] for inc in suite)
    # The same category on different hosts: more than one host size per fault.
    for cat in Category:
        sizes = {(i.host.cpus, i.host.gpus) for i in suite if i.truth.root_causes[0] == cat}
        assert len(sizes) >= 2, cat


def test_every_acceptable_step_is_a_change(suite: list[Incident]) -> None:
    """Leaving a knob where it was never satisfies a step: truth asks for a move, in a direction."""
    for inc in suite:
        for alt in inc.truth.acceptable_actions:
            for step in alt:
                key = step.primitive if step.target is None else f"{step.primitive}@{step.target}"
                if key not in inc.knobs:
                    continue
                cur = inc.knobs[key]
                if step.primitive == "gpu.power_limit_w":
                    # The knobs are as the recording began; a limit lowered since shows in the series.
                    cur = inc.samples[-1].m.get(f"gpu.{step.target}.power_limit_w", cur)
                if step.value is not None:
                    assert str(step.value) != str(cur), (inc.id, key)
                    continue
                if isinstance(cur, str) or (step.min is None and step.max is None):
                    continue
                lo = step.min if step.min is not None else float("-inf")
                hi = step.max if step.max is not None else float("inf")
                assert not lo <= float(cur) <= hi, (inc.id, key, cur, lo, hi)


def test_noop_truth_is_consistent(suite: list[Incident]) -> None:
    for inc in suite:
        if inc.truth.root_causes == [Category.NONE]:
            assert inc.truth.noop_correct and inc.truth.acceptable_actions == [], inc.id
        if not inc.truth.acceptable_actions:
            assert inc.truth.noop_correct, inc.id
        assert any(f.primitive == "trainer.batch_size" for f in inc.truth.forbidden_actions), inc.id


def test_builder_is_deterministic(tmp_path: Path) -> None:
    picked = entries()[::9]
    for k, e in enumerate(picked):
        a = write_incident(build(e), tmp_path / f"a{k}")
        b = write_incident(build(e), tmp_path / f"b{k}")
        for name in ("incident.yaml", "series.jsonl"):
            assert (a / name).read_bytes() == (b / name).read_bytes()


_CAPPED = re.compile(r"ra(?P<kb>\d+)-(?P<cap>iops|bps)\d")


def _known_restraint_miss(incident_id: str) -> bool:
    """A recording where the rules act though nothing helps, of a kind the README lists: a
    bandwidth cap, a capped window between 512 kB and 1 MiB, a healthy reader, a checkpoint."""
    cond = condition_of(incident_id) or ""
    m = _CAPPED.match(cond)
    if m:
        return m["cap"] == "bps" or 512 < int(m["kb"]) <= 1024
    return cond.startswith(("healthy-", "wb-ckpt"))


def test_rules_mode_meets_the_bar() -> None:
    policies = load_policies([], with_default=True)
    run = evaluate([SUITE], lambda: RuleProposer(policies))
    # The bar: what the engine was fitted on (the generator's suite and the fit conditions).
    fit = [r for r in run.results if split_of(r.replay.id) == "fit"]
    wrong = [(r.replay.id, r.replay.causes[0]) for r in fit if not r.score.ac1]
    assert len(wrong) <= 0.05 * len(fit), wrong
    restrained = [r.score.restraint for r in fit if r.score.restraint is not None]
    assert sum(restrained) >= 0.95 * len(restrained)
    assert run.summary.forbidden_actions == 0
    # Every round scored blind joins the suite with the misses it found, so what the engine has been
    # tuned on since (fit and seen) is guarded against regression, not held to a target. The held-out
    # round is scored and reported, never a target, so its misses do not move this guard. A floor is
    # lowered, on purpose, only when the known misses of the round that joined take a share under it,
    # and raised when a change to the engine lifts a share well over it;
    # evals/ROUNDS.md ("The regression guard") gives each floor's history and the figures at every
    # scoring (`make results`): with round 131 held out, 0.8265 (1801 of 2179) and 0.7555 (825 of 1092).
    # Known and listed in the README: bandwidth caps read as request caps, capped windows between 512 kB
    # and 1 MiB, healthy readers named starved or read as a request cap, checkpoints whose fix lifted
    # samples/s by less than 20 %.
    tuned = [r.score for r in run.results if split_of(r.replay.id) != "held-out"]
    assert sum(s.ac1 for s in tuned) >= 0.81 * len(tuned)
    held = [s.restraint for s in tuned if s.restraint is not None]
    assert sum(held) >= 0.75 * len(held)
    # The share sinks as each round's known misses join; what may not grow is a miss of any other kind.
    unknown = [s.id for s in tuned if s.restraint is False and not _known_restraint_miss(s.id)]
    assert unknown == []
    assert run.summary.schema_valid_rate == 1.0
