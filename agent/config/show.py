"""`idletune config show`: the effective config, one value a line, with where it came from."""

from __future__ import annotations

import json
from typing import Any

from agent.config.load import Loaded, Loc, _dotted
from agent.config.model import AT_START


def _leaves(value: Any, loc: Loc) -> list[tuple[Loc, Any]]:
    if isinstance(value, dict) and value:
        return [leaf for k, v in value.items() for leaf in _leaves(v, (*loc, k))]
    if isinstance(value, list) and value and any(isinstance(v, dict) for v in value):
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, (*loc, i))]
    return [(loc, value)]


def at_start(name: str) -> bool:
    """Whether the setting `name` (dotted) is read at start only, so a reload does not apply it."""
    return any(name == k or name.startswith(f"{k}.") for k in AT_START)


def effective_lines(loaded: Loaded) -> list[str]:
    """`name = value  # source` for every setting, in the model's order; a setting a reload does
    not apply says `at start only`."""
    data = loaded.config.model_dump(mode="json")
    rows = [(_dotted(loc), json.dumps(v), loaded.source(loc)) for loc, v in _leaves(data, ())]
    width = max(len(f"{n} = {v}") for n, v, _ in rows)
    return [
        f"{f'{n} = {v}':<{width}}  # {src}{'; at start only' if at_start(n) else ''}" for n, v, src in rows
    ]
