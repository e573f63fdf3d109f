"""The live loop's gate starts from the journal's history, or from none for a host set up anew."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.loop import LoopConfig
from agent.proposers.rules import RuleProposer, load_policies
from agent.wiring import Feed, build_loop
from core.sample import Sample
from guardrails.filejournal import FileJournal
from guardrails.journal import ChangeRecord
from primitives.host import Host
from tests.fakes.fake_kernel import make_root


def _record(j: FileJournal) -> None:
    c = ChangeRecord.model_validate(
        {"id": j.next_id(), "primitive": "vm.swappiness", "target": None, "value": 30, "before": 60,
         "state": "applied", "reason": "test", "saved": [], "revert": []}
    )  # fmt: skip
    j.applied(c)
    j.closed(c.model_copy(update={"state": "reverted"}))
    j.quarantined(c.id, "vm.swappiness")


@pytest.mark.parametrize("fresh", [False, True])
def test_the_gate_history_comes_from_the_journal_unless_fresh(tmp_path: Path, fresh: bool) -> None:
    state = tmp_path / "state"
    _record(FileJournal(state))
    host = Host(make_root(tmp_path / "root"))
    feed = Feed(sample=lambda: Sample(t=0.0), report=lambda w: pytest.fail("no review expected"), host=host)
    loop = build_loop(
        LoopConfig(interval_s=1.0),
        feed,
        mode="recommend",
        primary=None,
        rules=RuleProposer(load_policies([])),
        state=state,
        fresh_history=fresh,
    )
    try:
        moves = [(m.primitive, m.kind) for m in loop.gate.moves]
        if fresh:
            assert moves == [] and loop.gate.quarantined == {}
        else:
            assert moves == [("vm.swappiness", "apply"), ("vm.swappiness", "revert")]
            assert set(loop.gate.quarantined) == {"vm.swappiness"}
    finally:
        loop.shutdown()
