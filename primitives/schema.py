"""JSON Schemas generated from the descriptors: one action per primitive, and the proposal."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator

from primitives.base import CPULIST_PATTERN, NAME_PATTERN, Primitive, TargetKind

_TARGET_SCHEMAS: dict[TargetKind, dict[str, Any]] = {
    TargetKind.NONE: {"type": "null"},
    TargetKind.BLOCK_DEVICE: {"type": "string", "pattern": NAME_PATTERN},
    TargetKind.JOB: {"type": "string", "pattern": NAME_PATTERN},
    TargetKind.GPU: {"type": "integer", "minimum": 0},
    TargetKind.CPUSET: {"type": ["string", "null"], "pattern": CPULIST_PATTERN},
}


def action_schema(p: Primitive) -> dict[str, Any]:
    required = ["primitive", "value", "reason"]
    if p.target_required:
        required.insert(1, "target")
    return {
        "type": "object",
        "title": p.id,
        "description": p.description,
        "properties": {
            "primitive": {"const": p.id},
            "target": _TARGET_SCHEMAS[p.target],
            "value": p.value.schema(),
            "reason": {"type": "string", "minLength": 1},
        },
        "required": required,
        "additionalProperties": False,
    }


def build_proposal_schema(primitives: list[Primitive]) -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://idletune.dev/schema/proposal-v1.json",
        "title": "idletune proposal",
        "description": "Actions from the catalogue, or none and the reason why.",
        "type": "object",
        "properties": {
            "actions": {"type": "array", "items": {"oneOf": [action_schema(p) for p in primitives]}},
            "noop_reason": {"type": ["string", "null"]},
        },
        "required": ["actions"],
        "additionalProperties": False,
        # No action must say why; actions must not also claim to be a no-op.
        "if": {"properties": {"actions": {"maxItems": 0}}},
        "then": {
            "required": ["noop_reason"],
            "properties": {"noop_reason": {"type": "string", "minLength": 1}},
        },
        "else": {"properties": {"noop_reason": {"type": "null"}}},
    }


@lru_cache(maxsize=64)
def _validator(p: Primitive) -> Draft202012Validator:
    return Draft202012Validator(action_schema(p))


def action_problem(p: Primitive, action: dict[str, Any]) -> str | None:
    """Why `action` does not validate against the primitive's schema, in one line; None when it does."""
    errors = sorted(_validator(p).iter_errors(action), key=lambda e: list(e.absolute_path))
    if not errors:
        return None
    e = errors[0]
    where = ".".join(str(x) for x in e.absolute_path) or "action"
    return f"{p.id}: {where}: {e.message}"


def target_problem(p: Primitive, target: object) -> str | None:
    """Why `target` is not a valid target of the primitive, in one line; None when it is."""
    schema = _TARGET_SCHEMAS[p.target]
    if target is None and p.target_required:
        return f"{p.id}: a target is required"
    errors = list(Draft202012Validator(schema).iter_errors(target))
    return f"{p.id}: target {str(target)[:60]!r}: {errors[0].message[:120]}" if errors else None


def value_problem(p: Primitive, value: object) -> str | None:
    """Why `value` is outside the primitive's catalogue type and bounds, in one line; None when inside."""
    errors = list(Draft202012Validator(p.value.schema()).iter_errors(value))
    return f"{p.id}: value {str(value)[:60]!r}: {errors[0].message[:120]}" if errors else None
