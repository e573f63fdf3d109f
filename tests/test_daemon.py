"""The daemon: the closed loop in the configured mode, reconfigured while it runs.

On the simulated readahead host of test_loop: a config in auto fixes the knob with no human
step and observe changes nothing; a reload that narrows a bound below a held value restores
it, a reload of a broken file keeps the running config; a change of the file is picked up;
the mode changes at run time through the API (token, audited)."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from agent.config.load import load_config
from agent.daemon import Daemon, build_daemon
from agent.proposers.rules import RuleProposer, load_policies
from agent.service.app import create_app
from agent.service.guard import Guard, fs_host
from agent.service.observers import ReplayObserver
from agent.service.state import ServiceState
from agent.wiring import live_feed
from core.collection import CAUSES
from core.hostfs import HostFS
from primitives.host import Host
from tests.bpf_helpers import FakeBcc, all_maps, fake_host
from tests.test_loop import Sim

TOKEN = "t" * 32
AUTH = {"authorization": f"Bearer {TOKEN}"}
BASE = """\
mode: {mode}
job: job
loop:
  review_every_s: 5
effect:
  window_s: 20
  settle_s: 2
"""


def _rules(cfg: object) -> tuple[None, RuleProposer]:
    return None, RuleProposer(load_policies([]))


def _daemon(tmp_path: Path, text: str) -> tuple[Sim, Daemon, Path]:
    sim = Sim(tmp_path / "root")
    feed = sim.feed()
    path = tmp_path / "config.yaml"
    path.write_text(text)
    d = build_daemon(load_config(path), feed, state=tmp_path / "state", proposers_for=_rules)
    return sim, d, path


def _ticks(d: Daemon, n: int) -> None:
    for _ in range(n):
        d.tick()


def _audit(tmp_path: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in (tmp_path / "state/audit.jsonl").read_text().splitlines()]


def test_in_auto_the_change_is_applied_judged_and_kept_with_no_human_step(tmp_path: Path) -> None:
    sim, d, _ = _daemon(tmp_path, BASE.format(mode="auto"))
    _ticks(d, 60)
    assert sim.ra() == 2048
    verdicts = [a for a in _audit(tmp_path) if a["trigger"] == "verdict"]
    assert [v["verdict"] for v in verdicts] == ["beneficial"]
    # SIGTERM: the default on_exit restores the original, and says so.
    assert d.stop() == ["restored: block.read_ahead_kb@loop0: reverted: original values restored"]
    assert sim.ra() == 128


def test_in_observe_nothing_changes(tmp_path: Path) -> None:
    sim, d, _ = _daemon(tmp_path, BASE.format(mode="observe"))
    _ticks(d, 60)
    assert sim.ra() == 128
    assert not (tmp_path / "state/audit.jsonl").exists() or not any(
        a.get("execution") for a in _audit(tmp_path)
    )


def test_on_exit_keep_leaves_the_change(tmp_path: Path) -> None:
    sim, d, _ = _daemon(tmp_path, BASE.format(mode="auto") + "on_exit: keep\n")
    _ticks(d, 60)
    d.stop()
    assert sim.ra() == 2048


def test_a_reload_that_narrows_a_bound_below_the_held_value_restores_it(tmp_path: Path) -> None:
    sim, d, path = _daemon(tmp_path, BASE.format(mode="auto"))
    _ticks(d, 60)
    assert sim.ra() == 2048 and len(d.loop.executor.managed) == 1
    narrowed = BASE.format(mode="auto") + "primitives:\n  block.read_ahead_kb:\n    bounds: [16, 1024]\n"
    path.write_text(narrowed)
    out = d.reload()
    assert out.ok and "restored block.read_ahead_kb@loop0" in out.message, out.message
    assert sim.ra() == 128 and d.loop.executor.managed == []
    assert d.loop.gate.config.bounds == {"block.read_ahead_kb": (16, 1024)}
    config_lines = [a for a in _audit(tmp_path) if a["trigger"] == "config"]
    assert any(a.get("rollback") for a in config_lines)
    # The running loop keeps its collectors and its window: the next tick goes on from there.
    n = len(d.loop.window)
    d.tick()
    assert len(d.loop.window) == n + 1


def test_a_reload_that_keeps_the_held_value_allowed_restores_nothing(tmp_path: Path) -> None:
    sim, d, path = _daemon(tmp_path, BASE.format(mode="auto"))
    _ticks(d, 60)
    path.write_text(BASE.format(mode="auto") + "gate:\n  cooldown_s: 10\n")
    out = d.reload()
    assert out.ok and "restored" not in out.message
    assert sim.ra() == 2048 and d.loop.gate.config.cooldown_s == 10


def test_switching_a_primitive_off_restores_its_held_change(tmp_path: Path) -> None:
    sim, d, path = _daemon(tmp_path, BASE.format(mode="auto"))
    _ticks(d, 60)
    path.write_text(BASE.format(mode="auto") + "primitives:\n  block.read_ahead_kb: {enabled: false}\n")
    assert d.reload().ok
    assert sim.ra() == 128
    _ticks(d, 40)  # and the gate never applies it again
    assert sim.ra() == 128
    rules = {a.get("rule") for a in _audit(tmp_path) if a["trigger"] == "diagnosis"}
    assert "disabled" in rules


def test_a_reload_of_a_broken_file_keeps_the_running_config(tmp_path: Path) -> None:
    sim, d, path = _daemon(tmp_path, BASE.format(mode="auto") + "gate:\n  cooldown_s: 42\n")
    _ticks(d, 60)
    before = d.loop.gate.config
    path.write_text("gate:\n  cooldown_s: [42\n")  # a syntax error
    out = d.reload()
    assert not out.ok and f"{path}:" in out.message and "running one stays" in out.message
    assert d.loop.gate.config == before and d.mode == "auto" and sim.ra() == 2048
    assert d.last_reload == out
    refused = [a for a in _audit(tmp_path) if a["trigger"] == "config"]
    assert refused and "YAML syntax" in str(refused[-1]["reason"])


def test_a_changed_file_is_reloaded_at_the_next_tick(tmp_path: Path) -> None:
    sim, d, path = _daemon(tmp_path, BASE.format(mode="observe"))
    _ticks(d, 3)
    time.sleep(0.01)  # a new mtime even on coarse clocks
    path.write_text(BASE.format(mode="auto") + "\n")
    d.tick()
    assert d.mode == "auto"
    _ticks(d, 60)
    assert sim.ra() == 2048


def test_a_mode_set_at_run_time_stands_until_the_file_changes_the_mode(tmp_path: Path) -> None:
    _, d, path = _daemon(tmp_path, BASE.format(mode="observe"))
    assert d.set_mode("recommend", "ops").ok and d.mode == "recommend"
    path.write_text(BASE.format(mode="observe") + "gate:\n  cooldown_s: 5\n")
    d.reload()
    assert d.mode == "recommend"  # the file still says observe, as before: the person's choice stands
    path.write_text(BASE.format(mode="auto"))
    d.reload()
    assert d.mode == "auto"


def test_requests_from_other_threads_run_on_the_loop_thread(tmp_path: Path) -> None:
    _, d, _ = _daemon(tmp_path, BASE.format(mode="observe"))
    seen: list[str] = []
    d.loop.run = lambda duration_s, sleep=None, after_step=None: _spin(d, after_step)  # type: ignore[method-assign]

    def probe() -> object:
        seen.append(threading.current_thread().name)
        return d.set_mode("auto", "test")

    d.start()
    try:
        out = d.submit(probe)  # type: ignore[arg-type]
    finally:
        d.loop.stop()
        d._thread.join(5)  # type: ignore[union-attr]
    assert out.ok and seen == ["idletune-loop"] and d.mode == "auto"


def _spin(d: Daemon, after_step: object) -> None:
    while not d.loop.stopping.is_set():
        after_step()  # type: ignore[operator]
        time.sleep(0.01)


def test_the_api_changes_the_mode_with_the_token_and_audits_it(tmp_path: Path) -> None:
    _, d, _ = _daemon(tmp_path, BASE.format(mode="observe"))
    incident = Path(__file__).parent.parent / "evals/incidents/checkpoint-writeback-burst"
    state = ServiceState(
        ReplayObserver(incident), Guard(tmp_path / "state", lambda: fs_host(d.loop.executor.host)), control=d
    )
    client = TestClient(create_app(state, TOKEN))
    assert client.get("/v1/mode").json()["mode"] == "observe"
    assert client.post("/v1/mode", json={"mode": "auto"}).status_code == 401
    assert client.post("/v1/mode", headers=AUTH, json={"mode": "fast"}).status_code == 422
    r = client.post("/v1/mode", headers=AUTH, json={"mode": "auto", "by": "ops"})
    assert r.status_code == 200 and r.json()["mode"] == "auto" and d.mode == "auto"
    modes = [a for a in _audit(tmp_path) if a["trigger"] == "mode"]
    assert modes and "observe -> auto, by ops" in str(modes[-1]["reason"])
    r = client.post("/v1/reload", headers=AUTH, json={})
    assert r.status_code == 200 and r.json()["last_reload"]["ok"]


def test_without_a_loop_the_mode_endpoints_say_so(tmp_path: Path) -> None:
    incident = Path(__file__).parent.parent / "evals/incidents/checkpoint-writeback-burst"
    sim = Sim(tmp_path / "root")
    state = ServiceState(ReplayObserver(incident), Guard(tmp_path / "state", lambda: fs_host(Host(sim.fs))))
    client = TestClient(create_app(state, TOKEN))
    assert client.get("/v1/mode").status_code == 409
    r = client.post("/v1/reload", headers=AUTH, json={"collectors": True})
    assert r.status_code == 409


@pytest.mark.parametrize("bad", ["", "x" * 65, "a b"])
def test_the_mode_body_is_strict(tmp_path: Path, bad: str) -> None:
    _, d, _ = _daemon(tmp_path, BASE.format(mode="observe"))
    incident = Path(__file__).parent.parent / "evals/incidents/checkpoint-writeback-burst"
    state = ServiceState(
        ReplayObserver(incident), Guard(tmp_path / "state", lambda: fs_host(d.loop.executor.host)), control=d
    )
    client = TestClient(create_app(state, TOKEN))
    r = client.post("/v1/mode", headers=AUTH, json={"mode": "auto", "by": bad})
    assert r.status_code == 422 and d.mode == "observe"


def test_the_process_reloads_on_sighup_and_exits_cleanly_on_sigterm(tmp_path: Path) -> None:
    """`idletune serve` on this host in observe mode (nothing is written): SIGHUP reloads the file
    (audited), a run-time mode change goes through the API, SIGTERM ends it with status 0 after
    its cleanup ran (uvicorn re-raises the signal it caught; the daemon must still stop its loop)."""
    import os
    import signal
    import socket
    import subprocess
    import sys
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    state = tmp_path / "state"
    config = tmp_path / "config.yaml"
    config.write_text(f"mode: observe\nbpf: false\nserver: {{port: {port}}}\n")
    env = {**os.environ, "IDLETUNE_STATE_DIR": str(state)}
    env.pop("IDLETUNE_CONFIG", None)
    log = tmp_path / "serve.log"
    root = Path(__file__).resolve().parent.parent
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent.cli.main", "serve", "--config", str(config)],
            cwd=root,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(base + "/v1/mode", timeout=2) as r:
                    assert json.loads(r.read())["mode"] == "observe"
                    break
            except OSError:
                assert proc.poll() is None, log.read_text()
                time.sleep(0.3)
        config.write_text(f"mode: observe\nbpf: false\nserver: {{port: {port}}}\ngate: {{cooldown_s: 7}}\n")
        proc.send_signal(signal.SIGHUP)
        token = (state / "token").read_text().strip()
        req = urllib.request.Request(
            base + "/v1/mode",
            data=json.dumps({"mode": "recommend", "by": "test"}).encode(),
            headers={"authorization": f"Bearer {token}", "content-type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=20) as r:
            assert json.loads(r.read())["mode"] == "recommend"
        status = subprocess.run(
            [sys.executable, "-m", "agent.cli.main", "status", "--json"],
            cwd=root, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert json.loads(status.stdout)["agent"]["pid"] == proc.pid, status.stdout + status.stderr
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not any(
            "config reloaded" in str(a.get("reason")) for a in _audit(tmp_path)
        ):
            time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0, log.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    triggers = [(a["trigger"], a.get("reason")) for a in _audit(tmp_path)]
    assert ("mode", "mode observe -> recommend, by test") in triggers
    assert any(t == "config" and "config reloaded" in str(r) for t, r in triggers), triggers
    assert not (state / "agent.json").exists()  # the running agent's snapshot goes with it


class _FakeLive:
    def __init__(self, ok: bool) -> None:
        self.ok = ok
        self.calls = 0

    def reload_collectors(self) -> tuple[bool, str]:
        self.calls += 1
        return self.ok, "bpf: block, sched reloaded" if self.ok else "bpf: sched kept running: compile failed"


@pytest.mark.parametrize("ok", [True, False])
def test_the_api_reloads_the_collectors_and_says_how_it_went(tmp_path: Path, ok: bool) -> None:
    _, d, _ = _daemon(tmp_path, BASE.format(mode="observe"))
    live = _FakeLive(ok)
    d.feed.live = live  # type: ignore[assignment]
    incident = Path(__file__).parent.parent / "evals/incidents/checkpoint-writeback-burst"
    state = ServiceState(
        ReplayObserver(incident), Guard(tmp_path / "state", lambda: fs_host(d.loop.executor.host)), control=d
    )
    client = TestClient(create_app(state, TOKEN))
    assert client.post("/v1/reload", json={"collectors": True}).status_code == 401 and live.calls == 0
    r = client.post("/v1/reload", headers=AUTH, json={"collectors": True})
    assert r.status_code == 200 and live.calls == 1
    assert r.json()["collectors"] == {"ok": ok, "message": live.reload_collectors()[1]}
    reasons = [str(a.get("reason")) for a in _audit(tmp_path) if a["trigger"] == "config"]
    assert any(("collectors reloaded" if ok else "collectors: bpf: sched kept") in x for x in reasons)


# -- collection settings on the live sources ----------------------------------------------------

HOT_FIGURE = "sched.ctx_switches_per_s"  # the scheduler collector's, in each interval a span covered


class _Live:
    """The daemon on the live sources of a fake eBPF host (bcc faked, no kernel). Its spans keep
    time by a clock that moves a second at each interval measured()."""

    def __init__(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
        self.ns = 1000 * 10**9
        monkeypatch.setattr(time, "monotonic_ns", lambda: self.ns)
        self.bcc = FakeBcc()
        self.bcc.tables = all_maps()
        monkeypatch.setitem(sys.modules, "bcc", self.bcc)
        monkeypatch.setattr(os, "geteuid", lambda: 0)
        root = fake_host(tmp_path / "root")
        self.path = tmp_path / "config.yaml"
        self.path.write_text(text)
        loaded = load_config(self.path)
        cfg = loaded.config
        feed = live_feed(HostFS(root), interval_s=1.0, collection=cfg.collection, cost=cfg.cost)
        assert feed.live is not None and feed.live.collector.statuses["bpf"].live
        self.live = feed.live
        self.d = build_daemon(loaded, feed, state=tmp_path / "state", proposers_for=_rules)

    def measured(self, n: int) -> list[bool]:
        """Whether each of the next `n` intervals measured the hot path."""
        out = []
        for _ in range(n):
            self.ns += 10**9
            self.d.tick()
            out.append(HOT_FIGURE in self.d.loop.window.samples[-1].m)
        return out


def test_a_reload_applies_new_collection_settings_without_restarting_the_collectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The kernel's run-time statistics stay out of a test: the fake host has no bpf(2).
    text = "mode: observe\ncost: {bpf_stats: false}\ncollection: {duty_period_s: 10}\n"
    h = _Live(tmp_path, monkeypatch, text)
    d, live = h.d, h.live
    try:
        assert h.measured(20).count(True) == 2  # one interval in ten
        loads = len(h.bcc.loaded)
        h.path.write_text(text.replace("duty_period_s: 10", "duty_period_s: 4"))
        d.reload()
        assert live.duty.policy.config.duty_period_s == 4.0 and live.level.duty_period_s == 4.0
        assert h.measured(20).count(True) == 5  # one in four
        h.path.write_text(text.replace("duty_period_s: 10", "duty: false"))
        d.reload()
        lvl = live.level
        assert lvl.level == "full" and lvl.reason == "the duty cycle is turned off (collection.duty: false)"
        assert all(h.measured(12))
        # The same programs throughout: only their hot tracepoints came and went.
        assert len(h.bcc.loaded) == loads and all(b.cleanups == 0 for b in h.bcc.loaded)
        reasons = [str(a.get("reason")) for a in _audit(tmp_path) if a["trigger"] == "config"]
        assert any("collection duty_period_s 10.0 -> 4.0; level duty" in r for r in reasons), reasons
        off = "collection duty true -> false, duty_period_s 4.0 -> 10.0; level full"
        assert any(off in r for r in reasons), reasons
        assert not any("take effect at the next start" in r for r in reasons)
    finally:
        d.stop()


def test_a_reload_names_the_settings_read_at_start_only(tmp_path: Path) -> None:
    _, d, path = _daemon(tmp_path, BASE.format(mode="observe"))
    text = BASE.format(mode="observe").replace("loop:\n", "loop:\n  interval_s: 2\n")
    path.write_text(text + "cost: {budget_cores: 0.02}\n")
    out = d.reload()
    assert out.ok and "loop.interval_s, cost take effect at the next start" in out.message


def test_metrics_carry_the_collection_level_and_the_share_the_hot_path_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """/metrics as `idletune serve` wires it: the loop's window, summarised from the live host."""
    from prometheus_client.parser import text_string_to_metric_families

    from agent.service.observers import LoopObserver

    text = "mode: observe\ncost: {bpf_stats: false}\n"
    h = _Live(tmp_path, monkeypatch, text)
    d = h.d
    assert d.feed.report_later is not None
    state = ServiceState(
        LoopObserver(h.live, d.loop.window, d.feed.report_later),
        Guard(tmp_path / "state", lambda: fs_host(d.loop.executor.host)),
        control=d,
    )
    client = TestClient(create_app(state, TOKEN))

    def scrape() -> dict[str, dict[str, float]]:
        state.refresh()
        body = client.get("/metrics").text
        fams = text_string_to_metric_families(body)
        return {
            f.name: {",".join(s.labels.values()): s.value for s in f.samples}
            for f in fams
            if f.name.startswith("idletune_collection_")
        }

    try:
        assert h.measured(20).count(True) == 2
        m = scrape()
        assert m["idletune_collection_level"] == {"duty": 1.0, "full": 0.0}
        reasons = m["idletune_collection_reason"]
        assert reasons["no_trigger"] == 1.0 and sum(reasons.values()) == 1.0
        assert set(reasons) == set(CAUSES)
        assert m["idletune_collection_hot_share"][""] == pytest.approx(0.1)  # two intervals of twenty
        h.path.write_text(text + "collection: {duty: false}\n")
        d.reload()
        h.measured(5)
        m = scrape()
        assert m["idletune_collection_level"] == {"duty": 0.0, "full": 1.0}
        assert m["idletune_collection_reason"]["duty_off"] == 1.0
    finally:
        d.stop()


