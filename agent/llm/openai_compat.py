"""Any OpenAI-compatible server (a llama.cpp server, vLLM) by URL, with the standard library only.

Constrained decoding is asked for with `response_format: json_schema`, which both servers
accept; the proposer validates the output again whatever the server did with it.
"""

from __future__ import annotations

import json
import os
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from agent.llm.backend import DEFAULT_TIMEOUT_S, Completion, Finish, Message, estimate_tokens

API_KEY_ENV = "IDLETUNE_LLM_API_KEY"


def _endpoint(base: str, path: str) -> str:
    """`http://host:8080`, `.../v1` and `.../v1/` all lead to `.../v1/<path>`."""
    base = base.rstrip("/")
    if not base.endswith("/v1"):
        base += "/v1"
    return f"{base}/{path}"


class OpenAICompatModel:
    def __init__(self, url: str, *, model: str = "default", api_key: str | None = None) -> None:
        self.url = url
        self.model = model
        self.name = f"{model} at {url}"
        self._key = api_key if api_key is not None else os.environ.get(API_KEY_ENV, "")

    def chat(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int = 128,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> Completion:
        body: dict[str, Any] = {"messages": list(messages)}
        return self._call("chat/completions", body, schema, max_tokens, timeout_s)

    def complete(
        self,
        prompt: str,
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int = 128,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> Completion:
        return self._call("completions", {"prompt": prompt}, schema, max_tokens, timeout_s)

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    def _call(
        self,
        path: str,
        body: dict[str, Any],
        schema: dict[str, Any] | None,
        max_tokens: int,
        timeout_s: float,
    ) -> Completion:
        body = {**body, "model": self.model, "temperature": 0.0, "max_tokens": max_tokens, "stream": False}
        if schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "proposal", "schema": schema, "strict": True},
            }
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        req = urllib.request.Request(
            _endpoint(self.url, path), data=json.dumps(body).encode(), headers=headers, method="POST"
        )
        start = time.monotonic()
        try:
            with urllib.request.urlopen(req, timeout=timeout_s) as resp:
                doc = json.loads(resp.read().decode("utf-8"))
        except TimeoutError:
            return Completion("", "timeout", seconds=time.monotonic() - start, error="no answer in time")
        except urllib.error.HTTPError as e:
            return Completion(
                "", "error", seconds=time.monotonic() - start, error=f"HTTP {e.code} {e.reason}"
            )
        except urllib.error.URLError as e:
            finish: Finish = "timeout" if isinstance(e.reason, TimeoutError | socket.timeout) else "error"
            return Completion("", finish, seconds=time.monotonic() - start, error=str(e.reason))
        except (OSError, ValueError) as e:
            return Completion("", "error", seconds=time.monotonic() - start, error=str(e))
        return _parse(doc, time.monotonic() - start, timeout_s)


def _parse(doc: Any, seconds: float, timeout_s: float) -> Completion:
    try:
        choice = doc["choices"][0]
        text = choice["message"]["content"] if "message" in choice else choice["text"]
        usage = doc.get("usage") or {}
        reason = choice.get("finish_reason") or "stop"
    except (KeyError, IndexError, TypeError) as e:
        return Completion("", "error", seconds=seconds, error=f"unexpected reply shape: {e}")
    details = usage.get("prompt_tokens_details") or {}
    return Completion(
        text=str(text or ""),
        finish="timeout" if seconds > timeout_s else ("length" if reason == "length" else "stop"),
        prompt_tokens=int(usage.get("prompt_tokens", 0)),
        completion_tokens=int(usage.get("completion_tokens", 0)),
        seconds=seconds,
        cached_tokens=int(details.get("cached_tokens", 0) or 0),
    )
