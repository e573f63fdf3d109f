"""`idletune config show`: the effective config, one value a line, with where it came from."""

from __future__ import annotations

import json
from typing import Any

from agent.config.load import Loaded, Loc, _dotted


def _leaves(value: Any, loc: Loc) -> list[tuple[Loc, Any]]:
    if isinstance(value, dict) and value:
        return [leaf for k, v in value.items() for leaf in _leaves(v, (*loc, k))]
    if isinstance(value, list) and value and any(isinstance(v, dict) for v in value):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, (*loc, i))]
    return [(loc, value)]


def effective_lines(loaded: Loaded) -> list[str]:
    """`name = value  # source` for every setting, in the model's order."""
    data = loaded.config.model_dump(mode="json")
    rows = [(_dotted(loc), json.dumps(v), loaded.source(loc)) for loc, v in _leaves(data, ())]
    width = max(len(f"{n} = {v}") for n, v, _ in rows)
    return [f"{f'{n} = {v}':<{width}}  # {src}" for n, v, src in rows]
