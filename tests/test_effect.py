"""Effect tracking: medians, noise and a minimum effect decide; the tracker judges after its window."""

from __future__ import annotations

import random

import pytest
from pydantic import ValidationError

from core.proposal import Action
from core.sample import Sample
from core.window import Window
from guardrails.effect import EffectConfig, EffectTracker, Guard, Judgement, Kpi, compare, pick_kpi

CFG = EffectConfig()


def noisy(mean: float, sd: float, n: int, seed: int) -> list[float]:
    rng = random.Random(seed)
    return [rng.gauss(mean, sd) for _ in range(n)]


def test_a_clear_gain_is_beneficial_and_a_clear_loss_harmful() -> None:
    before = noisy(100, 5, 30, 1)
    assert compare(before, noisy(300, 5, 30, 2), True, CFG).verdict == "beneficial"
    assert compare(before, noisy(40, 5, 30, 3), True, CFG).verdict == "harmful"
    # Lower is better (data wait): a drop is the gain.
    assert compare([0.6] * 10, [0.1] * 10, False, CFG).verdict == "beneficial"


def test_noise_and_small_effects_are_neutral() -> None:
    before = noisy(100, 30, 30, 4)
    assert compare(before, noisy(108, 30, 30, 5), True, CFG).verdict == "neutral"  # inside the noise
    quiet = noisy(100, 0.1, 30, 6)
    assert compare(quiet, noisy(105, 0.1, 30, 7), True, CFG).verdict == "neutral"  # under 10%


def test_one_outlier_does_not_decide() -> None:
    before = [100.0] * 20
    after = [100.0] * 19 + [5000.0]
    assert compare(before, after, True, CFG).verdict == "neutral"


def test_too_few_samples_is_unknown() -> None:
    assert compare([1.0, 2.0], [3.0] * 10, True, CFG).verdict == "unknown"


def test_pick_kpi_prefers_throughput_then_gpu_then_wait() -> None:
    names = {"trainer.a.samples_per_s", "trainer.a.data_wait_frac", "gpu.0.util_pct", "gpu.1.util_pct"}
    k = pick_kpi(names, job="a")
    assert k is not None and k.label == "trainer.a.samples_per_s" and k.higher_is_better
    k = pick_kpi(names - {"trainer.a.samples_per_s"})
    assert k is not None and k.names == ("gpu.0.util_pct", "gpu.1.util_pct")
    assert k.value({"gpu.0.util_pct": 20, "gpu.1.util_pct": 40}) == 30
    k = pick_kpi({"io.sda.lat_p99_us"}, device="sda")
    assert k is not None and not k.higher_is_better
    assert pick_kpi({"cpu.util_pct"}) is None


def test_tracker_judges_after_settle_plus_window_and_reverts_harm() -> None:
    w = Window(horizon_s=600)
    kpi = Kpi("trainer.a.samples_per_s", ("trainer.a.samples_per_s",), True)
    for t in range(0, 30):
        w.add(Sample(t=float(t), m={"trainer.a.samples_per_s": 100.0 + (t % 3)}))
    tr = EffectTracker(EffectConfig(window_s=10, settle_s=2))
    act = Action(primitive="block.read_ahead_kb", target="loop0", value=16, reason="test")
    tr.start(1, act, "readahead_mismatch", kpi, w, 29.5)
    for t in range(30, 41):
        w.add(Sample(t=float(t), m={"trainer.a.samples_per_s": 20.0 + (t % 3)}))
        assert tr.due(w, float(t)) == []
    w.add(Sample(t=41.0, m={"trainer.a.samples_per_s": 21.0}))
    [j] = tr.due(w, 41.5)
    assert j.verdict == "harmful" and not j.keep and j.comparison.before is not None
    assert not tr.busy()


def test_neutral_keeps_or_reverts_as_configured() -> None:
    w = Window()
    kpi = Kpi("k", ("k",), True)
    for t in range(60):
        w.add(Sample(t=float(t), m={"k": 50.0 + (t % 2)}))
    for policy, keep in (("keep", True), ("revert", False)):
        tr = EffectTracker(EffectConfig(window_s=20, settle_s=0, neutral=policy))
        tr.start(1, Action(primitive="vm.swappiness", value=1, reason="r"), None, kpi, w, 30.0)
        [j] = tr.due(w, 55.0)
        assert j.verdict == "neutral" and j.keep is keep


def _steady(w: Window, t0: int, t1: int, value: float, **extra: float) -> None:
    for t in range(t0, t1):
        w.add(Sample(t=float(t), m={"k": value + (t % 3), **extra}))


