"""Log2 histogram math: slots, merging, percentiles (unit and property tests)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bpf.hist import bucket_bounds, merge, percentile, slot_of, total

hists = st.dictionaries(st.integers(0, 40), st.integers(0, 10_000), max_size=12)
nonempty = hists.filter(lambda h: total(h) > 0)
quantiles = st.floats(0.0, 1.0, allow_nan=False)


def test_slot_of_matches_kernel_convention() -> None:
    assert slot_of(0) == 0  # the kernel folds 0 into slot 0
    assert slot_of(1) == 0
    assert slot_of(2) == 1
    assert slot_of(3) == 1
    assert slot_of(4) == 2
    assert slot_of(1023) == 9
    assert slot_of(1024) == 10
    assert slot_of(2**70) == 63


def test_bucket_bounds() -> None:
    assert bucket_bounds(0) == (1.0, 2.0)
    assert bucket_bounds(10) == (1024.0, 2048.0)
    with pytest.raises(ValueError):
        bucket_bounds(-1)


def test_percentile_empty_is_none() -> None:
    assert percentile({}, 0.5) is None
    assert percentile({3: 0}, 0.99) is None


def test_percentile_rejects_bad_quantile() -> None:
    with pytest.raises(ValueError):
        percentile({1: 1}, 1.5)


def test_percentile_single_bucket_interpolates() -> None:
    # 4 events in [1024, 2048): the i-th sits at 1024 + (i - 0.5)/4 * 1024.
    h = {10: 4}
    assert percentile(h, 0.25) == pytest.approx(1024 + 0.5 / 4 * 1024)
    assert percentile(h, 0.5) == pytest.approx(1024 + 1.5 / 4 * 1024)
    assert percentile(h, 1.0) == pytest.approx(1024 + 3.5 / 4 * 1024)


def test_percentile_picks_the_right_bucket() -> None:
    # 99 fast events and 1 slow one: p99 is the 99th event, p100 the slow one.
    h = {3: 99, 20: 1}
    p99 = percentile(h, 0.99)
    p100 = percentile(h, 1.0)
    assert p99 is not None and 8 <= p99 < 16
    assert p100 is not None and 2**20 <= p100 < 2**21


def test_merge_adds_and_skips_zeroes() -> None:
    assert merge([{1: 2, 3: 1}, {1: 5, 4: 0}, {}]) == {1: 7, 3: 1}


@given(nonempty, quantiles, quantiles)
def test_percentile_monotone_in_q(h: dict[int, int], a: float, b: float) -> None:
    lo, hi = sorted((a, b))
    pl, ph = percentile(h, lo), percentile(h, hi)
    assert pl is not None and ph is not None
    assert pl <= ph


@given(nonempty, quantiles)
def test_percentile_stays_in_bucket_of_qth_event(h: dict[int, int], q: float) -> None:
    # Expand into one slot per event, sorted: the q-th event is element ceil(q*N)-1.
    events = sorted(s for s, c in h.items() for _ in range(c))
    n = len(events)
    rank = min(max(math.ceil(q * n), 1), n)
    slot = events[rank - 1]
    v = percentile(h, q)
    assert v is not None
    low, high = bucket_bounds(slot)
    assert low <= v < high
    assert slot_of(v) == slot


@given(st.lists(hists, max_size=5))
def test_merge_is_additive(hs: list[dict[int, int]]) -> None:
    m = merge(hs)
    assert total(m) == sum(total(h) for h in hs)
    for slot in {s for h in hs for s in h}:
        assert m.get(slot, 0) == sum(h.get(slot, 0) for h in hs)


@given(hists, hists)
def test_merge_is_commutative(a: dict[int, int], b: dict[int, int]) -> None:
    assert merge([a, b]) == merge([b, a])
