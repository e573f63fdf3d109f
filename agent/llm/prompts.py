"""Prompt templates for the LLM: the Markdown files of the top-level `prompts/` folder, filled with
`string.Template` (`$name`).

The folder is data, not code: it sits beside the packages in the source tree and in an
installed wheel alike. `$`-placeholders leave the JSON examples inside the templates
alone, and the values put in are never parsed again, so a host string cannot add a
placeholder of its own.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from string import Template

PROMPTS_DIR = Path(__file__).resolve().parents[2] / "prompts"


@lru_cache(maxsize=16)
def template(name: str) -> Template:
    return Template((PROMPTS_DIR / name).read_text(encoding="utf-8").strip())


def fill(name: str, **values: str) -> str:
    """The template filled; a placeholder left without a value is a bug and raises KeyError."""
    return template(name).substitute(values)
