"""The bearer token and the guard in front of every request that changes something.

The token lives in `<state dir>/token`, mode 0600, created at first start; whoever
can read it is as trusted as root on this host. A token file is created, never adopted:
one that is a link, owned by someone else or open to others is refused, not repaired.

A middleware, not a route dependency, checks it: it runs before the body is parsed,
so a request without the token gets 401 whatever its body holds, and nothing behind
it runs. The same middleware caps request bodies, counting the bytes that actually
arrive, so a missing or lying Content-Length cannot get a larger body through.
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
from pathlib import Path

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from core.statedir import read_file, secure_dir

TOKEN_NAME = "token"
MAX_BODY = 16 * 1024
MUTATING = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def ensure_state_dir(state_dir: Path) -> None:
    """The state dir: made 0755 when absent (trainer hooks of other users reach the socket inside,
    itself 0660; the secrets in it are 0600); StateError when it is writable by group or others or
    owned by someone else. An existing directory is never chmod'ed: it may be shared."""
    secure_dir(state_dir)


def load_token(state_dir: Path) -> str:
    """The token, created (0600, atomically, through no link) when absent; StateError for a file that
    is a link, not a regular file, owned by someone else or open to group or others."""
    ensure_state_dir(state_dir)
    path = state_dir / TOKEN_NAME
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        token = (read_file(path, private=True, limit=4096) or "").strip()
        if len(token) < 32:
            why = "holds no usable token (under 32 characters): remove it to make a new one"
            raise ValueError(f"{path} {why}") from None
        return token
    token = secrets.token_urlsafe(32)
    with os.fdopen(fd, "w") as f:
        f.write(token + "\n")
    return token


def _reply(status: int, detail: str, extra: list[tuple[bytes, bytes]] | None = None) -> list[Message]:
    body = json.dumps({"detail": detail}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    return [
        {"type": "http.response.start", "status": status, "headers": headers + (extra or [])},
        {"type": "http.response.body", "body": body},
    ]


class GuardMiddleware:
    def __init__(self, app: ASGIApp, token: str, max_body: int = MAX_BODY) -> None:
        self.app = app
        self._token = token.encode()
        self.max_body = max_body

    def _authorized(self, scope: Scope) -> bool:
        for name, value in scope.get("headers", []):
            if name == b"authorization":
                scheme, _, given = value.partition(b" ")
                return scheme.lower() == b"bearer" and hmac.compare_digest(given.strip(), self._token)
        return False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in MUTATING:
            await self.app(scope, receive, send)
            return
        if not self._authorized(scope):
            for m in _reply(401, "a valid bearer token is required", [(b"www-authenticate", b"Bearer")]):
                await send(m)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length" and (not value.isdigit() or int(value) > self.max_body):
                for m in _reply(413, f"request body over {self.max_body} bytes"):
                    await send(m)
                return
        # Bodies are small: read them whole here, so an oversized one is refused before any
        # handler runs (an error raised inside the framework's body parsing would become 400).
        body = bytearray()
        more = True
        while more:
            msg = await receive()
            if msg["type"] != "http.request":
                return  # the client went away
            body += msg.get("body", b"")
            more = bool(msg.get("more_body", False))
            if len(body) > self.max_body:
                for m in _reply(413, f"request body over {self.max_body} bytes"):
                    await send(m)
                return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
