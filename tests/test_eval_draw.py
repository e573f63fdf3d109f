"""The held-out round draw (evals/draw.py): reproducible from the round's number, one condition per
family, none recorded before, each rendered as a matrix entry that builds its scenario."""

from __future__ import annotations

from evals.draw import FAMILIES, draw, main, settings, written_down
from evals.matrix import CONDITIONS, Condition, _c


def _evaluated(source: str) -> Condition:
    out: Condition = eval(source.strip().rstrip(","), {"_c": _c})  # the module's own rendering, read back
    return out


def test_a_round_is_drawn_alike_every_time_and_differs_between_rounds() -> None:
    a, b, c = draw(1000), draw(1000), draw(1001)
    assert [d.name for d in a] == [d.name for d in b]
    assert [d.name for d in a] != [d.name for d in c]


def test_the_rounds_drawn_by_the_module_draw_alike_once_written_down() -> None:
    rounds = written_down()
    # From round 59 on every round was drawn by this module, each written down with no gap.
    drawn = sorted(n for n in rounds if n >= 59)
    assert drawn == list(range(59, drawn[-1] + 1)) and drawn[-1] >= 71
    for n in drawn:
        assert {d.name for d in draw(n)} == rounds[n]


def test_every_drawn_condition_is_new_and_builds() -> None:
    recorded = {c.name for c in CONDITIONS}
    recorded_settings = {settings(c) for c in CONDITIONS}
    for n in (1000, 1001, 1002):
        drawn = draw(n)
        assert len(drawn) == len(FAMILIES)
        assert len({d.name for d in drawn}) == len(drawn)
        for d in drawn:
            cond = _evaluated(d.source())
            assert cond.name == d.name and cond.name not in recorded
            assert settings(cond) not in recorded_settings
            sc = cond.built()
            assert sc.noise and all(f"noise-{n}" in cond.tags for n in sc.noise)
            assert not ("dirty" in sc.noise and sc.raw), d.name  # dirty pages need a file system
            assert cond.scenario in {"readahead", "starvation", "contention", "reclaim", "writeback"}


def test_the_command_refuses_a_missing_round_number(capsys) -> None:  # type: ignore[no-untyped-def]
    assert main([]) == 2
    assert "usage" in capsys.readouterr().err


def test_a_family_whose_settings_are_used_up_draws_from_its_wider_ranges(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """Every starved loader of the usual ranges is written down (by round 104): a later round draws
    one at heavier preprocessing, new; a family with no wider ranges left says so in one line."""
    import evals.draw as D

    later = D.draw(10**6)
    starved = next(d for d in later if d.scenario == "starvation")
    assert any(t in starved.tags for t in ("preprocess-5", "preprocess-6")), starved.name
    assert starved.name not in {c.name for c in CONDITIONS}
    monkeypatch.setattr(D, "WIDER", {})
    monkeypatch.setattr(D, "ATTEMPTS", 200)
    assert D.main(["1000000"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "family 4 of 8 is written down" in err
