"""A queue-driven fake model for tests: each call takes the next queued reply and records what it was asked.

A reply is text (finished normally) or a whole `Completion` (to script timeouts, errors and
token counts). An empty queue is a bug in the test, so it raises instead of inventing output.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.llm.backend import DEFAULT_TIMEOUT_S, Completion, Message, estimate_tokens

Reply = str | Completion


@dataclass(frozen=True)
class Call:
    messages: list[Message]
    schema: dict[str, Any] | None
    max_tokens: int
    timeout_s: float

    @property
    def prompt(self) -> str:
        return "\n".join(m["content"] for m in self.messages)


@dataclass
class FakeModel:
    replies: deque[Reply] = field(default_factory=deque)
    calls: list[Call] = field(default_factory=list)
    name: str = "fake"

    @classmethod
    def of(cls, *replies: Reply) -> FakeModel:
        return cls(replies=deque(replies))

    def queue(self, replies: Iterable[Reply]) -> None:
        self.replies.extend(replies)

    def chat(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int = 128,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> Completion:
        call = Call(list(messages), schema, max_tokens, timeout_s)
        self.calls.append(call)
        if not self.replies:
            raise AssertionError(f"FakeModel: no reply queued for call {len(self.calls)}")
        reply = self.replies.popleft()
        if isinstance(reply, Completion):
            return reply
        return Completion(
            text=reply,
            finish="stop",
            prompt_tokens=self.count_tokens(call.prompt),
            completion_tokens=self.count_tokens(reply),
        )

    def complete(
        self,
        prompt: str,
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int = 128,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> Completion:
        msg: Message = {"role": "user", "content": prompt}
        return self.chat([msg], schema=schema, max_tokens=max_tokens, timeout_s=timeout_s)

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)
