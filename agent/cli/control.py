"""`idletune mode [MODE]` and `idletune reload [--collectors]`: the running daemon, through its API.

They speak to `idletune serve` at the address of the config file's `server` section (or
--url) with the token from the state dir, so only who may read the token may change the
mode; the daemon audits every change.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from agent.cli.errors import fail
from core.text import printable


def _url(url: str | None, config: Path | None) -> str:
    if url:
        return url.rstrip("/")
    from agent.config.load import ConfigError, load_config

    try:
        server = load_config(config).config.server
    except ConfigError as e:
        fail(str(e))
    host = "127.0.0.1" if server.host in ("0.0.0.0", "::", "") else server.host
    return f"http://{host}:{server.port}"


def _call(base: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    from agent.service.auth import TOKEN_NAME
    from core.statedir import state_dir

    headers = {"content-type": "application/json"}
    data = None
    if body is not None:
        token_file = Path(state_dir()) / TOKEN_NAME
        try:
            token = token_file.read_text().strip()
        except OSError as e:
            fail(f"cannot read the daemon's token {token_file}: {e.strerror} (run as its user, or root)")
        headers["authorization"] = f"Bearer {token}"
        data = json.dumps(body).encode()
    req = urllib.request.Request(base + path, data=data, headers=headers, method="POST" if body else "GET")
    try:
        with urllib.request.urlopen(req, timeout=150) as resp:
            out: dict[str, Any] = json.loads(resp.read())
            return out
    except urllib.error.HTTPError as e:
        try:
            detail = json.loads(e.read()).get("detail", e.reason)
        except ValueError:
            detail = e.reason
        fail(f"{base}{path}: {e.code}: {detail}")
    except (urllib.error.URLError, OSError) as e:
        reason = getattr(e, "reason", e)
        fail(f"no daemon answers at {base} ({reason}): start `idletune serve`, or pass --url")


def _show(doc: dict[str, Any]) -> None:
    typer.echo(f"mode: {doc['mode']}")
    typer.echo(f"config: {doc.get('config') or 'defaults (no file)'}")
    last = doc.get("last_reload") or {}
    typer.echo(printable(f"last reload: {'ok' if last.get('ok') else 'refused'}: {last.get('message', '')}"))
    col = doc.get("collectors")
    if col:
        typer.echo(
            printable(f"collectors: {'ok' if col.get('ok') else 'not reloaded'}: {col.get('message', '')}")
        )


UrlOpt = Annotated[str | None, typer.Option("--url", help="the daemon's address (default: from the config)")]
ConfigOpt = Annotated[
    Path | None, typer.Option("--config", help="the config file naming the daemon's address")
]


def mode_command(
    mode: Annotated[
        Literal["observe", "recommend", "auto"] | None,
        typer.Argument(help="the new mode; without one, print the current mode"),
    ] = None,
    by: Annotated[str, typer.Option("--by", help="who asks, for the audit log")] = "cli",
    url: UrlOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Print or change the running daemon's mode: observe, recommend or auto (audited)."""
    base = _url(url, config)
    doc = _call(base, "/v1/mode") if mode is None else _call(base, "/v1/mode", {"mode": mode, "by": by})
    _show(doc)


def reload_command(
    collectors: Annotated[
        bool, typer.Option("--collectors", help="also reload the eBPF collectors, counts carried over")
    ] = False,
    url: UrlOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Reload the running daemon's config and policy files (as SIGHUP does); exit 2 if refused."""
    doc = _call(_url(url, config), "/v1/reload", {"collectors": collectors})
    _show(doc)
    col = doc.get("collectors")
    if not (doc.get("last_reload") or {}).get("ok") or (col is not None and not col.get("ok")):
        raise SystemExit(2)


def register(app: typer.Typer) -> None:
    app.command("mode")(mode_command)
    app.command("reload")(reload_command)
