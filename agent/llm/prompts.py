"""Prompt templates from the `prompts` package, filled with `string.Template` (`$name`).

`$`-placeholders leave the JSON examples inside the templates alone, and the values put
in are never parsed again, so a host string cannot add a placeholder of its own.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from string import Template


@lru_cache(maxsize=16)
def template(name: str) -> Template:
    return Template(resources.files("prompts").joinpath(name).read_text(encoding="utf-8").strip())


def fill(name: str, **values: str) -> str:
    """The template filled; a placeholder left without a value is a bug and raises KeyError."""
    return template(name).substitute(values)
