"""The spec's two examples: a checkpoint writeback burst, and a healthy host."""

from __future__ import annotations

from pathlib import Path

from core.diagnosis import Category
from core.incident import load_incident
from tests.diag_helpers import run

BUNDLED = Path(__file__).resolve().parent.parent / "evals" / "incidents"


def test_checkpoint_writeback_burst_ranks_first_with_cited_evidence() -> None:
    inc = load_incident(BUNDLED / "checkpoint-writeback-burst")
    _, d = run(inc, inc.question)
    top = d.top
    assert top.category == Category.WRITEBACK_BURST
    assert top.confidence > 0.8
    assert top.confidence > 3 * d.causes[1].confidence
    cited = {e.metric for e in top.evidence}
    assert {"mem.dirty_mib", "io.vdb.lat_p99_us"} <= cited
    # The lost work is the flush (t=43..52), not the second pile-up at the end of the window.
    assert len(d.lost_work) == 1
    assert 40 <= d.lost_work[0].t_start <= 46 and d.lost_work[0].t_end <= 58
    dirty = next(e for e in top.evidence if e.metric == "mem.dirty_mib")
    assert dirty.t_start is not None and dirty.t_start < d.lost_work[0].t_start


def test_healthy_host_is_none() -> None:
    inc = load_incident(BUNDLED / "healthy-host")
    _, d = run(inc, inc.question)
    assert d.top.category == Category.NONE
    assert d.top.confidence > 0.8
    assert d.lost_work == []
    assert all(c.confidence < 0.2 for c in d.causes[1:])


def test_every_category_is_ranked_once() -> None:
    inc = load_incident(BUNDLED / "healthy-host")
    _, d = run(inc)
    assert sorted(c.category.value for c in d.causes) == sorted(c.value for c in Category)
    assert all(0.0 <= c.confidence <= 1.0 for c in d.causes)
    assert [c.confidence for c in d.causes] == sorted((c.confidence for c in d.causes), reverse=True)