def test_a_recording_has_no_collection_level_in_its_metrics(tmp_path: Path) -> None:
    incident = Path(__file__).parent.parent / "evals/incidents/checkpoint-writeback-burst"
    state = ServiceState(ReplayObserver(incident), Guard(tmp_path / "state", lambda: Host(HostFS(tmp_path))))
    body = TestClient(create_app(state, TOKEN)).get("/metrics").text
    assert "idletune_cause_confidence" in body and "idletune_collection_" not in body


def test_the_daemons_llm_proposer_opens_the_model_the_config_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`proposer: {kind: llm}` with `llm: {model: PATH}`: the daemon's proposer opens that model,
    not the embedded default."""
    from agent.daemon import config_proposers
    from agent.proposers import llm as llm_module

    cfg_file = tmp_path / "config.yaml"
    model = tmp_path / "mine.gguf"
    cfg_file.write_text(f"proposer: {{kind: llm}}\nllm: {{model: {model}, timeout_s: 3}}\n")
    seen: list[object] = []
    real = llm_module.build

    def spy(settings: object = None, **kw: object) -> object:
        seen.append(settings)
        return real(settings, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(llm_module, "build", spy)
    primary, _ = config_proposers(load_config(cfg_file).config)
    assert len(seen) == 1
    settings = seen[0]
    assert getattr(settings, "model", None) == model and getattr(settings, "timeout_s", None) == 3
    assert primary is None  # no such file: the rules answer
