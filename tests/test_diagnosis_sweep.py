"""Randomized sweep: many seeds per category (host size, GPUs, devices, interval, onset or
present throughout, severity, noise, distractors). A high top-1 rate across all of them
keeps the engine general rather than tuned to a handful of cases."""

from __future__ import annotations

import pytest

from core.diagnosis import Category
from tests.diag_helpers import synth

SEEDS = range(100, 130)


@pytest.mark.parametrize("category", list(Category), ids=lambda c: c.value)
def test_top1_rate(category: Category) -> None:
    wrong = []
    for seed in SEEDS:
        _, d = synth(category, seed)
        if d.top.category != category:
            wrong.append((seed, d.top.category.value))
    rate = 1 - len(wrong) / len(SEEDS)
    assert rate >= 0.85, wrong


@pytest.mark.parametrize("category", list(Category), ids=lambda c: c.value)
def test_top1_rate_with_a_source_missing(category: Category) -> None:
    """Hosts without eBPF, the trainer hook or PSI: fewer figures, still mostly right."""
    wrong = []
    for seed in SEEDS:
        _, d = synth(category, seed, degraded=True)
        if d.top.category != category:
            wrong.append((seed, d.top.category.value))
    rate = 1 - len(wrong) / len(SEEDS)
    assert rate >= 0.7, wrong
