"""A PID controller for continuous knobs (loader workers, dirty bytes, readahead).

It drives a measured figure (by default the trainer's data-wait share) toward a
setpoint by moving a knob. The output is clamped to the knob's bounds and to one
step per update; anti-windup stops integrating while the output is held at a clamp
in the direction the error pushes, so a long saturation does not leave a large
integral that overshoots once the plant responds.

`direction`: +1 when raising the knob lowers the measured figure (more workers,
less data wait), so an error above the setpoint raises the knob; -1 otherwise.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class PidConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    setpoint: float = 0.05
    kp: float = 4.0
    ki: float = 1.0
    kd: float = 0.0
    lo: float = Field(description="the knob's lowest value")
    hi: float = Field(description="the knob's highest value")
    max_step: float | None = Field(default=None, gt=0, description="largest move per update")
    direction: int = Field(default=1, description="+1: raising the knob lowers the measure")
    deadband: float = Field(default=0.0, ge=0, description="errors this small move nothing")
    integer: bool = True
    anti_windup: bool = Field(default=True, description="off only to show what it prevents")


class Pid:
    """Positional PID around the knob's value when control began (the bias)."""

    def __init__(self, config: PidConfig, initial: float) -> None:
        if config.lo > config.hi:
            raise ValueError("lo must not exceed hi")
        self.c = config
        self.bias = min(max(initial, config.lo), config.hi)
        self.output = self.bias
        self.integral = 0.0
        self._last_error: float | None = None

    def update(self, measured: float, dt: float) -> float:
        """The knob's next value, given the measure now and the seconds since the last update."""
        c = self.c
        error = (measured - c.setpoint) * c.direction
        if abs(error) <= c.deadband:
            self._last_error = error
            return self.output
        deriv = 0.0 if self._last_error is None or dt <= 0 else (error - self._last_error) / dt
        self._last_error = error
        trial = self.integral + error * dt
        # Gains act on the knob's span, so one tuning suits 0..16 workers and 16..16384 kB.
        span = c.hi - c.lo
        want = self.bias + span * (c.kp * error + c.ki * trial + c.kd * deriv)
        goal = min(max(want, c.lo), c.hi)
        if c.max_step is not None:
            goal = min(max(goal, self.output - c.max_step), self.output + c.max_step)
        if c.integer:
            goal = float(round(goal))
        # Anti-windup (conditional integration): while the output is held at a clamp and the
        # error pushes further into it, the integral stays where it was.
        slack = 0.5 if c.integer else 1e-9  # rounding alone is no clamp
        held_up = want > goal + slack and error > 0
        held_down = want < goal - slack and error < 0
        if not (c.anti_windup and (held_up or held_down)):
            self.integral = trial
        self.output = goal
        return goal
