"""The real kernel: apply and rollback through the CLI, kill -9 then restart, the operator's own write.

A loop device carries the block knob, vm.dirty_background_ratio the sysctl; each test
puts back what it touched whatever happens.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli.main import _register_all, app
from core.hostfs import HostFS
from guardrails.executor import Executor
from guardrails.filejournal import FileJournal, this_process
from guardrails.recovery import restore_orphans
from primitives.host import Host

pytestmark = [pytest.mark.root, pytest.mark.skipif(os.geteuid() != 0, reason="needs root")]
REPO = Path(__file__).resolve().parents[1]
BG_RATIO = Path("/proc/sys/vm/dirty_background_ratio")
BG_BYTES = Path("/proc/sys/vm/dirty_background_bytes")
_register_all()
runner = CliRunner()


def _read(p: Path) -> str:
    return p.read_text().strip()


@pytest.fixture
def loopdev(tmp_path: Path) -> Iterator[str]:
    image = tmp_path / "disk.img"
    image.write_bytes(b"\0" * (16 << 20))
    loop = subprocess.run(
        ["losetup", "--find", "--show", str(image)], check=True, capture_output=True, text=True
    ).stdout.strip()
    ra = Path(f"/sys/block/{Path(loop).name}/queue/read_ahead_kb")
    before = _read(ra)
    try:
        yield Path(loop).name
    finally:
        if ra.exists() and _read(ra) != before:
            ra.write_text(before)
        subprocess.run(["losetup", "-d", loop], check=False)


@pytest.fixture
def sysctl_guard() -> Iterator[dict[Path, str]]:
    original = {p: _read(p) for p in (BG_RATIO, BG_BYTES)}
    try:
        yield original
    finally:
        if {p: _read(p) for p in original} != original:
            (BG_BYTES if original[BG_BYTES] != "0" else BG_RATIO).write_text(
                original[BG_BYTES] if original[BG_BYTES] != "0" else original[BG_RATIO]
            )


def test_apply_shows_in_the_kernel_and_rollback_all_restores(
    loopdev: str, sysctl_guard: dict[Path, str]
) -> None:
    ra = Path(f"/sys/block/{loopdev}/queue/read_ahead_kb")
    ra_before = _read(ra)
    ra_goal = "1024" if ra_before != "1024" else "512"
    bg_goal = "5" if sysctl_guard[BG_RATIO] != "5" else "6"
    r = runner.invoke(app, ["apply", f"block.read_ahead_kb@{loopdev}={ra_goal}", "--yes"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(app, ["apply", f"vm.dirty_background_ratio={bg_goal}", "--yes"])
    assert r.exit_code == 0, r.output
    assert _read(ra) == ra_goal and _read(BG_RATIO) == bg_goal
    r = runner.invoke(app, ["rollback", "--all"])
    assert r.exit_code == 0 and r.output.count("reverted:") == 2, r.output
    assert _read(ra) == ra_before
    assert {p: _read(p) for p in sysctl_guard} == sysctl_guard


def test_kill_9_after_applying_then_the_next_start_restores(loopdev: str, tmp_path: Path) -> None:
    ra = Path(f"/sys/block/{loopdev}/queue/read_ahead_kb")
    before = _read(ra)
    goal = "2048" if before != "2048" else "1024"
    state = tmp_path / "state"
    script = textwrap.dedent(
        f"""
        import os, signal
        from core.hostfs import HostFS
        from core.proposal import Action
        from guardrails.executor import Executor
        from guardrails.filejournal import FileJournal, this_process
        from primitives.host import Host
        ex = Executor(Host(HostFS("/")), journal=FileJournal({str(state)!r}, owner=this_process()))
        r = ex.apply(Action(primitive="block.read_ahead_kb", target={loopdev!r}, value={goal}, reason="die"))
        assert r.status == "applied", r.reason
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, check=False)
    assert proc.returncode == -signal.SIGKILL
    assert _read(ra) == goal  # the dead process left its change
    j = FileJournal(state, owner=this_process())
    results = restore_orphans(Executor(Host(HostFS("/")), journal=j), j)
    assert [r.status for r in results] == ["reverted"], [r.reason for r in results]
    assert _read(ra) == before and j.open_changes() == []


def test_the_operators_own_write_is_respected(loopdev: str) -> None:
    ra = Path(f"/sys/block/{loopdev}/queue/read_ahead_kb")
    assert runner.invoke(app, ["apply", f"block.read_ahead_kb@{loopdev}=1024", "--yes"]).exit_code == 0
    ra.write_text("384")  # someone else's choice, by hand
    r = runner.invoke(app, ["rollback", "--all"])
    assert "released:" in r.output, r.output
    assert _read(ra) == "384"


@pytest.mark.slow
def test_a_harmful_readahead_cut_on_the_testbed_is_rolled_back_within_one_window() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("evals.testbed.runner")
    from agent.demo import _until_verdict
    from agent.loop import LoopConfig
    from agent.proposers.rules import RuleProposer, load_policies
    from agent.wiring import Feed, build_loop, live_feed
    from core.hostfs import HostFS
    from core.proposal import Action
    from evals.testbed import runner as tb
    from guardrails.effect import EffectConfig

    assert tb.stop() == []
    loop = None
    feed: Feed | None = None
    left: list[str] = []
    try:
        tb.run_scenario("readahead", "fault", seconds=3.0, keep=True, lifetime_s=300)
        dev = Path(str((tb.current() or {})["device"])).name
        ra = Path(f"/sys/block/{dev}/queue/read_ahead_kb")
        assert _read(ra) == "128"
        window = 15.0
        # Recommend mode: the loop itself changes nothing; only the injected action is made.
        feed = live_feed(HostFS("/"), interval_s=1.0, bpf=False, devices=[dev])
        loop = build_loop(
            LoopConfig(
                interval_s=1.0,
                review_every_s=5.0,
                job="testbed",
                effect=EffectConfig(window_s=window, settle_s=4.0),
            ),
            feed,
            mode="recommend",
            primary=None,
            rules=RuleProposer(load_policies([])),
        )
        loop.run(window + 2)  # a KPI history before the change
        d = loop.inject(
            Action(primitive="block.read_ahead_kb", target=dev, value=16, reason="deliberately harmful"),
            approved_by="root test",
        )
        assert d.decision == "approve" and _read(ra) == "16"
        t_applied = loop.events[-1].t
        j = _until_verdict(loop, window + 20, "block.read_ahead_kb")
        assert j is not None and j.verdict == "harmful" and not j.keep, j
        t_verdict = next(e.t for e in loop.events if e.kind == "verdict")
        timeline = [(round(e.t - t_applied, 1), e.kind, e.text[:80]) for e in loop.events if e.t >= t_applied]
        # A readahead change acts once the trainer's loaders reopen their shard files, which they
        # do every few seconds (here 7 or 12 s after the change, by where the cut falls in their
        # cycle); its window starts then.
        t_in_force = next(e.t for e in loop.events if e.kind == "info" and "in force after" in e.text)
        assert t_in_force - t_applied <= 15.0, timeline
        # Judged at the end of its first window: settle + window, plus the ticks a loaded 2-core
        # host takes to diagnose (a review can take seconds there).
        assert t_verdict - t_in_force <= 4.0 + window + 8.0, timeline
        assert _read(ra) == "128"
        assert "block.read_ahead_kb" in loop.gate.quarantined
    finally:
        if loop is not None:
            loop.shutdown()
        if feed is not None:
            feed.close()
        left = tb.stop()
    assert left == [], left  # the testbed's teardown left nothing behind
