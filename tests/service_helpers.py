"""A service over a recorded incident and a fake host, for the API, schema and browser tests."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path

from fastapi import FastAPI

from agent.service.app import create_app
from agent.service.ask import ChatAsker
from agent.service.auth import load_token
from agent.service.guard import Guard, fs_host
from agent.service.observers import Observation, ReplayObserver
from agent.service.state import ServiceState
from core.incident import load_incident
from core.proposal import Action
from core.sample import Sample
from core.window import Window
from tests.fakes.fake_kernel import FakeHost, fake_host

INCIDENTS = Path(__file__).resolve().parent.parent / "evals" / "incidents"
INCIDENT = INCIDENTS / "checkpoint-writeback-burst"


@dataclass
class Service:
    app: FastAPI
    state: ServiceState
    token: str
    fh: FakeHost
    state_dir: Path

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


class NowObserver:
    """The incident's window moved onto the wall clock, with now in its middle: changes the
    test makes now fall inside it, as they would on a live host."""

    def __init__(self, path: Path) -> None:
        obs = ReplayObserver(path).observe()
        start, end = obs.window.start or 0.0, obs.window.end or 0.0
        shift = time.time() - (start + end) / 2
        window = Window(horizon_s=1e9, samples=[Sample(t=s.t + shift, m=s.m) for s in obs.window])
        report = load_incident(path).report(window)
        self._obs = replace(obs, window=window, make_report=lambda: report)

    def observe(self) -> Observation:
        return self._obs

    def close(self) -> None:
        pass


def make_service(tmp_path: Path, *, now: bool = False) -> Service:
    state_dir = tmp_path / "state"
    fh = fake_host(tmp_path / "root")
    token = load_token(state_dir)
    guard = Guard(state_dir, lambda: fs_host(fh.host))
    observer = NowObserver(INCIDENT) if now else ReplayObserver(INCIDENT)
    state = ServiceState(observer, guard, asker=ChatAsker())
    return Service(create_app(state, token), state, token, fh, state_dir)


def action(primitive: str, value: object, target: object = None) -> Action:
    return Action.model_validate({"primitive": primitive, "target": target, "value": value, "reason": "test"})
