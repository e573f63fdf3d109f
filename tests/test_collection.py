"""The collection level with fakes: what opens a trigger, the duty cycle's spans, a person asking."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from agent.collection import MIN_BASELINE_SAMPLES, CollectionConfig, DutyCycle, LevelPolicy
from agent.live import ONE_SHOT, LiveHost
from core.hostfs import HostFS
from core.sample import Sample

INTERVAL = 1.0


class FakeHot:
    """The hot path's spans as BpfSource keeps them: end_span takes effect at the next collect."""

    def __init__(self) -> None:
        self.open = True  # the programs measure from their load
        self.closing = False
        self.opened = threading.Event()

    @property
    def span_open(self) -> bool:
        return self.open

    def open_span(self) -> bool:
        self.open, self.closing = True, False
        self.opened.set()
        return True

    def end_span(self) -> None:
        self.closing = self.open

    def collect(self) -> bool:
        """Whether the interval ending at this collect was measured."""
        measured = self.open
        if self.closing:
            self.open = self.closing = False
        return measured


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def cycle(config: CollectionConfig | None = None) -> tuple[DutyCycle, FakeHot, Clock]:
    clock = Clock()
    hot = FakeHot()
    duty = DutyCycle(LevelPolicy(config or CollectionConfig(), clock), INTERVAL)
    duty.attach(hot)
    return duty, hot, clock


def step(duty: DutyCycle, hot: FakeHot, clock: Clock, m: dict[str, float]) -> bool:
    """One interval: the collect (was it measured?), then the level for the next one."""
    clock.t += INTERVAL
    measured = hot.collect()
    duty.on_sample(Sample(t=clock.t, m=m))
    return measured


# Healthy: whatever the past, nothing here opens a trigger under the default config.
healthy = st.fixed_dictionaries(
    {
        "trainer.j.data_wait_frac": st.floats(0.0, 0.07),  # at most the floor (0.03) + the rise (0.04)
        "gpu.0.util_pct": st.floats(85.0, 95.0),  # never 15 % below a usual level in this range
        "psi.cpu.some_avg10": st.floats(0.0, 1.99),
        "psi.io.some_avg10": st.floats(0.0, 1.99),
        "psi.mem.some_avg10": st.floats(0.0, 1.99),
    }
)


@st.composite
def triggered(draw: st.DrawFn) -> dict[str, float]:
    """A healthy sample with one trigger open, against a healthy past."""
    m = draw(healthy)
    kind = draw(st.sampled_from(["data_wait", "gpu", "psi.cpu", "psi.io", "psi.mem"]))
    if kind == "data_wait":
        # In one sample: past three times the rise (0.12) above a usual level of at most 0.07.
        m["trainer.j.data_wait_frac"] = draw(st.floats(0.20, 1.0))
    elif kind == "gpu":
        m["gpu.0.util_pct"] = draw(st.floats(0.0, 72.0))  # 15 % below a usual level of 85 or more
    else:
        # Twice its usual level, which a healthy past keeps under the floor of 2.
        m[f"{kind}.some_avg10"] = draw(st.floats(4.0, 100.0))
    return m


@settings(max_examples=60, deadline=None)
@given(st.lists(healthy, min_size=1, max_size=60))
def test_a_healthy_host_never_leaves_duty_level(samples: list[dict[str, float]]) -> None:
    duty, hot, clock = cycle()
    measured = [step(duty, hot, clock, m) for m in samples]
    assert duty.level.level == "duty" and duty.level.reason.startswith("no trigger")
    # One interval in ten, from the first: the hot path costs a tenth of what it would.
    assert measured == [i % 10 == 0 for i in range(len(samples))]


@settings(max_examples=60, deadline=None)
# A past of five samples at least: a GPU's usual level needs them (MIN_BASELINE_SAMPLES).
@given(
    st.lists(healthy, min_size=MIN_BASELINE_SAMPLES, max_size=40), triggered(), st.lists(healthy, max_size=5)
)
def test_any_trigger_gives_full_level_at_the_next_interval(
    before: list[dict[str, float]], trigger: dict[str, float], after: list[dict[str, float]]
) -> None:
    duty, hot, clock = cycle()
    for m in before:
        step(duty, hot, clock, m)
    assert duty.policy.triggers(Sample(t=clock.t + 1, m=trigger))
    step(duty, hot, clock, trigger)
    assert duty.level.level == "full" and duty.level.reason.startswith("trigger: ")
    # The next interval is measured, and each one after while the trigger lingers.
    assert hot.open and not hot.closing
    assert all(step(duty, hot, clock, m) for m in after)
    assert step(duty, hot, clock, {})


