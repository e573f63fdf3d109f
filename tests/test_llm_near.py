"""The tolerance under which a worked example counts among a decision's nearest, and its fit."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agent.proposers import rank
from agent.proposers.examples import Example, Key, neighbourhood, similarity
from agent.proposers.llm import contested
from evals.margin import Row
from evals.near import figures, fit, kept
from evals.split import ROUNDS, round_of

TOP = "readahead_mismatch"
RAISE = "block.read_ahead_kb@vdb = 2048"


def _ex(id_: str, answer: str, confidence: float) -> Example:
    key = Key(
        causes=[TOP], metrics=["io.<dev>.read_iops"], knobs=["block.read_ahead_kb"], confidence=confidence
    )
    return Example(id=id_, key=key, case=f"c {id_}", answer=answer)


def _row(id_: str, llm_ok: bool, rules_ok: bool, margin: float | None = 2.0) -> Row:
    return Row(id_, "fit", margin, llm_ok, rules_ok, False, False, False)


def test_a_disagreeing_case_a_little_less_similar_counts_within_the_tolerance() -> None:
    # Three cases left alone as near as can be; one raised, 0.06 less similar (its confidence).
    pool = [_ex(i, rank.NOOP, 0.5) for i in "abc"] + [_ex("d", RAISE, 0.56)]
    key = pool[0].key
    assert round(similarity(key, pool[0].key) - similarity(key, pool[3].key), 6) == 0.06
    assert not contested(neighbourhood(pool, key, 3, near=0.0), [TOP])
    assert not contested(neighbourhood(pool, key, 3, near=0.05), [TOP])
    assert contested(neighbourhood(pool, key, 3, near=0.06), [TOP])


@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=8), st.floats(0.0, 0.5))
def test_a_wider_tolerance_only_hands_decisions_to_the_rules(confs: list[float], step: float) -> None:
    pool = [_ex(f"e{i}", RAISE if i % 2 else rank.NOOP, c) for i, c in enumerate(confs)]
    pool.append(_ex("x", rank.NOOP, 0.5))
    rs = [_row("x", True, False)]
    key = {"x": pool[-1].key}
    for near in (0.0, 0.1, 0.3):
        assert kept(rs, pool, near + step, key) <= kept(rs, pool, near, key)


def test_fit_takes_the_smallest_tolerance_that_does_best() -> None:
    # x: the model is wrong where a raised case lies 0.1 less similar; y: the model is right and its
    # nearest cases agree at any tolerance. From 0.1 on, x goes to the rules, who are right.
    pool = [_ex(i, rank.NOOP, 0.5) for i in "abc"] + [_ex("d", RAISE, 0.6), _ex("x", rank.NOOP, 0.5)]
    other = Key(causes=["writeback_burst"], metrics=[], knobs=[])
    pool += [Example(id=f"w{i}", key=other, case=f"c w{i}", answer=rank.NOOP) for i in range(3)]
    pool.append(Example(id="y", key=other, case="c y", answer=rank.NOOP))
    rs = [_row("x", False, True), _row("y", True, False), _row("z", False, False, margin=None)]
    key = {e.id: e.key for e in pool}
    assert kept(rs, pool, 0.0, key) == {"x", "y"}
    assert kept(rs, pool, 0.1, key) == {"y"}
    assert figures(rs, kept(rs, pool, 0.0, key)).actions == 1 / 3
    assert figures(rs, kept(rs, pool, 0.1, key)).actions == 2 / 3
    assert fit({t: figures(rs, kept(rs, pool, t, key)) for t in (0.0, 0.05, 0.1, 0.15, 0.2)}) == 0.1


def test_rounds_are_numbered_as_drawn() -> None:
    first, last = sorted(ROUNDS[0])[0], sorted(ROUNDS[-1])[0]
    assert round_of(f"real-{first}-1") == 1 and round_of(f"real-{last}-2") == len(ROUNDS)
    assert round_of("checkpoint-writeback-burst") is None
