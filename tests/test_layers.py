"""The layers contract holds; in a scratch copy of the tree one bad import breaks it, naming the edge."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.layers import ROOTS, check

REPO = Path(__file__).resolve().parents[1]


def test_the_tree_keeps_the_layers_contract() -> None:
    problems = check(REPO)
    assert problems == [], "\n".join(problems)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The project's packages, Python files only."""
    root = tmp_path_factory.mktemp("tree")
    keep_py = shutil.ignore_patterns("__pycache__", "*.json", "*.jsonl", "*.yaml", "*.c", "*.h", "*.md")
    for pkg in ROOTS:
        shutil.copytree(REPO / pkg, root / pkg, ignore=keep_py)
    return root


@pytest.fixture
def tree(scratch: Path, tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    shutil.copytree(scratch, root)
    return root


def _append(root: Path, rel: str, text: str) -> int:
    """Append lines to a module; returns the line number of the first one."""
    f = root / rel
    before = f.read_text()
    f.write_text(before + "\n" + text + "\n")
    return before.count("\n") + 2


@pytest.mark.parametrize(
    ("rel", "line", "edge"),
    [
        ("core/sample.py", "from agent.loop import ControlLoop", "core.sample imports agent.loop"),
        ("guardrails/gate.py", "import agent.proposers.rules", "guardrails.gate imports agent.proposers"),
        ("primitives/base.py", "from guardrails import gate", "primitives.base imports guardrails.gate"),
        ("agent/loop.py", "from evals.harness import run", "agent.loop imports evals.harness.run"),
        ("agent/sources/procfs.py", "from agent.diagnosis import engine", "imports agent.diagnosis.engine"),
        ("evals/scoring.py", "from agent.cli.common import operator_jobs", "imports agent.cli.common"),
    ],
)
def test_an_upward_import_fails_and_names_the_edge(tree: Path, rel: str, line: str, edge: str) -> None:
    no = _append(tree, rel, line)
    [problem] = check(tree)
    assert f"{rel}:{no}:" in problem and edge in problem and "upward" in problem


def test_imports_inside_functions_and_for_type_checking_count(tree: Path) -> None:
    _append(tree, "core/window.py", "def f() -> None:\n    from agent.loop import ControlLoop")
    _append(tree, "core/window.py", "if False:\n    from guardrails.gate import Gate")
    _append(tree, "core/window.py", "import importlib\nimportlib.import_module('agent.live')")
    problems = check(tree)
    assert len(problems) == 3 and all("core.window imports" in p for p in problems)
    for edge in ("agent.loop", "guardrails.gate", "agent.live"):
        assert any(edge in p for p in problems), edge


def test_relative_imports_are_resolved(tree: Path) -> None:
    _append(tree, "agent/sources/procfs.py", "from ..loop import ControlLoop")
    [problem] = check(tree)
    assert "agent.sources.procfs imports agent.loop.ControlLoop" in problem


def test_independent_siblings_may_not_import_each_other(tree: Path) -> None:
    _append(tree, "bpf/hist.py", "from primitives import catalog")
    [problem] = check(tree)
    assert "bpf.hist imports primitives.catalog" in problem and "independent" in problem


def test_downward_and_same_layer_imports_pass(tree: Path) -> None:
    _append(tree, "agent/cli/report.py", "from evals import harness")
    _append(tree, "agent/wiring.py", "from agent.sources import procfs")
    _append(tree, "guardrails/gate.py", "from core import window")
    assert check(tree) == []


def test_a_module_in_no_layer_is_reported(tree: Path) -> None:
    (tree / "agent" / "stray.py").write_text("x = 1\n")
    [problem] = check(tree)
    assert "module agent.stray is in no layer" in problem


def test_the_trainer_hook_stays_standard_library_only(tree: Path) -> None:
    _append(tree, "core/cpulist.py", "import pydantic")  # the hook imports core.cpulist
    _append(tree, "core/sample.py", "import yaml")  # the hook does not reach core.sample
    [problem] = check(tree)
    assert "core.cpulist imports pydantic" in problem and "standard library only" in problem