def test_a_trigger_lingers_then_the_duty_cycle_resumes() -> None:
    duty, hot, clock = cycle(CollectionConfig(linger_s=3.0))
    calm = {"psi.io.some_avg10": 0.5}
    for _ in range(5):
        step(duty, hot, clock, calm)
    step(duty, hot, clock, {"psi.io.some_avg10": 12.0})
    assert duty.level.reason == "trigger: I/O pressure 12.0% (some, avg10), usually 0.5%"
    measured = [step(duty, hot, clock, calm) for _ in range(14)]
    # Two intervals held at full level, the interval after the level drops (its span ends at
    # that collect), then off until a period after.
    assert measured == [True, True, True, True] + [False] * 9 + [True]
    assert duty.level.level == "duty"


def test_a_rise_against_the_usual_level_triggers_and_a_shift_that_lasts_stops_triggering() -> None:
    policy = LevelPolicy(CollectionConfig(baseline_s=20.0))
    for t in range(10):
        policy.update(Sample(t=t, m={"trainer.j.data_wait_frac": 0.30, "gpu.0.util_pct": 90.0}))
    # 0.30 is the job's usual data wait: only a rise above it counts, as does a GPU's fall.
    assert policy.triggers(Sample(t=10, m={"trainer.j.data_wait_frac": 0.33})) == []
    assert policy.triggers(Sample(t=10, m={"trainer.j.data_wait_frac": 0.45, "gpu.0.util_pct": 70.0})) == [
        "GPU 0 utilisation 70%, usually 90%",
        "job j waits for data 45% of its steps, usually 30%",
    ]
    for t in range(10, 30):
        policy.update(Sample(t=t, m={"trainer.j.data_wait_frac": 0.50}))
    assert policy.triggers(Sample(t=30, m={"trainer.j.data_wait_frac": 0.50})) == []
    # An idle GPU is not watched for a fall.
    for t in range(30, 40):
        policy.update(Sample(t=t, m={"gpu.1.util_pct": 5.0}))
    assert policy.triggers(Sample(t=40, m={"gpu.1.util_pct": 0.0})) == []


def test_a_person_asking_attaches_the_hot_path_at_once_and_holds_full_level() -> None:
    duty, hot, clock = cycle(CollectionConfig(hold_s=5.0))
    for _ in range(3):
        step(duty, hot, clock, {})
    assert not hot.open
    hot.opened.clear()
    lvl = duty.ask("the dashboard")
    assert lvl.level == "full" and lvl.reason == "the dashboard asked 0 s ago, held 5 s"
    assert hot.opened.wait(5)  # not waiting for the next collect
    assert all(step(duty, hot, clock, {}) for _ in range(5))
    assert duty.level.level == "duty"


def test_the_duty_cycle_runs_in_whole_intervals() -> None:
    d = DutyCycle(LevelPolicy(CollectionConfig(duty_on_s=0.3, duty_period_s=4.0)), interval_s=2.0)
    assert (d.on_ticks, d.period_ticks) == (1, 2)
    d = DutyCycle(LevelPolicy(CollectionConfig(duty_on_s=2.0, duty_period_s=10.0)), interval_s=1.0)
    assert (d.on_ticks, d.period_ticks) == (2, 10)
    duty, hot, clock = cycle(CollectionConfig(duty_on_s=2.0, duty_period_s=5.0))
    assert [step(duty, hot, clock, {}) for _ in range(10)] == [True, True, False, False, False] * 2


def test_config_is_strict() -> None:
    with pytest.raises(ValidationError):
        CollectionConfig.model_validate({"duty_on": 1})
    with pytest.raises(ValidationError, match="longer than duty_period_s"):
        CollectionConfig(duty_on_s=20.0, duty_period_s=10.0)
    duty, hot, clock = cycle(CollectionConfig(duty=False))
    assert all(step(duty, hot, clock, {}) for _ in range(12))
    assert duty.level.reason == "the duty cycle is turned off (collection.duty: false)"


