"""TrainerSource: the socket, pooling of ranks, and what it does with bad peers."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent.hook.counters import Counters
from agent.sources.base import Source
from agent.sources.trainer import TrainerSource
from agent.sources.trainer_control import TrainerControl
from core.proposal import Action
from guardrails.executor import Executor
from primitives.channels import TrainerChannel
from primitives.host import Host
from tests.fakes.fake_kernel import make_root
from tests.hook_helpers import wait_for


@pytest.fixture
def agent(tmp_path: Path) -> Iterator[TrainerSource]:
    src = TrainerSource(str(tmp_path))
    assert src.start().live
    yield src
    src.close()


class Peer:
    """A hand-driven hook: raw JSON lines over the agent's socket."""

    def __init__(self, path: str) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.sock.settimeout(2.0)
        self.buf = b""

    def send(self, **msg: Any) -> None:
        self.sock.sendall(json.dumps(msg).encode() + b"\n")

    def hello(self, job: str, pid: int, rank: int | None, **extra: Any) -> None:
        caps = {"loader.workers": {"settable": True}, "loader.cpu_affinity": {"settable": rank != 1}}
        self.send(
            type="hello",
            v=1,
            job=job,
            pid=pid,
            rank=rank,
            knobs={"loader.workers": 4},
            capabilities=caps,
            workers=[pid + 100],
            **extra,
        )

    def recv(self) -> dict[str, Any]:
        while b"\n" not in self.buf:
            self.buf += self.sock.recv(4096)
        line, self.buf = self.buf.split(b"\n", 1)
        msg: dict[str, Any] = json.loads(line)
        return msg


def metrics(**kw: Any) -> dict[str, Any]:
    base = {
        "type": "metrics",
        "interval_s": 1.0,
        "steps": 0,
        "step_s": 0.0,
        "wait_s": 0.0,
        "active_s": 0.0,
        "samples": None,
    }
    base.update(kw)
    return base


def test_protocols(agent: TrainerSource) -> None:
    assert isinstance(agent, Source) and agent.name == "trainer"
    assert isinstance(TrainerControl(agent), TrainerChannel)


def test_socket_mode_and_default_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IDLETUNE_STATE_DIR", str(tmp_path / "new" / "dir"))
    src = TrainerSource()
    assert src.start().live
    try:
        st = os.stat(src.path)
        assert src.path == str(tmp_path / "new" / "dir" / "trainer.sock")
        assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o660
    finally:
        src.close()
    assert not os.path.exists(src.path)


def test_stale_socket_is_replaced_and_a_live_agent_is_not(tmp_path: Path) -> None:
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(tmp_path / "trainer.sock"))
    stale.close()  # what a SIGKILLed agent leaves behind
    first = TrainerSource(str(tmp_path))
    assert first.start().live
    second = TrainerSource(str(tmp_path))
    st = second.start()
    assert not st.live and "another idletune agent" in st.reason
    second.close()
    assert os.path.exists(first.path)  # the refused agent did not remove the live one's socket
    first.close()


