"""The layers contract: which package may import which, checked on the source, not at run time.

Layers are listed top to bottom; a module belongs to the layer of the longest name that
prefixes it (so `agent.cli` is an app while the rest of `agent` sits below `evals`). A
module may import its own layer and the layers below, never one above. Siblings on one
line split by `|` are independent (neither imports the other); split by `:` they may.
Every import counts: at module level, inside functions, under TYPE_CHECKING, and
constant names given to importlib. Every module must belong to a layer.

The trainer hook is imported by training scripts: it and everything it imports of
idletune use the standard library only.

Run `python -m tests.layers` for the violations, one line each (exit 1 when any).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

LAYERS: tuple[str, ...] = (
    # The apps: they wire and present, they do not decide.
    "agent.cli : agent.service : agent.demo",
    # Evaluation: harness, scoring, generator, testbed. The product never imports it.
    "evals",
    # The agent, in the order data flows back up: daemon, wiring, config, loop, proposers, ..., sources.
    "agent.daemon",
    "agent.wiring",
    "agent.config",
    "agent.loop",
    "agent.proposers",
    "agent.llm",
    "agent.answer | agent.grounding",
    "agent.diagnosis",
    "agent.recorder | agent.live",
    "agent.collector | agent.collection | agent.jobs | agent.cost",
    "agent.sources",
    "agent.hook | agent.host | agent.devicefilter",
    "agent.proctree",
    "guardrails",
    "primitives | bpf",
    # Stage types and host access; imports nothing else of idletune.
    "core",
)
ROOTS: tuple[str, ...] = ("core", "agent", "bpf", "primitives", "guardrails", "evals")
STDLIB_ONLY: tuple[str, ...] = ("agent.hook",)


@dataclass(frozen=True)
class Layer:
    index: int
    names: tuple[str, ...]
    independent: bool


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    target: str  # the module (or module.name) imported
    file: Path
    line: int


def parse_layers(lines: tuple[str, ...] = LAYERS) -> list[Layer]:
    out: list[Layer] = []
    for i, line in enumerate(lines):
        if "|" in line and ":" in line:
            raise ValueError(f"layer {line!r} mixes | and :")
        sep = "|" if "|" in line else ":"
        out.append(Layer(i, tuple(n.strip() for n in line.split(sep)), sep == "|"))
    return out


def modules(root: Path, roots: tuple[str, ...] = ROOTS) -> dict[str, Path]:
    """Every module of the project's packages, by dotted name."""
    out: dict[str, Path] = {}
    for pkg in roots:
        for f in sorted((root / pkg).rglob("*.py")):
            parts = f.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            out[name] = f
    return out


def _resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    base = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join([*base, name] if name else base)


def imports(name: str, file: Path) -> Iterator[Import]:
    tree = ast.parse(file.read_text(), str(file))
    is_package = file.name == "__init__.py"
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            for a in n.names:
                yield Import(name, a.name, file, n.lineno)
        elif isinstance(n, ast.ImportFrom):
            mod = n.module if n.level == 0 else _resolve(name, is_package, n.level, n.module)
            for a in n.names:
                # `from pkg import sub` imports the module pkg.sub when there is one.
                yield Import(name, f"{mod}.{a.name}" if mod else a.name, file, n.lineno)
        elif isinstance(n, ast.Call) and n.args and isinstance(n.args[0], ast.Constant):
            f = n.func
            called = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            if called in ("import_module", "find_spec") and isinstance(n.args[0].value, str):
                yield Import(name, n.args[0].value, file, n.lineno)


def _owner(target: str, known: dict[str, Path]) -> str | None:
    """The project module an import names (`a.b.c` may be module a.b's attribute c), or None."""
    parts = target.split(".")
    for k in range(len(parts), 0, -1):
        cand = ".".join(parts[:k])
        if cand in known:
            return cand
    return None


def layer_of(module: str, layers: list[Layer]) -> tuple[Layer, str] | None:
    """The layer and the sibling (the longest listed prefix) a module belongs to."""
    best: tuple[Layer, str] | None = None
    for layer in layers:
        for n in layer.names:
            if (module == n or module.startswith(n + ".")) and (best is None or len(n) > len(best[1])):
                best = (layer, n)
    return best


def check(root: Path, lines: tuple[str, ...] = LAYERS, roots: tuple[str, ...] = ROOTS) -> list[str]:
    """One line per broken rule, naming the file, the line and the edge; empty when the contract holds."""
    layers = parse_layers(lines)
    known = modules(root, roots)
    problems: list[str] = []
    edges: dict[str, list[Import]] = {}
    for name, file in known.items():
        where = layer_of(name, layers)
        found = list(imports(name, file))
        edges[name] = found
        if where is None:
            if name in roots and not any(_owner(i.target, known) for i in found):
                continue  # a bare top-level package __init__
            problems.append(f"{file}: module {name} is in no layer of the contract (tests/layers.py)")
            continue
        layer, sibling = where
        for imp in found:
            dep = _owner(imp.target, known)
            if dep is None or dep == name:
                continue
            dep_where = layer_of(dep, layers)
            if dep_where is None:
                continue  # reported as a module in no layer
            dep_layer, dep_sibling = dep_where
            edge = f"{file}:{imp.line}: {name} imports {imp.target}"
            if dep_layer.index < layer.index:
                problems.append(f"{edge}: upward, {sibling} (layer {layer.index}) sits below {dep_sibling}")
            elif dep_layer.index == layer.index and layer.independent and dep_sibling != sibling:
                problems.append(f"{edge}: {sibling} and {dep_sibling} are independent siblings")
    problems += _stdlib_only(known, edges)
    return problems


def _stdlib_only(known: dict[str, Path], edges: dict[str, list[Import]]) -> list[str]:
    """The hook's modules and every idletune module they reach import the standard library only."""
    todo = [m for m in known if any(m == s or m.startswith(s + ".") for s in STDLIB_ONLY)]
    seen: set[str] = set()
    problems: list[str] = []
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        for imp in edges.get(m, []):
            dep = _owner(imp.target, known)
            if dep is not None:
                todo.append(dep)
                continue
            top = imp.target.split(".")[0]
            if top != "__future__" and top not in sys.stdlib_module_names:
                problems.append(
                    f"{imp.file}:{imp.line}: {m} imports {imp.target}: the trainer hook and what it "
                    "imports use the standard library only"
                )
    return problems


def main() -> int:
    problems = check(Path(__file__).resolve().parents[1])
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
