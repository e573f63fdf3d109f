"""`idletune serve`: the daemon. The closed loop in the configured mode, beside the HTTP API,
/metrics and the dashboard, on loopback unless told otherwise.

The operator's config file (`--config`, `$IDLETUNE_CONFIG`, /etc/idletune/config.yaml) sets the
mode and every guardrail; flags given here win over it, and `idletune config show` says which
value came from where. SIGHUP (or a change of the file) reloads it; SIGTERM stops the loop and
restores its changes, or keeps them with `on_exit: keep`.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Annotated, Any, Literal

import typer

from agent.cli.errors import fail
from core.hostfs import host_fs
from core.statedir import STATE_ENV, state_dir
from core.text import printable
from primitives.host import Host


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _say(line: str) -> None:
    print(f"idletune: {printable(line)}", file=sys.stderr, flush=True)


def serve_command(
    config: Annotated[
        Path | None,
        typer.Option(
            "--config", help="the config file (default: $IDLETUNE_CONFIG, /etc/idletune/config.yaml)"
        ),
    ] = None,
    mode: Annotated[
        Literal["observe", "recommend", "auto"] | None,
        typer.Option("--mode", help="observe, recommend or auto (default: the config's, else observe)"),
    ] = None,
    host: Annotated[str | None, typer.Option("--host", help="address to listen on")] = None,
    port: Annotated[int | None, typer.Option("--port", min=1, max=65535, help="port to listen on")] = None,
    interval: Annotated[
        float | None, typer.Option("--interval", min=0.1, help="seconds between samples")
    ] = None,
    incident: Annotated[
        Path | None, typer.Option("--incident", help="serve a recorded incident instead of the live host")
    ] = None,
    no_bpf: Annotated[bool, typer.Option("--no-bpf", help="do not load the eBPF collectors")] = False,
    job: Annotated[list[str] | None, typer.Option("--job", help="a training job to watch, NAME=PID")] = None,
    llm: Annotated[
        bool, typer.Option("--llm", help="phrase /v1/ask answers with the configured model")
    ] = False,
) -> None:
    """Run the daemon: the closed loop in the configured mode, with the report, diagnosis, actions,
    audit and /metrics over HTTP and a dashboard."""
    from agent.config.load import CONFIG_ENV, ConfigError, load_config

    try:
        loaded = load_config(config)
    except ConfigError as e:
        fail(str(e))
    flags: dict[tuple[str, ...], tuple[str, Any]] = {}
    if mode is not None:
        flags[("mode",)] = ("--mode", mode)
    if host is not None:
        flags[("server", "host")] = ("--host", host)
    if port is not None:
        flags[("server", "port")] = ("--port", port)
    if interval is not None:
        flags[("loop", "interval_s")] = ("--interval", interval)
    if no_bpf:
        flags[("bpf",)] = ("--no-bpf", False)
    if job:
        from agent.cli.common import operator_jobs

        flags[("jobs",)] = ("--job", {j.name: j.pid for j in operator_jobs(job)})
    loaded = _override(loaded, flags)
    cfg = loaded.config
    # Every part reads the same file and the same state: the model settings, the state dir, the audit.
    if loaded.path is not None:
        os.environ[CONFIG_ENV] = str(loaded.path)
    if cfg.paths.state_dir is not None:
        os.environ[STATE_ENV] = str(cfg.paths.state_dir)
    if cfg.paths.audit_log is not None:
        from guardrails.audit import AUDIT_ENV

        os.environ[AUDIT_ENV] = str(cfg.paths.audit_log)
    if incident is not None:
        _serve_incident(incident, cfg, llm)
    else:
        _serve_live(loaded, config, llm)


def _override(loaded: Any, flags: dict[tuple[str, ...], tuple[str, Any]]) -> Any:
    """The config with command-line values set, each remembered as coming from its flag."""
    from agent.config.model import AgentConfig

    if not flags:
        return loaded
    data = loaded.config.model_dump()
    for loc, (_, value) in flags.items():
        node = data
        for part in loc[:-1]:
            node = node[part]
        node[loc[-1]] = value
    try:
        cfg = AgentConfig.model_validate(data)
    except ValueError as e:
        fail(f"command-line values: {str(e).splitlines()[0]}")
    loaded.config = cfg
    loaded.overrides.update({loc: flag for loc, (flag, _) in flags.items()})
    return loaded


def _prepare_state() -> tuple[Path, str]:
    from agent.service.auth import ensure_state_dir, load_token
    from core.statedir import StateError

    directory = Path(state_dir())
    try:
        ensure_state_dir(directory)
        return directory, load_token(directory)
    except StateError as e:
        fail(str(e))
    except (OSError, ValueError) as e:
        fail(f"cannot prepare the state dir {directory}: {e}")


def _asker(llm: bool) -> Any:
    from agent.service.ask import ChatAsker

    if not llm:
        return ChatAsker()
    from agent.llm.loader import SettingsError, load_settings, open_model

    try:
        opened = open_model(load_settings())
    except SettingsError as e:
        fail(str(e))
    return ChatAsker(opened.model, opened.why_not or "no model configured")


def _serve_incident(incident: Path, cfg: Any, llm: bool) -> None:
    """A recorded incident, served as it is: no loop, nothing to tune."""
    from agent.service.guard import Guard
    from agent.service.observers import ReplayObserver
    from agent.service.state import ServiceState
    from core.incident import IncidentError

    directory, token = _prepare_state()
    try:
        observer = ReplayObserver(incident)
    except IncidentError as e:
        fail(str(e))
    state = ServiceState(
        observer, Guard(directory, _plain_host), interval_s=cfg.loop.interval_s, asker=_asker(llm)
    )
    state.refresh()
    state.start()
    try:
        _run_http(state, token, directory, cfg)
    finally:
        state.stop()


def _serve_live(loaded: Any, named: Path | None, llm: bool) -> None:
    from functools import partial

    from agent.cli.common import operator_jobs
    from agent.config.load import config_path
    from agent.daemon import build_daemon
    from agent.loop import LoopEvent
    from agent.service.guard import Guard
    from agent.service.observers import LoopObserver
    from agent.service.state import ServiceState
    from agent.wiring import live_feed, live_host_opener
    from core.statedir import StateError
    from guardrails.audit import default_audit_path

    cfg = loaded.config
    fs = host_fs()
    if not fs.path("/proc").is_dir():
        fail(f"no /proc under {fs.root}")
    directory, token = _prepare_state()
    jobs = operator_jobs([f"{n}={p}" for n, p in cfg.jobs.items()])

    last_top: list[str] = [""]

    def echo(ev: LoopEvent) -> None:
        # A diagnosis comes every review: the log says when the top cause changes, the API the rest.
        if ev.kind == "diagnosis":
            top = ev.text.split(" ", 1)[0]
            if top == last_top[0]:
                return
            last_top[0] = top
        _say(f"{ev.kind}: {ev.text}")

    feed = live_feed(
        fs,
        interval_s=cfg.loop.interval_s,
        bpf=cfg.bpf,
        jobs=jobs,
        devices=cfg.devices,
        say=_say,
        collection=cfg.collection,
        cost=cfg.cost,
    )
    if feed.live is None:
        fail("the live sources did not start")
    try:
        daemon = build_daemon(
            loaded, feed, path=loaded.path or config_path(named)[0], say=_say, on_event=echo
        )
    except (StateError, ValueError) as e:
        feed.close()
        fail(str(e))
    assert feed.report_later is not None  # a live feed's
    live = feed.live
    observer = LoopObserver(live, daemon.loop.window, feed.report_later)
    guard = Guard(directory, partial(live_host_opener, live), audit_log=default_audit_path())
    state = ServiceState(observer, guard, interval_s=cfg.loop.interval_s, asker=_asker(llm), control=daemon)
    from agent.cli.auto import snapshot_path, write_snapshot

    def after_tick() -> None:
        state.refresh()
        write_snapshot(daemon.loop, live.level)  # what `idletune status` shows of the running agent

    daemon.after_tick = after_tick
    daemon.tick()  # the first sample and snapshot before the first request
    old = signal.getsignal(signal.SIGHUP)

    def on_hup(signum: int, frame: FrameType | None) -> None:
        daemon.request_reload()

    signal.signal(signal.SIGHUP, on_hup)
    daemon.start()
    _say(f"mode {daemon.mode}; config {loaded.path or 'defaults (no file)'}")
    try:
        _run_http(state, token, directory, cfg, on_serving=live.steady)
    finally:
        for line in daemon.stop():
            _say(line)
        snapshot_path().unlink(missing_ok=True)
        signal.signal(signal.SIGHUP, old)


def _run_http(
    state: Any, token: str, directory: Path, cfg: Any, on_serving: Callable[[], object] = lambda: None
) -> None:
    # Imported here: the other commands must not pay for FastAPI and uvicorn.
    import uvicorn

    from agent.service.app import create_app

    app = create_app(state, token)
    host, port = cfg.server.host, cfg.server.port
    if not _loopback(host):
        typer.echo(f"warning: listening on {host}: reads need no token; keep the port off untrusted networks")
    typer.echo(f"idletune: http://{host}:{port}/  (token in {directory / 'token'})")
    # uvicorn handles SIGINT and SIGTERM by shutting down, then raises the signal again to the
    # handler it found: a handler that returns lets it return here, so the caller's cleanup (stop
    # the loop, restore its changes) runs instead of the default action killing the process.
    old = {sig: signal.signal(sig, _stopping) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", access_log=False)
        _quiet_server(config, on_serving).run()
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def _quiet_server(config: Any, on_serving: Callable[[], object] = lambda: None) -> Any:
    """uvicorn's server, waking once a second instead of ten times while nothing happens.

    Its main loop sleeps 0.1 s between checks of the shutdown flag and the Date header's
    refresh (every tenth check): ten wake-ups a second of an otherwise idle daemon. Here each
    check is a tenth one, so the header still changes every second, and a shutdown is
    noticed within a second.
    """
    import asyncio

    import uvicorn

    class QuietServer(uvicorn.Server):
        async def main_loop(self) -> None:
            on_serving()  # started up: the sockets listen
            while not await self.on_tick(0):
                await asyncio.sleep(1.0)

    return QuietServer(config)


def _stopping(signum: int, frame: FrameType | None) -> None:
    """Seen after uvicorn stopped serving; the caller stops the loop next."""


@contextlib.contextmanager
def _plain_host() -> Iterator[Host]:
    yield Host(host_fs())


def register(app: typer.Typer) -> None:
    app.command("serve")(serve_command)
