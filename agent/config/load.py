"""Reading the operator's config file: every problem is one line naming the file and its line.

The file is read as untrusted input: a regular file of bounded size, YAML that expands to a
bounded number of nodes (an alias bomb is refused, not expanded), no duplicate keys (YAML
would keep the last silently), then the typed model. Where each value came from (the
file's line, a default, a command-line override) is kept for `idletune config show`.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from agent.config.model import AgentConfig

CONFIG_ENV = "IDLETUNE_CONFIG"
DEFAULT_CONFIG = Path("/etc/idletune/config.yaml")
MAX_BYTES = 1 << 20
MAX_NODES = 20_000

Loc = tuple[str | int, ...]


class ConfigError(Exception):
    """A config file that cannot be used: one line, `FILE:LINE: what is wrong`."""


@dataclass
class Loaded:
    config: AgentConfig
    path: Path | None  # None: no file; every value is a default
    lines: dict[Loc, int] = field(default_factory=dict)  # where each key of the file was set
    overrides: dict[Loc, str] = field(default_factory=dict)  # set on the command line, by which flag

    def source(self, loc: Loc) -> str:
        """Where the value at `loc` came from: a flag, the file and its line, or the default."""
        for n in range(len(loc), 0, -1):
            if loc[:n] in self.overrides:
                return self.overrides[loc[:n]]
        if loc in self.lines and self.path is not None:
            return f"{self.path}:{self.lines[loc]}"
        return "default"


def config_path(explicit: Path | None = None) -> tuple[Path, bool]:
    """The file to read and whether someone named it (a named file must exist)."""
    if explicit is not None:
        return explicit, True
    env = os.environ.get(CONFIG_ENV)
    if env:
        return Path(env), True
    return DEFAULT_CONFIG, False


def load_config(explicit: Path | None = None) -> Loaded:
    """The config from `explicit`, else $IDLETUNE_CONFIG, else /etc/idletune/config.yaml (defaults
    when that one does not exist). Raises ConfigError."""
    path, named = config_path(explicit)
    if not named and not path.exists():
        return Loaded(AgentConfig(), None)
    return parse_config(_read(path), path)


def _read(path: Path) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except FileNotFoundError:
        raise ConfigError(f"{path}:0: no such config file") from None
    except OSError as e:
        raise ConfigError(f"{path}:0: cannot open: {e.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ConfigError(f"{path}:0: not a regular file")
        if st.st_size > MAX_BYTES:
            raise ConfigError(f"{path}:0: {st.st_size} bytes; a config file is at most {MAX_BYTES}")
        data = os.read(fd, MAX_BYTES + 1)
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 text") from None


def parse_config(text: str, path: Path) -> Loaded:
    """The typed config from a file's text, or ConfigError naming `path` and the line."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line = mark.line + 1 if mark is not None else 0
        what = e.problem or e.context or "invalid YAML"
        raise ConfigError(f"{path}:{line}: YAML syntax: {what}") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}:0: YAML: {str(e).splitlines()[0]}") from None
    if node is None:
        return Loaded(AgentConfig(), path)
    lines: dict[Loc, int] = {}
    data = _build(node, (), lines, path, [0], 1)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}:{node.start_mark.line + 1}: the config must be a mapping of sections")
    try:
        config = AgentConfig.model_validate(data)
    except ValidationError as e:
        raise ConfigError(_explain(e, data, lines, path)) from None
    return Loaded(config, path, lines)


def _build(node: yaml.Node, loc: Loc, lines: dict[Loc, int], path: Path, count: list[int], at: int) -> Any:
    """The node as Python data, recording each key's line; aliases count every time they expand,
    and a file that expands too far is named at the key (`at`) whose value grew past the limit."""
    count[0] += 1
    if count[0] > MAX_NODES:
        top = _dotted(loc[:1]) or "the file"
        raise ConfigError(f"{path}:{at}: {top} expands past {MAX_NODES} values (aliases?)")
    if isinstance(node, yaml.MappingNode):
        out: dict[Any, Any] = {}
        for knode, vnode in node.value:
            if knode.tag == "tag:yaml.org,2002:merge":
                raise ConfigError(f"{path}:{knode.start_mark.line + 1}: merge keys (<<) are not supported")
            key = _build(knode, loc, {}, path, count, knode.start_mark.line + 1)
            if not isinstance(key, str | int) or isinstance(key, bool):
                raise ConfigError(f"{path}:{knode.start_mark.line + 1}: a key must be a name, not {key!r}")
            if key in out:
                raise ConfigError(f"{path}:{knode.start_mark.line + 1}: {_dotted((*loc, key))} is set twice")
            lines[(*loc, key)] = knode.start_mark.line + 1
            out[key] = _build(vnode, (*loc, key), lines, path, count, knode.start_mark.line + 1)
        return out
    if isinstance(node, yaml.SequenceNode):
        items = []
        for i, item in enumerate(node.value):
            lines[(*loc, i)] = item.start_mark.line + 1
            items.append(_build(item, (*loc, i), lines, path, count, at))
        return items
    try:
        return yaml.SafeLoader(" ").construct_object(node, deep=True)
    except yaml.YAMLError as e:
        raise ConfigError(f"{path}:{node.start_mark.line + 1}: {str(e).splitlines()[0]}") from None


def _dotted(loc: Loc) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _explain(e: ValidationError, data: dict[str, Any], lines: dict[Loc, int], path: Path) -> str:
    """The first problem, at the line of the deepest key the file set on its way; how many more."""
    errs = e.errors()
    err = errs[0]
    loc: Loc = tuple(x for x in err["loc"] if isinstance(x, str | int))
    msg = str(err["msg"]).removeprefix("Value error, ")
    # A whole-section check names its entry first ("vm.swappiness: ...", "pid[1]: ..."): point there.
    head = msg.split(":", 1)[0]
    prims = data.get("primitives")
    if loc == ("primitives",) and isinstance(prims, dict) and head in prims:
        loc, msg = ("primitives", head), msg.split(":", 1)[1].strip()
    elif head.startswith("pid[") and head.endswith("]") and head[4:-1].isdigit():
        loc, msg = ("pid", int(head[4:-1])), msg.split(":", 1)[1].strip()
    if err["type"] == "extra_forbidden" and loc:
        known = _fields_at(loc[:-1])
        msg = f"unknown field {loc[-1]!r}" + (f" (known: {', '.join(known)})" if known else "")
    line = 0
    for n in range(len(loc), 0, -1):
        if loc[:n] in lines:
            line = lines[loc[:n]]
            break
    more = f" ({len(errs) - 1} more problem{'s' if len(errs) > 2 else ''})" if len(errs) > 1 else ""
    where = _dotted(loc) or "config"
    return f"{path}:{line}: {where}: {msg}{more}".replace("\n", " ")


def _fields_at(loc: Loc) -> list[str]:
    """The field names the model accepts at `loc` (for an unknown-field error)."""
    model: type[BaseModel] | None = AgentConfig
    for part in loc:
        if model is None or not isinstance(part, str) or part not in model.model_fields:
            return []
        ann = model.model_fields[part].annotation
        model = ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None
    return sorted(model.model_fields) if model is not None else []
