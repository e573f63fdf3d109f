"""A service over a recorded incident and a fake host, for the API, schema and browser tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fastapi import FastAPI

from agent.proposal import Action
from agent.service.app import create_app
from agent.service.ask import ChatAsker
from agent.service.auth import load_token
from agent.service.guard import Guard, fs_host
from agent.service.observers import ReplayObserver
from agent.service.state import ServiceState
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


def make_service(tmp_path: Path) -> Service:
    state_dir = tmp_path / "state"
    fh = fake_host(tmp_path / "root")
    token = load_token(state_dir)
    guard = Guard(state_dir, lambda: fs_host(fh.host))
    state = ServiceState(ReplayObserver(INCIDENT), guard, asker=ChatAsker())
    return Service(create_app(state, token), state, token, fh, state_dir)


def action(primitive: str, value: object, target: object = None) -> Action:
    return Action.model_validate({"primitive": primitive, "target": target, "value": value, "reason": "test"})