def test_unusable_state_dir_is_not_live(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    st = TrainerSource(str(tmp_path / "file")).start()
    assert not st.live and "cannot listen" in st.reason


def test_ranks_of_one_job_pool(agent: TrainerSource) -> None:
    me = os.getpid()
    r0, r1 = Peer(agent.path), Peer(agent.path)
    r0.hello("LLaMA 7B.pretrain", me, 0)
    r1.hello("LLaMA 7B.pretrain", 1001, 1)  # pid as a container sees itself
    r1.send(**metrics(steps=10, step_s=2.0, wait_s=1.0, active_s=2.0, samples=80, interval_s=2.0))
    r0.send(**metrics(steps=10, step_s=1.0, wait_s=0.0, active_s=1.0, samples=80, interval_s=1.0))
    job = "llama-7b-pretrain"
    assert wait_for(
        lambda: (
            len(agent.jobs()) == 1 and agent._pools.get(job) is not None and len(agent._pools[job].rates) == 2
        )
    )
    m = agent.collect()
    assert m == {
        f"trainer.{job}.step_time_ms": pytest.approx(150.0),
        f"trainer.{job}.data_wait_frac": pytest.approx(1.0 / 3.0),
        f"trainer.{job}.samples_per_s": pytest.approx(80.0 + 40.0),
    }
    assert agent.collect() == {}  # each interval once
    (j,) = agent.jobs()
    # The kernel's pid (SO_PEERCRED) wins; worker pids from another pid namespace are dropped.
    assert j.name == job and j.pids == [me] and j.workers == [me + 100]
    control = TrainerControl(agent)
    assert control.capabilities(job) == {"loader.workers"}  # only what every rank can do
    assert control.get(job, "loader.workers") == 4
    with pytest.raises(LookupError):
        control.get(job, "loader.prefetch_factor")
    with pytest.raises(LookupError):
        control.get("nope", "loader.workers")


def test_control_goes_to_every_rank_and_one_refusal_refuses(agent: TrainerSource) -> None:
    r0, r1 = Peer(agent.path), Peer(agent.path)
    r0.hello("j", 1000, 0)
    r1.hello("j", 1001, 1)
    control = TrainerControl(agent, timeout_s=3.0)
    assert wait_for(lambda: len(agent.peers("j")) == 2 and all(p.job for p in agent.peers("j")))

    import threading

    result: list[Any] = []
    t = threading.Thread(target=lambda: result.append(control.set("j", "loader.workers", 6)))
    t.start()
    a, b = r0.recv(), r1.recv()
    assert a["type"] == b["type"] == "set" and a["id"] == b["id"] and a["value"] == 6
    r0.send(type="ack", id=a["id"], key="loader.workers", ok=True, value=6, pending=False, reason="")
    r1.send(type="ack", id=b["id"], key="loader.workers", ok=False, value=4, pending=False, reason="no")
    t.join(5)
    (ack,) = result
    assert not ack.ok and ack.reason.startswith("no") and "1 of 2 ranks refused" in ack.reason
    assert wait_for(lambda: control.get("j", "loader.workers") == 6)  # rank 0 did change


def _in_thread(call: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []
    t = threading.Thread(target=lambda: out.append(call()))
    t.start()
    return t, out


def test_a_deferred_change_is_in_force_once_every_rank_confirmed_it(
    agent: TrainerSource, tmp_path: Path
) -> None:
    r0, r1 = Peer(agent.path), Peer(agent.path)
    r0.hello("j", 1000, 0)
    r1.hello("j", 1001, 1)
    control = TrainerControl(agent, timeout_s=0.5)
    assert wait_for(lambda: len(agent.peers("j")) == 2 and all(p.job for p in agent.peers("j")))
    ex = Executor(Host(make_root(tmp_path / "root", cpus=8), trainer=control))
    t, out = _in_thread(lambda: ex.apply(Action(primitive="loader.workers", target="j", value=6, reason="t")))
    a, b = r0.recv(), r1.recv()
    for peer, req in ((r0, a), (r1, b)):  # accepted for the next epoch; 4 is in force
        peer.send(type="ack", id=req["id"], key="loader.workers", ok=True, value=4, pending=True, reason="")
    t.join(5)
    (res,) = out
    assert res.status == "pending" and res.after == 4, res  # managed, not taken for a failed write
    cid = res.change_id
    assert control.awaiting("j", "loader.workers") and ex.in_force(cid) is False
    r0.send(type="ack", id=a["id"], key="loader.workers", ok=True, value=6, pending=False, reason="")
    assert wait_for(lambda: control.get("j", "loader.workers") == 6)
    assert ex.in_force(cid) is False  # rank 1 still runs the old loader
    r1.send(type="ack", id=b["id"], key="loader.workers", ok=True, value=6, pending=False, reason="")
    assert wait_for(lambda: ex.in_force(cid) is True)
    assert not control.awaiting("j", "loader.workers")


def test_a_reopen_past_the_timeout_is_awaited_until_its_final_ack_or_the_hook_leaves(
    agent: TrainerSource,
) -> None:
    p = Peer(agent.path)
    p.hello("j", 1000, None)
    control = TrainerControl(agent, timeout_s=0.3)
    assert wait_for(lambda: control.jobs() == ["j"])
    for leaves in (False, True):
        t, out = _in_thread(lambda: control.reopen_files("j"))
        req = p.recv()
        assert req["type"] == "reopen_files"
        p.send(type="ack", id=req["id"], key="reopen_files", ok=True, value=None, pending=True, reason="")
        t.join(5)
        (ack,) = out
        assert ack.ok and ack.pending and control.awaiting("j", "reopen_files")
        if leaves:
            p.sock.close()
        else:
            p.send(
                type="ack", id=req["id"], key="reopen_files", ok=True, value=None, pending=False, reason=""
            )
        assert wait_for(lambda: not control.awaiting("j", "reopen_files"))


def test_silent_hook_times_out_and_a_gone_one_is_refused(agent: TrainerSource) -> None:
    p = Peer(agent.path)
    p.hello("j", 1000, None)
    control = TrainerControl(agent, timeout_s=0.3)
    assert wait_for(lambda: control.jobs() == ["j"])
    ack = control.set("j", "loader.workers", 6)
    assert not ack.ok and "did not answer" in ack.reason
    p.sock.close()
    assert wait_for(lambda: control.jobs() == [])
    ack = control.set("j", "loader.workers", 6)
    assert not ack.ok and "no trainer hook" in ack.reason


def test_bad_peers_lose_their_connection_only(agent: TrainerSource) -> None:
    good = Peer(agent.path)
    good.hello("good", 1, None)
    old = Peer(agent.path)
    old.send(type="hello", v=99, job="future", pid=2)
    junk = Peer(agent.path)
    junk.sock.sendall(b"not json\n[1,2]\n")
    junk.hello("junk", 3, None)
    flood = Peer(agent.path)
    flood.sock.sendall(b"x" * 70_000)
    assert wait_for(lambda: [j.name for j in agent.jobs()] == ["good", "junk"])
    assert old.sock.recv(10) == b""  # dropped
    good.send(**metrics(steps=2, step_s=0.5, active_s=0.5, wait_s=0.1))
    assert wait_for(lambda: "trainer.good.step_time_ms" in agent.collect())


def test_counters_split_a_stall_across_intervals() -> None:
    c = Counters()
    c.batch_size = 8
    c.snapshot(0.0)
    c.epoch_start(0.0)
    c.request(0.0, auto_steps=True)
    first = c.snapshot(1.0)  # still waiting for the first batch
    assert (first.wait_s, first.active_s, first.steps) == (1.0, 1.0, 0)
    c.arrived(1.5, batch=True)  # step 1: 1.5 s waiting, then compute
    c.request(1.6, auto_steps=True)  # ends step 1 (1.6 s)
    c.arrived(1.7, batch=True)
    c.request(1.9, auto_steps=True)  # ends step 2 (0.3 s)
    c.arrived(1.95, batch=False)  # end of the epoch
    second = c.snapshot(2.0)
    assert second.wait_s == pytest.approx(0.65) and second.active_s == pytest.approx(1.0)
    assert second.steps == 2 and second.step_s == pytest.approx(1.9) and second.samples == 16
    c.epoch_end(2.5)
    third = c.snapshot(3.0)
    assert third.active_s == pytest.approx(0.5) and third.interval_s == pytest.approx(1.0)
    assert third.steps == 0 and third.wait_s == 0.0


def test_counters_with_explicit_steps_count_samples_per_batch() -> None:
    c = Counters()
    c.batch_size = 4
    c.snapshot(0.0)
    c.epoch_start(0.0)
    for i in range(4):  # two batches a step
        c.request(i * 0.1, auto_steps=False)
        c.arrived(i * 0.1 + 0.01, batch=True)
        if i % 2 == 1:
            c.step(i * 0.1 + 0.1)
    iv = c.snapshot(0.5)
    assert iv.steps == 2 and iv.step_s == pytest.approx(0.4) and iv.samples == 16
    assert iv.wait_s == pytest.approx(0.04)
