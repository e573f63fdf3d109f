"""How numbers are written for people; answers and rule texts share it so grounding can trace them."""

from __future__ import annotations


def fmt(v: float) -> str:
    """Fewer decimals for bigger numbers, no exponent, no thousands separator."""
    if v != v:
        return "n/a"
    a = abs(v)
    if a >= 100:
        text = f"{v:.0f}"
    elif a >= 10:
        text = f"{v:.1f}"
    elif a >= 1:
        text = f"{v:.2f}"
    else:
        text = f"{v:.3f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def pct(fraction: float) -> str:
    """A 0..1 share as a whole percentage."""
    return f"{fraction * 100:.0f}%"
