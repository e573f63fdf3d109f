"""The `Model` protocol every backend implements, and what a call returns.

A call never raises for an expected failure: a timeout, a refused connection or a
backend error come back as a `Completion` whose `finish` says so, so the proposer
can fall back to the rules and count why (results, not exceptions, cross stages).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable

Finish = Literal["stop", "length", "timeout", "error"]
DEFAULT_TIMEOUT_S = 10.0


class Message(TypedDict):
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class Completion:
    text: str
    finish: Finish
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    cached_tokens: int = 0  # prompt tokens taken from the kept prefix instead of evaluated again
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.finish in ("stop", "length")


@runtime_checkable
class Model(Protocol):
    name: str

    def chat(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int = 128,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> Completion:
        """One assistant turn; under `schema` the output is decoded as JSON that the schema allows."""
        ...

    def complete(
        self,
        prompt: str,
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int = 128,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> Completion:
        """A plain continuation of `prompt`, with the same contract as `chat`."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens `text` takes in this model's vocabulary (an estimate where the backend has none)."""
        ...


@dataclass(frozen=True)
class Scores:
    """The log-likelihood of each continuation after one prefix, in the order they were given."""

    logprobs: tuple[float, ...]  # summed over the continuation's tokens (natural log)
    tokens: tuple[int, ...]  # tokens of each continuation, for length normalisation
    finish: Finish = "stop"  # "timeout" or "error" when the scores are incomplete and must not be used
    prompt_tokens: int = 0
    cached_tokens: int = 0
    seconds: float = 0.0
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.finish == "stop" and len(self.logprobs) == len(self.tokens)

    def normalised(self) -> tuple[float, ...]:
        """Mean log-probability per token: a long option is not penalised for its length alone."""
        return tuple(lp / max(1, n) for lp, n in zip(self.logprobs, self.tokens, strict=True))


@runtime_checkable
class Scorer(Protocol):
    """A model that can say how likely each of several complete continuations is, without decoding."""

    def score(
        self, prefix: str, continuations: Sequence[str], *, timeout_s: float = DEFAULT_TIMEOUT_S
    ) -> Scores:
        """Each continuation's log-likelihood after `prefix`; never raises for an expected failure."""
        ...


def estimate_tokens(text: str) -> int:
    """A tokenizer-free upper estimate: BPE vocabularies spend about one token per three
    characters on figure-heavy text, so dividing by three errs toward too many."""
    return (len(text) + 2) // 3