def test_a_one_shot_command_measures_without_a_break(tmp_path: object) -> None:
    live = LiveHost(HostFS("/nonexistent-root"), bpf=False)
    assert live.level.level == "full" and live.level.reason == ONE_SHOT
    assert not live.level.hot_path  # no eBPF: the level changes nothing
    daemon = LiveHost(HostFS("/nonexistent-root"), bpf=False, collection=CollectionConfig())
    assert daemon.level.level == "duty" and daemon.level.duty_period_s == 10.0


def test_over_budget_the_cheaper_level_wins_over_a_trigger_but_not_a_person() -> None:
    duty, hot, clock = cycle(CollectionConfig(linger_s=0.0, hold_s=5.0))
    for _ in range(MIN_BASELINE_SAMPLES):
        step(duty, hot, clock, {"psi.io.some_avg10": 0.5})
    hot_io = {"psi.io.some_avg10": 12.0}
    step(duty, hot, clock, hot_io)
    assert duty.level.level == "full"
    duty.policy.over_budget("0.018 cores over 60 s, budget 0.010")
    step(duty, hot, clock, hot_io)
    assert duty.level.level == "duty" and duty.level.reason.startswith("over its cost budget: 0.018")
    measured = [step(duty, hot, clock, hot_io) for _ in range(20)]
    assert sum(measured) <= 3  # the duty cycle's one interval in ten, the trigger notwithstanding
    duty.ask("a person")
    assert duty.level.level == "full"  # an explicit, time-bounded request still holds
    for _ in range(6):
        step(duty, hot, clock, hot_io)
    assert duty.level.level == "duty"
    duty.policy.over_budget(None)
    step(duty, hot, clock, {"psi.io.some_avg10": 40.0})  # 12 % is usual by now; 40 % is a rise
    assert duty.level.level == "full" and duty.level.reason.startswith("trigger")


def test_pressure_a_host_always_lives_with_is_not_a_trigger() -> None:
    """A CPU-bound trainer keeps its cores' run queues full: pressure is its usual state, and only
    a rise to twice that opens a trigger."""
    # Before a usual level is known the first samples trigger; no linger, so that passes at once.
    policy = LevelPolicy(CollectionConfig(baseline_s=60.0, linger_s=0.0))
    for t in range(30):
        policy.update(Sample(t=t, m={"psi.cpu.some_avg10": 38.0 + (t % 5)}))
    assert policy.level.level == "duty"
    assert policy.triggers(Sample(t=30, m={"psi.cpu.some_avg10": 55.0})) == []
    assert policy.triggers(Sample(t=30, m={"psi.cpu.some_avg10": 85.0})) == [
        "CPU pressure 85.0% (some, avg10), usually 40.0%"
    ]


def test_new_settings_apply_to_the_running_duty_cycle_with_the_usual_levels_kept() -> None:
    duty, hot, clock = cycle()
    calm = {"psi.io.some_avg10": 0.5}
    assert [step(duty, hot, clock, calm) for _ in range(9)] == [i == 0 for i in range(9)]
    # A shorter cycle counts on from where the cycle is (interval 9 of it): one interval in four.
    lvl = duty.reconfigure(CollectionConfig(duty_on_s=1.0, duty_period_s=4.0))
    assert (duty.on_ticks, duty.period_ticks) == (1, 4)
    assert lvl.level == "duty" and lvl.duty_period_s == 4.0
    assert [step(duty, hot, clock, calm) for _ in range(12)] == [False, False, False, True] * 3
    # The usual level learnt before the reload still judges: 1.5 % is no rise under a floor
    # of 2 %, but a floor of 0.5 % makes it twice the usual level of 0.5 %.
    assert duty.policy.triggers(Sample(t=clock.t + 1, m={"psi.io.some_avg10": 1.5})) == []
    duty.reconfigure(CollectionConfig(duty_period_s=4.0, psi_some_pct=0.5))
    assert duty.policy.triggers(Sample(t=clock.t + 1, m={"psi.io.some_avg10": 1.5})) == [
        "I/O pressure 1.5% (some, avg10), usually 0.5%"
    ]


