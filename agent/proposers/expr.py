"""Arithmetic a policy may write for a value or a step: numbers, a few names, + - * / //, min, max,
round, pow2.

Parsed once when the policy is loaded, so a bad expression is a policy error with a
line number, never a surprise while proposing. No attribute access, no calls but
the three listed, no names but the host's figures.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping

NAMES = {
    "cores": "CPUs of the host",
    "gpus": "GPUs of the host",
    "numa_nodes": "NUMA nodes of the host",
    "jobs": "training jobs on the host (at least 1)",
    "job_gpus": "GPUs of the target job (0 for a job training on the CPU; 1 when the target is not a job)",
    "cores_per_job": "cores / jobs",
    "cores_per_gpu": "cores / gpus (cores when there is no GPU)",
    "current": "the knob's current value",
    "peak": "the knob's highest value on any target (GPU power limits: also over the window)",
    "write_mib_s": "the fastest write rate any block device reached over the window, MiB/s (0 with none)",
}
_BINOPS: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
}


def pow2(x: float) -> float:
    """The smallest power of two at or above x (1 at or below 1): sizes as an operator writes them."""
    return float(1 << max(0, math.ceil(math.log2(x)))) if x > 1 else 1.0


_FUNCS: dict[str, Callable[..., float]] = {"min": min, "max": max, "round": round, "pow2": pow2}


class ExprError(ValueError):
    pass


class Expr:
    def __init__(self, text: str) -> None:
        self.text = text
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError as e:
            raise ExprError(f"cannot parse {text!r}: {e.msg}") from e
        self._check(tree.body)
        self._tree = tree.body

    def _check(self, node: ast.AST) -> None:
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            return
        if isinstance(node, ast.Name):
            if node.id not in NAMES:
                raise ExprError(f"unknown name {node.id!r} in {self.text!r} (known: {', '.join(NAMES)})")
            return
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            self._check(node.left)
            self._check(node.right)
            return
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            self._check(node.operand)
            return
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _FUNCS:
            if node.keywords or not node.args:
                raise ExprError(f"{node.func.id}() takes positional arguments only, in {self.text!r}")
            for a in node.args:
                self._check(a)
            return
        allowed = "numbers, names, + - * / //, min, max, round and pow2"
        raise ExprError(f"{self.text!r}: only {allowed} are allowed")

    def evaluate(self, names: Mapping[str, float]) -> float:
        return float(self._eval(self._tree, names))

    def _eval(self, node: ast.AST, names: Mapping[str, float]) -> float:
        if isinstance(node, ast.Constant):
            assert isinstance(node.value, int | float), "checked at parse time"
            return float(node.value)
        if isinstance(node, ast.Name):
            return names[node.id]
        if isinstance(node, ast.BinOp):
            left, right = self._eval(node.left, names), self._eval(node.right, names)
            if isinstance(node.op, ast.Div | ast.FloorDiv) and right == 0:
                raise ExprError(f"division by zero in {self.text!r}")
            return _BINOPS[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp):
            return -self._eval(node.operand, names)
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        return float(_FUNCS[node.func.id](*(self._eval(a, names) for a in node.args)))

    def __repr__(self) -> str:
        return f"Expr({self.text!r})"
