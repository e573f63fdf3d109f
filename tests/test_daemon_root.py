"""The daemon as deployed: `idletune serve` with a config file, on the testbed's readahead scenario.

In auto the change is applied, judged and kept with no human step; in observe nothing changes.
SIGTERM stops the daemon, which restores what it changed. Needs root and the testbed (torch)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.root,
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the testbed sets up devices and cgroups"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _audit(state: Path) -> list[dict[str, object]]:
    try:
        return [json.loads(x) for x in (state / "audit.jsonl").read_text().splitlines()]
    except FileNotFoundError:
        return []


@pytest.mark.parametrize("mode", ["auto", "observe"])
def test_the_daemon_tunes_the_testbed_in_auto_and_changes_nothing_in_observe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    pytest.importorskip("torch")
    from evals.testbed import runner as tb

    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    # The testbed's trainer hook and the daemon meet at this state dir's socket.
    monkeypatch.setenv("IDLETUNE_STATE_DIR", str(state))
    assert tb.stop() == []
    proc: subprocess.Popen[bytes] | None = None
    left: list[str] = []
    try:
        tb.run_scenario("readahead", "fault", seconds=3.0, keep=True, lifetime_s=300)
        dev = Path(str((tb.current() or {})["device"])).name
        ra = Path(f"/sys/block/{dev}/queue/read_ahead_kb")
        assert ra.read_text().strip() == "128"
        os.sync()  # the data set just written is not a writeback burst to blame
        config = tmp_path / "config.yaml"
        config.write_text(
            f"mode: {mode}\njob: {tb.JOB}\ndevices: [{dev}]\n"
            f"server: {{port: {_free_port()}}}\n"
            "loop: {review_every_s: 3}\n"
            "gate: {consensus: 2}\n"
            "effect: {window_s: 12, settle_s: 3}\n"
        )
        log = (tmp_path / "serve.log").open("wb")
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent.cli.main", "serve", "--config", str(config)],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + (90 if mode == "auto" else 30)
        verdicts: list[dict[str, object]] = []
        while time.monotonic() < deadline and proc.poll() is None:
            verdicts = [a for a in _audit(state) if a["trigger"] == "verdict"]
            if verdicts:
                break
            time.sleep(1)
        held = ra.read_text().strip()
        assert proc.poll() is None, (tmp_path / "serve.log").read_text()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0, (tmp_path / "serve.log").read_text()
        out = (tmp_path / "serve.log").read_text()
        applied = [a for a in _audit(state) if a["trigger"] == "diagnosis" and a.get("execution")]
        if mode == "auto":
            assert [(v["knob"], v["verdict"]) for v in verdicts] == [
                (f"block.read_ahead_kb@{dev}", "beneficial")
            ], out
            assert held == "2048"  # kept: still in force when the daemon was stopped
            # Applied by the daemon itself (tier 1, consensus), no person involved. Once the reads
            # flow, the next cause (the loader) may get its own change: each one is judged alike.
            ra_changes = [a for a in applied if a["knob"] == f"block.read_ahead_kb@{dev}"]
            assert len(ra_changes) == 1 and ra_changes[0]["rule"] == "tier1.consensus"
            assert all(str(a["rule"]).startswith(("tier0", "tier1")) for a in applied)
            # SIGTERM with the default on_exit: the original is back.
            assert ra.read_text().strip() == "128" and "restored: block.read_ahead_kb" in out
        else:
            assert held == "128" and applied == [] and verdicts == [], out
            assert ra.read_text().strip() == "128"
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(10)
        left = tb.stop()
    assert left == [], left


def test_idletune_reload_collectors_swaps_the_running_programs(tmp_path: Path) -> None:
    """The daemon with its eBPF collectors, observe mode; `idletune reload --collectors` answers
    with each program reloaded and the daemon goes on serving."""
    import urllib.request

    state = tmp_path / "state"
    state.mkdir(mode=0o755)
    port = _free_port()
    config = tmp_path / "config.yaml"
    config.write_text(f"mode: observe\nserver: {{port: {port}}}\n")
    env = {**os.environ, "IDLETUNE_STATE_DIR": str(state)}
    log = (tmp_path / "serve.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent.cli.main", "serve", "--config", str(config)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/mode", timeout=2).close()
                break
            except OSError:
                assert proc.poll() is None, (tmp_path / "serve.log").read_text()
                time.sleep(0.5)
        res = subprocess.run(
            [sys.executable, "-m", "agent.cli.main", "reload", "--collectors", "--config", str(config)],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=180,
        )  # fmt: skip
        assert res.returncode == 0, res.stdout + res.stderr
        assert "collectors: ok:" in res.stdout and "reloaded" in res.stdout, res.stdout
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/report", timeout=10) as r:
            assert json.loads(r.read())["sources"]["bpf"]["live"] is True
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
