"""`idletune serve`: the HTTP API, /metrics and the dashboard, on loopback unless told otherwise."""

from __future__ import annotations

import contextlib
import ipaddress
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agent.cli.common import operator_jobs
from agent.cli.errors import fail
from core.hostfs import host_fs
from core.statedir import state_dir
from primitives.host import Host

if TYPE_CHECKING:
    pass

DEFAULT_PORT = 8786


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve_command(
    host: Annotated[str, typer.Option("--host", help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="port to listen on")] = DEFAULT_PORT,
    interval: Annotated[float, typer.Option("--interval", min=0.1, help="seconds between snapshots")] = 1.0,
    incident: Annotated[
        Path | None, typer.Option("--incident", help="serve a recorded incident instead of the live host")
    ] = None,
    no_bpf: Annotated[bool, typer.Option("--no-bpf", help="do not load the eBPF collectors")] = False,
    job: Annotated[list[str] | None, typer.Option("--job", help="a training job to watch, NAME=PID")] = None,
    llm: Annotated[
        bool, typer.Option("--llm", help="phrase /v1/ask answers with the configured model")
    ] = False,
) -> None:
    """Serve the report, diagnosis, actions, audit, features and /metrics over HTTP, with a dashboard."""
    # Imported here: the other commands must not pay for FastAPI and uvicorn.
    import uvicorn

    from agent.service.app import create_app
    from agent.service.ask import ChatAsker
    from agent.service.auth import ensure_state_dir, load_token
    from agent.service.guard import Guard
    from agent.service.observers import LiveObserver, Observer, ReplayObserver
    from agent.service.state import ServiceState
    from agent.wiring import live_host_opener
    from core.statedir import StateError

    directory = Path(state_dir())
    try:
        ensure_state_dir(directory)
        token = load_token(directory)
    except StateError as e:
        fail(str(e))
    except (OSError, ValueError) as e:
        fail(f"cannot prepare the state dir {directory}: {e}")
    observer: Observer
    open_host: Callable[[], contextlib.AbstractContextManager[Host]] = _plain_host
    if incident is not None:
        from core.incident import IncidentError

        try:
            observer = ReplayObserver(incident)
        except IncidentError as e:
            fail(str(e))
    else:
        from agent.live import LiveHost

        fs = host_fs()
        if not fs.path("/proc").is_dir():
            fail(f"no /proc under {fs.root}")
        named = operator_jobs(job)
        live = LiveHost(
            fs, interval_s=interval, bpf=not no_bpf, operator_jobs=named, state_dir=str(directory)
        )
        observer = LiveObserver(live)
        open_host = partial(live_host_opener, live)
    asker = ChatAsker()
    if llm:
        from agent.llm.loader import SettingsError, load_settings, open_model

        try:
            opened = open_model(load_settings())
        except SettingsError as e:
            fail(str(e))
        asker = ChatAsker(opened.model, opened.why_not or "no model configured")
    state = ServiceState(observer, Guard(directory, open_host), interval_s=interval, asker=asker)
    app = create_app(state, token)
    if not _loopback(host):
        typer.echo(f"warning: listening on {host}: reads need no token; keep the port off untrusted networks")
    typer.echo(f"idletune: http://{host}:{port}/  (token in {directory / 'token'})")
    # The first snapshot before the first request (live: this starts and compiles the sources).
    state.refresh()
    state.start()
    try:
        uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
    finally:
        state.stop()


@contextlib.contextmanager
def _plain_host() -> Iterator[Host]:
    yield Host(host_fs())


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)