def test_turning_the_duty_cycle_off_attaches_the_hot_path_at_once_and_on_again_resumes_it() -> None:
    duty, hot, clock = cycle()
    for _ in range(3):
        step(duty, hot, clock, {})
    assert not hot.open
    lvl = duty.reconfigure(CollectionConfig(duty=False))
    # Measured from now on, not from the next collect; the same hot path, attached again.
    assert hot.open and lvl.level == "full" and duty.level.level == "full"
    assert lvl.reason == "the duty cycle is turned off (collection.duty: false)"
    assert all(step(duty, hot, clock, {}) for _ in range(12))
    duty.reconfigure(CollectionConfig(duty_period_s=5.0))
    assert duty.level.level == "duty"
    # The interval under way was measured at full level; the cycle starts with a measured one.
    measured = [step(duty, hot, clock, {}) for _ in range(11)]
    assert measured == [True] + [True, False, False, False, False] * 2


def test_a_hold_under_way_lasts_the_new_hold_from_when_the_person_asked() -> None:
    duty, hot, clock = cycle(CollectionConfig(hold_s=60.0, linger_s=0.0))
    step(duty, hot, clock, {})
    duty.ask("a person")
    for _ in range(5):
        step(duty, hot, clock, {})
    assert duty.level.level == "full"
    assert duty.reconfigure(CollectionConfig(hold_s=3.0, linger_s=0.0)).level == "duty"
    never = LevelPolicy(CollectionConfig())
    assert never.reconfigure(CollectionConfig(hold_s=1e6)).level == "duty"  # nobody asked: nothing held


def test_a_data_wait_rise_must_last_unless_it_jumps() -> None:
    """One sample a little up is a healthy trainer's wobble; the same rise lasting, or one sample
    three rises up, is a trigger."""
    w = "trainer.j.data_wait_frac"

    def calm() -> LevelPolicy:
        # Long enough for the start's trigger (no usual level yet) to have lingered out.
        policy = LevelPolicy(CollectionConfig())
        for t in range(40):
            policy.update(Sample(t=t, m={w: 0.30}))
        assert policy.level.level == "duty"
        return policy

    # A wobble: single samples 0.07 up between usual ones never trigger.
    policy = calm()
    for t, v in enumerate([0.37, 0.30, 0.30, 0.37, 0.30], start=40):
        assert policy.triggers(Sample(t=t, m={w: v})) == []
        policy.update(Sample(t=t, m={w: v}))
    assert policy.level.level == "duty"
    # The same rise lasting: the second sample brings the mean of the last three past the rise.
    policy = calm()
    assert policy.triggers(Sample(t=40, m={w: 0.37})) == []
    policy.update(Sample(t=40, m={w: 0.37}))
    assert policy.triggers(Sample(t=41, m={w: 0.37})) == [
        "job j waits for data 35% of its steps over the last 3 samples, usually 30%"
    ]
    # A jump of three rises triggers in one sample.
    assert calm().triggers(Sample(t=40, m={w: 0.43})) == [
        "job j waits for data 43% of its steps, usually 30%"
    ]


def test_a_job_whose_data_wait_wobbles_needs_a_larger_rise() -> None:
    """The same lasting rise of 0.06 triggers for a steady job and not for one whose data wait
    swings by about that much from sample to sample."""
    w = "trainer.j.data_wait_frac"

    def after(past: list[float]) -> list[str]:
        policy = LevelPolicy(CollectionConfig())
        for t, v in enumerate(past):
            policy.update(Sample(t=t, m={w: v}))
        n = len(past)
        policy.update(Sample(t=n, m={w: 0.74}))
        policy.update(Sample(t=n + 1, m={w: 0.74}))
        return policy.triggers(Sample(t=n + 2, m={w: 0.74}))

    steady = [0.68] * 40
    wobbly = [0.68 + d for d in (0.05, -0.05, 0.0) * 13] + [0.68]
    assert after(steady) == ["job j waits for data 74% of its steps over the last 3 samples, usually 68%"]
    assert after(wobbly) == []
