"""PID step responses on a simulated loader: data wait falls as workers rise, with a lag."""

from __future__ import annotations

from guardrails.pid import Pid, PidConfig


class Loader:
    """Data-wait share of a trainer fed by `workers` loaders, each supplying `per_worker` of
    the demand; the share follows its steady state with a first-order lag."""

    def __init__(self, per_worker: float, wait: float = 0.8, lag: float = 0.5) -> None:
        self.per_worker = per_worker
        self.wait = wait
        self.lag = lag

    def step(self, workers: float) -> float:
        steady = max(0.0, 1.0 - workers * self.per_worker)
        self.wait += self.lag * (steady - self.wait)
        return self.wait


def run(pid: Pid, plant: Loader, n: int) -> tuple[list[float], list[float]]:
    outs, waits = [], []
    wait = plant.wait
    for _ in range(n):
        out = pid.update(wait, 1.0)
        wait = plant.step(out)
        outs.append(out)
        waits.append(wait)
    return outs, waits


def cfg(**kw: float | bool) -> PidConfig:
    base: dict[str, float | bool] = {
        "setpoint": 0.05,
        "kp": 0.3,
        "ki": 0.15,
        "lo": 1,
        "hi": 16,
        "max_step": 4,
    }
    return PidConfig.model_validate({**base, **kw})


def test_step_response_settles_at_the_setpoint_inside_bounds_and_steps() -> None:
    plant = Loader(per_worker=0.12)  # 8 workers leave 4% wait: the setpoint is reachable
    # With whole workers, 7 leave 16% and 8 leave 4%: a deadband stops the hunt between them.
    pid = Pid(cfg(deadband=0.02), initial=2)
    outs, waits = run(pid, plant, 60)
    assert all(1 <= o <= 16 for o in outs)
    prev = 2.0
    for o in outs:
        assert abs(o - prev) <= 4
        prev = o
    assert len(set(outs[-20:])) == 1  # settled
    assert all(abs(w - 0.05) <= 0.02 for w in waits[-20:])


def test_output_never_leaves_bounds_for_any_measure() -> None:
    pid = Pid(cfg(kp=50, ki=50), initial=8)
    for m in [1.0, -1.0, 0.9, 0.0, 100.0, -100.0, 0.05]:
        assert 1 <= pid.update(m, 1.0) <= 16


def test_anti_windup_holds_the_integral_while_saturated() -> None:
    # The storage is too slow: even 16 workers leave 50% wait; the output sits at its top.
    plant = Loader(per_worker=0.03)
    pid = Pid(cfg(), initial=4)
    run(pid, plant, 20)
    assert pid.output == 16
    held = pid.integral
    run(pid, plant, 200)
    assert pid.integral == held  # no growth while clamped and pushing further up
    # The storage gets fast: the controller leaves its clamp at the next update.
    plant.per_worker = 0.5
    outs, waits = run(pid, plant, 30)
    assert outs[1] < 16 and max(waits[-10:]) < 0.05


def test_without_anti_windup_it_stays_saturated_long_after() -> None:
    def updates_at_top(anti: bool) -> int:
        plant = Loader(per_worker=0.03)
        pid = Pid(cfg(anti_windup=anti), initial=4)
        run(pid, plant, 200)
        plant.per_worker = 0.5
        outs, _ = run(pid, plant, 300)
        return next((i for i, o in enumerate(outs) if o < 16), len(outs))

    assert updates_at_top(True) <= 2
    assert updates_at_top(False) > 100


def test_deadband_and_direction() -> None:
    pid = Pid(cfg(deadband=0.02), initial=8)
    assert pid.update(0.06, 1.0) == 8  # inside the deadband
    down = Pid(cfg(direction=-1), initial=8)  # raising this knob raises the measure
    assert down.update(0.5, 1.0) < 8