def test_a_change_waits_until_in_force_and_its_windows_start_then() -> None:
    w = Window(horizon_s=600)
    kpi = Kpi("k", ("k",), True)
    _steady(w, 0, 70, 100.0)  # requested at 30; the old setting runs until 60
    tr = EffectTracker(EffectConfig(window_s=10, settle_s=2))
    act = Action(primitive="loader.workers", target="a", value=8, reason="r")
    tr.start(1, act, None, kpi, w, 30.0, in_force=False)
    assert [x.change_id for x in tr.waiting()] == [1]
    assert tr.due(w, 69.0) == []  # 30 + 2 + 10 passed long ago: not judged while waiting
    tr.took_effect(1, 60.0)
    assert tr.waiting() == [] and tr.tracked[1].before == [100.0 + (t % 3) for t in range(51, 61)]
    _steady(w, 70, 75, 300.0)
    assert tr.due(w, 71.0) == []  # the after-window is 62..72
    _steady(w, 75, 80, 300.0)
    [j] = tr.due(w, 72.0)
    assert j.requested_at == 30.0 and j.in_force_at == 60.0 and j.after_from == 62.0
    assert j.in_force_after_s == 30.0
    # 62..72 straddles the rate change at 70: median of 7 old and 3 new samples is the old rate.
    assert j.verdict == "neutral"


def test_not_in_force_by_the_deadline_is_never_in_force_and_reverted() -> None:
    w = Window()
    kpi = Kpi("k", ("k",), True)
    _steady(w, 0, 40, 100.0)
    tr = EffectTracker(EffectConfig(in_force_deadline_s=100))
    tr.start(
        7,
        Action(primitive="loader.workers", target="a", value=8, reason="r"),
        "c",
        kpi,
        w,
        10.0,
        in_force=False,
    )
    assert tr.due(w, 109.9) == []
    [j] = tr.due(w, 110.0)
    assert j.verdict == "never_in_force" and not j.keep and j.in_force_at is None and j.cause == "c"
    assert not tr.busy()


def test_guards_match_one_whole_segment_and_need_a_bound() -> None:
    g = Guard(metric="io.*.lat_p99_us", max_rise=100)
    assert g.matches("io.sda.lat_p99_us") and g.matches("io.nvme0n1.lat_p99_us")
    assert not g.matches("io.sda.lat_p50_us") and not g.matches("io.sda.x.lat_p99_us")
    assert Guard(metric="psi.mem.full_avg10", max_rise_rel=0.5).matches("psi.mem.full_avg10")
    with pytest.raises(ValidationError, match="max_rise"):
        Guard(metric="psi.mem.full_avg10")
    with pytest.raises(ValidationError):
        Guard(metric="io.sd*.lat_p99_us", max_rise=1)  # `*` is a whole segment
    with pytest.raises(ValidationError):
        EffectConfig.model_validate({"guards": [{"metric": "psi.mem.full_avg10", "max_rise": 1, "typo": 2}]})
    names = {g.metric for g in EffectConfig().guards}
    assert names == {"psi.mem.full_avg10", "psi.mem.some_avg10"}
    assert all(f.description for f in EffectConfig.model_fields.values())


def _guarded(pressure_after: float, **guard: float) -> Judgement:
    w = Window()
    kpi = Kpi("k", ("k",), True)
    _steady(w, 0, 30, 100.0, **{"psi.mem.full_avg10": 1.0})
    cfg = EffectConfig(window_s=20, settle_s=0, guards=[Guard(metric="psi.mem.*", **guard)])
    tr = EffectTracker(cfg)
    tr.start(1, Action(primitive="vm.swappiness", value=1, reason="r"), None, kpi, w, 29.5)
    _steady(w, 30, 55, 200.0, **{"psi.mem.full_avg10": pressure_after})
    [j] = tr.due(w, 55.0)
    return j


def test_a_guard_turns_a_beneficial_verdict_harmful_only_past_its_limit() -> None:
    assert _guarded(2.9, max_rise=2).verdict == "beneficial"
    j = _guarded(3.1, max_rise=2)
    assert j.verdict == "harmful" and not j.keep
    assert j.vetoed_by is not None and (j.vetoed_by.before, j.vetoed_by.after) == (1.0, 3.1)
    assert "psi.mem.full_avg10" in j.comparison.why and "1 -> 3.1" in j.comparison.why
    # Relative: +50% of 1.0 allowed; both given: the larger allowance holds.
    assert _guarded(1.4, max_rise_rel=0.5).verdict == "beneficial"
    assert _guarded(1.6, max_rise_rel=0.5).verdict == "harmful"
    assert _guarded(2.5, max_rise=2, max_rise_rel=0.5).verdict == "beneficial"
    # A fall in the guard metric is never a veto.
    assert _guarded(0.0, max_rise=0).verdict == "beneficial"
