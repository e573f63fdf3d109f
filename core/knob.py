"""A knob's key and value as the spec writes them: `id` or `id@target`, an int, float or string.

Standard library only: the trainer hook's wire protocol uses these too.
"""

from __future__ import annotations

KnobValue = int | float | str
Target = str | int | None


def knob_key(primitive_id: str, target: Target) -> str:
    """The spec's knob key: `id`, or `id@target` for a primitive with a target."""
    return primitive_id if target is None else f"{primitive_id}@{target}"


def split_knob_key(key: str) -> tuple[str, str | None]:
    """`id@target` -> (id, target); `id` -> (id, None)."""
    primitive, at, target = key.partition("@")
    return primitive, (target if at else None)
