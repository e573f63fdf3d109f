"""Strict JSON request bodies: non-finite numbers refused when parsed, and 422s that always serialise.

Python's json takes NaN and Infinity and reads 1e400 as inf; none is JSON's, nor a value any
field of the API wants, and the framework's own 422 handler fails with a 500 on a validation
error that repeats one. Routes of the API use `FiniteJSONRoute`; `invalid_request` is its
RequestValidationError handler.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from fastapi.routing import APIRoute


class _NonFinite(ValueError):
    def __init__(self, token: str) -> None:
        super().__init__(token)
        self.token = token


def _refuse_constant(token: str) -> Any:
    raise _NonFinite(token)


def _finite_float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise _NonFinite(token)  # 1e400: past a float's range, it would parse as inf
    return value


def _position(text: str, token: str) -> int:
    """Where `token` first stands as a JSON value in `text`, outside strings (0 if not found)."""
    value = rf"(?<![\w.+-]){re.escape(token)}(?![\w.])"
    for m in re.finditer(rf'"(?:[^"\\]|\\.)*"|({value})', text):
        if m.group(1) is not None:
            return m.start(1)
    return 0


def finite_json(body: bytes) -> Any:
    """The body's JSON, as `json.loads` reads bytes, but a non-finite number is a decode error.
    Python's json takes NaN and Infinity and reads 1e400 as inf; neither is JSON's, nor a value any
    field here wants, and a validation error that repeats one cannot be written back as JSON."""
    text = body.decode(json.detect_encoding(body), "surrogatepass")
    try:
        return json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except _NonFinite as e:
        why = f"{e.token} is not a finite number (NaN, Infinity and numbers past a float's range are refused)"
        raise json.JSONDecodeError(why, text, _position(text, e.token)) from None


class FiniteJSONRequest(Request):
    """A request whose `json()` is `finite_json`."""

    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = finite_json(await self.body())
        return self._json


class FiniteJSONRoute(APIRoute):
    """A route that parses its body with `finite_json`: the framework turns its decode error into a 422."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def finite(request: Request) -> Response:
            return await handler(FiniteJSONRequest(request.scope, request.receive))

        return finite


def _json_safe(value: Any) -> Any:
    """`value` with every non-finite float written as text, so it serialises as strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


async def invalid_request(request: Request, exc: Exception) -> JSONResponse:
    """422 for any invalid request, written so that it always serialises (the framework's own
    handler fails with a 500 on an error that repeats a non-finite number)."""
    assert isinstance(exc, RequestValidationError)
    detail = _json_safe(jsonable_encoder(exc.errors()))
    for d in detail:
        if isinstance(d, dict) and d.get("type") == "json_invalid" and (d.get("ctx") or {}).get("error"):
            d["msg"] = f"JSON decode error: {d['ctx']['error']}"  # says what is wrong, in one line
    return JSONResponse(status_code=422, content={"detail": detail})
