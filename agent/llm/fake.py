"""A queue-driven fake model for tests: each call takes the next queued reply and records what it was asked.

A reply is text (finished normally) or a whole `Completion` (to script timeouts, errors and
token counts). An empty queue is a bug in the test, so it raises instead of inventing output.
`FakeScorer` also scores continuations: each `score` call takes the next queued list of
log-probabilities (one per continuation, one token each) or a whole `Scores`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.llm.backend import DEFAULT_TIMEOUT_S, Completion, Message, Scores, estimate_tokens

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


@dataclass(frozen=True)
class ScoreCall:
    prefix: str
    continuations: list[str]
    timeout_s: float


@dataclass
class FakeScorer(FakeModel):
    scores: deque[Sequence[float] | Scores] = field(default_factory=deque)
    score_calls: list[ScoreCall] = field(default_factory=list)

    @classmethod
    def scoring(cls, *scores: Sequence[float] | Scores) -> FakeScorer:
        return cls(scores=deque(scores))

    def score(
        self, prefix: str, continuations: Sequence[str], *, timeout_s: float = DEFAULT_TIMEOUT_S
    ) -> Scores:
        self.score_calls.append(ScoreCall(prefix, list(continuations), timeout_s))
        if not self.scores:
            raise AssertionError(f"FakeScorer: no scores queued for call {len(self.score_calls)}")
        got = self.scores.popleft()
        if isinstance(got, Scores):
            return got
        # Scores for fewer continuations than asked for are padded low: the test named the ones it meant.
        lps = [float(x) for x in got][: len(continuations)]
        lps += [-100.0] * (len(continuations) - len(lps))
        return Scores(tuple(lps), (1,) * len(continuations), prompt_tokens=self.count_tokens(prefix))
