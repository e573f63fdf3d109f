"""The catalogue: every primitive module's descriptor, found by import, and what is generated from them."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import primitives
from core.diagnosis import Category
from core.hostfs import HostFS
from core.knob import KnobValue, Target, knob_key
from primitives.base import Primitive, TargetKind
from primitives.channels import GpuPower, TrainerChannel
from primitives.host import Host
from primitives.schema import build_proposal_schema


@lru_cache(maxsize=1)
def _load() -> dict[str, Primitive]:
    """Adding a primitive is adding a module with a PRIMITIVE whose id is the module name with dots."""
    found: dict[str, Primitive] = {}
    for info in pkgutil.iter_modules(primitives.__path__):
        if info.ispkg:
            continue
        module = importlib.import_module(f"primitives.{info.name}")
        p = getattr(module, "PRIMITIVE", None)
        if p is None:
            continue
        if not isinstance(p, Primitive) or p.id.replace(".", "_") != info.name:
            raise RuntimeError(f"primitives/{info.name}.py: PRIMITIVE is no Primitive named as the module")
        found[p.id] = p
    return dict(sorted(found.items()))


def all_primitives() -> list[Primitive]:
    return list(_load().values())


def get(primitive_id: str) -> Primitive | None:
    return _load().get(primitive_id)


def setting(primitive_id: str, target: Target) -> str:
    """The host setting a change of this knob changes (`Primitive.setting`); the knob key when the
    primitive is unknown."""
    p = get(primitive_id)
    return p.setting(target) if p is not None else knob_key(primitive_id, target)


def for_cause(category: Category | str) -> list[Primitive]:
    """Primitives that address a cause, lowest tier first."""
    cat = Category(category)
    return sorted((p for p in all_primitives() if cat in p.causes), key=lambda p: (p.tier, p.id))


def targets_for(
    p: Primitive, devices: Iterable[str], jobs: Iterable[str], gpus: Iterable[int]
) -> list[Target]:
    if p.target is TargetKind.BLOCK_DEVICE:
        return list(devices)
    if p.target is TargetKind.JOB:
        return list(jobs)
    if p.target is TargetKind.GPU:
        return list(gpus)
    return [None]


def read_knobs(
    fs: HostFS,
    devices: Iterable[str] = (),
    jobs: Iterable[str] = (),
    gpus: Iterable[int] = (),
    *,
    trainer: TrainerChannel | None = None,
    gpu: GpuPower | None = None,
) -> dict[str, KnobValue]:
    """Current values in the spec's knob key form (`id`, `id@target`); what the host lacks is left out."""
    host = Host(fs, trainer=trainer, gpu=gpu)
    devices, jobs, gpus = list(devices), list(jobs), list(gpus)
    out: dict[str, KnobValue] = {}
    for p in all_primitives():
        for target in targets_for(p, devices, jobs, gpus):
            if not p.available(host, target).ok:
                continue
            try:
                out[knob_key(p.id, target)] = p.read(host, target)
            except (OSError, LookupError, ValueError):
                # A device unplugged or a hook detached between the check and the read.
                continue
    return out


def describe(p: Primitive) -> dict[str, Any]:
    v = p.value
    bounds: dict[str, Any]
    if v.kind == "int":
        bounds = {"min": v.min, "max": v.max, "unit": v.unit}
    elif v.kind == "choice":
        bounds = {"options": list(v.options)}
    else:
        bounds = {"pattern": v.schema()["pattern"]}
    step = p.step
    return {
        "id": p.id,
        "description": p.description,
        "tier": int(p.tier),
        "target": p.target.value,
        "target_required": p.target_required,
        "value_type": v.kind,
        "bounds": bounds,
        "max_step": None
        if step is None
        else {"delta": step.delta, "factor": step.factor, "from_zero": step.from_zero},
        "causes": [c.value for c in p.causes],
        "risk": p.risk,
        "reaches": p.reaches.value,
        "reaches_note": p.reaches_note,
        "proposable_by_default": p.proposable,
        "how": p.how(),
    }


def proposal_schema() -> dict[str, Any]:
    return build_proposal_schema(all_primitives())


def catalog_json() -> dict[str, Any]:
    return {"primitives": [describe(p) for p in all_primitives()], "proposal_schema": proposal_schema()}
