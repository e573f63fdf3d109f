"""The Proposal stage's data: catalogue actions with reasons, or an explicit no-op and its reason."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from core.knob import knob_key


class Action(BaseModel):
    model_config = ConfigDict(extra="forbid")

    primitive: str
    target: str | int | None = None
    value: int | float | str
    reason: str = Field(min_length=1)

    @property
    def knob(self) -> str:
        """The spec's knob key this action changes (`id` or `id@target`)."""
        return knob_key(self.primitive, self.target)


class Proposal(BaseModel):
    model_config = ConfigDict(extra="forbid")

    actions: list[Action] = Field(default_factory=list)
    noop_reason: str | None = Field(default=None, description="why nothing is proposed; only without actions")

    @model_validator(mode="after")
    def _noop_explained(self) -> Proposal:
        if not self.actions and not self.noop_reason:
            raise ValueError("a proposal without actions must say why (noop_reason)")
        if self.actions and self.noop_reason is not None:
            raise ValueError("a proposal with actions has no noop_reason")
        return self

    @classmethod
    def noop(cls, reason: str) -> Proposal:
        return cls(actions=[], noop_reason=reason)
