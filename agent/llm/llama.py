"""llama-cpp-python backend: a GGUF model in this process, JSON-schema grammars, a kept prompt prefix.

The model loads once per process (`agent.llm.loader` keeps it). Between calls llama.cpp
keeps the evaluated tokens in its KV cache and `Llama.generate` re-evaluates only what
follows the longest common prefix, so the system rules and the report, which lead
every prompt, are evaluated once per report rather than once per call. Chats are
formatted with the model's own template and run through `create_completion`, the
entry point that takes a stopping criterion: that is how a call honours its timeout.

Scoring (`score`) decodes nothing: the prefix is evaluated once (from the kept prefix),
then each continuation in one batch after it, with the logits of every position kept;
continuations that begin alike share those tokens' evaluation, and the KV cache is cut
back to the prefix afterwards.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from agent.llm.backend import DEFAULT_TIMEOUT_S, Completion, Message, Scores

N_CTX = 2048
# Greedy decoding of a 135M model falls into loops ("The top figure is ... The top figure is");
# a mild penalty on recent tokens breaks them. Under a grammar it only reorders allowed tokens.
REPEAT_PENALTY = 1.15


def default_threads() -> int:
    """Every core this process may run on: llama-cpp-python's default is half of them."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


@lru_cache(maxsize=32)
def _grammar(schema_json: str) -> Any:
    from llama_cpp.llama_grammar import LlamaGrammar

    return LlamaGrammar.from_json_schema(schema_json, verbose=False)


class LlamaModel:
    def close(self) -> None:
        """Free the model now: llama.cpp's own finaliser fails when it runs during interpreter exit."""
        self._llm.close()

    def __init__(
        self,
        path: str | Path,
        *,
        n_ctx: int = N_CTX,
        threads: int | None = None,
        repeat_penalty: float = REPEAT_PENALTY,
    ) -> None:
        import llama_cpp
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        started = time.monotonic()
        n = threads or default_threads()
        self.path = Path(path)
        self.name = self.path.name
        self._llm: Any = llama_cpp.Llama(
            model_path=str(path), n_ctx=n_ctx, n_threads=n, n_threads_batch=n, seed=0, verbose=False
        )
        self.load_seconds = time.monotonic() - started
        self.repeat_penalty = repeat_penalty
        self._lock = threading.Lock()
        llm = self._llm
        eos_id, bos_id = llm.token_eos(), llm.token_bos()
        self._eos = llm._model.token_get_text(eos_id) if eos_id != -1 else ""
        bos = llm._model.token_get_text(bos_id) if bos_id != -1 else ""
        template = llm.metadata.get("tokenizer.chat_template")
        self._format: Any = Jinja2ChatFormatter(template, self._eos, bos) if template else None
        self._stopping: Any = llama_cpp.StoppingCriteriaList

    def chat(
        self,
        messages: Sequence[Message],
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int = 128,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> Completion:
        if self._format is not None:
            prompt = self._format(messages=[dict(m) for m in messages]).prompt
        else:
            # A GGUF without a chat template: plain role-labelled turns.
            prompt = "".join(f"{m['role']}: {m['content']}\n" for m in messages) + "assistant: "
        return self.complete(prompt, schema=schema, max_tokens=max_tokens, timeout_s=timeout_s)

    def complete(
        self,
        prompt: str,
        *,
        schema: dict[str, Any] | None = None,
        max_tokens: int = 128,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> Completion:
        # Keys unsorted: the grammar emits properties in the schema's order (primitive ... reason).
        grammar = _grammar(json.dumps(schema)) if schema is not None else None
        with self._lock:
            return self._run(prompt, grammar, max_tokens, timeout_s)

    def _run(self, prompt: str, grammar: Any, max_tokens: int, timeout_s: float) -> Completion:
        llm = self._llm
        start = time.monotonic()
        deadline = start + timeout_s
        late = False

        def past_deadline(_ids: Any, _logits: Any) -> bool:
            nonlocal late
            late = late or time.monotonic() > deadline
            return late

        tokens = llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)
        cached = llm.longest_token_prefix(llm._input_ids[: llm.n_tokens].tolist(), tokens)
        try:
            out = llm.create_completion(
                prompt,
                max_tokens=max_tokens,
                temperature=0.0,
                repeat_penalty=self.repeat_penalty,
                stop=[self._eos] if self._eos else [],
                stopping_criteria=self._stopping([past_deadline]),
                grammar=grammar,
                seed=0,
            )
        except (RuntimeError, ValueError) as e:
            # llama.cpp reports a prompt longer than the context, or a failed decode, this way.
            return Completion("", "error", seconds=time.monotonic() - start, error=str(e)[:200])
        seconds = time.monotonic() - start
        choice, usage = out["choices"][0], out["usage"]
        late = late or seconds > timeout_s
        return Completion(
            text=choice["text"],
            finish="timeout" if late else ("length" if choice["finish_reason"] == "length" else "stop"),
            prompt_tokens=int(usage["prompt_tokens"]),
            completion_tokens=int(usage["completion_tokens"]),
            seconds=seconds,
            cached_tokens=min(cached, int(usage["prompt_tokens"])),
        )

    def score(
        self, prefix: str, continuations: Sequence[str], *, timeout_s: float = DEFAULT_TIMEOUT_S
    ) -> Scores:
        with self._lock:
            return self._score(prefix, list(continuations), timeout_s)

    def _score(self, prefix: str, continuations: list[str], timeout_s: float) -> Scores:
        import numpy as np

        llm = self._llm
        start = time.monotonic()
        deadline = start + timeout_s
        n_vocab = llm.n_vocab()

        def logprobs(i: int) -> Any:
            row = np.ctypeslib.as_array(llm._ctx.get_logits_ith(i), shape=(n_vocab,)).astype(np.float64)
            top = row.max()
            return row - top - np.log(np.exp(row - top).sum())

        def failed(why: str, finish: Any = "error") -> Scores:
            return Scores((), (), finish, seconds=time.monotonic() - start, error=why[:200])

        ptoks = llm.tokenize(prefix.encode("utf-8"), add_bos=False, special=True)
        ctoks = [llm.tokenize(c.encode("utf-8"), add_bos=False, special=True) for c in continuations]
        if not ptoks or any(not c for c in ctoks):
            return failed("an empty prefix or continuation")
        if len(ptoks) + max(len(c) for c in ctoks) > llm.n_ctx():
            return failed(f"{len(ptoks)} prompt tokens exceed the context of {llm.n_ctx()}")
        cached = llm.longest_token_prefix(llm._input_ids[: llm.n_tokens].tolist(), ptoks)
        # The prefix's last token is evaluated again: its logits predict each continuation's first token.
        cached = min(cached, len(ptoks) - 1)
        out = [0.0] * len(ctoks)
        try:
            llm.n_tokens = cached
            llm.eval(ptoks[cached:])
            n_past = llm.n_tokens
            # Continuations in token order share their leading tokens with the previous one: those
            # stay in the cache and only the rest is evaluated. rows[i] is the distribution of a
            # continuation's token i given the `kept` tokens before it (len(rows) == len(kept) + 1).
            kept: list[int] = []
            rows = [logprobs(-1)]
            for j in sorted(range(len(ctoks)), key=lambda i: ctoks[i]):
                if time.monotonic() > deadline:
                    return failed(f"past the {timeout_s:g} s timeout", "timeout")
                toks = ctoks[j]
                need = toks[:-1]
                common = llm.longest_token_prefix(kept, need)
                if common < len(need):
                    kept, rows = kept[:common], rows[: common + 1]
                    llm._ctx.kv_cache_seq_rm(-1, n_past + common, -1)
                    batch = need[common:]
                    llm._batch.set_batch(batch=batch, n_past=n_past + common, logits_all=True)
                    llm._ctx.decode(llm._batch)
                    rows += [logprobs(i) for i in range(len(batch))]
                    kept = list(need)
                out[j] = sum(float(rows[i][t]) for i, t in enumerate(toks))
        except (RuntimeError, ValueError) as e:
            return failed(str(e))
        finally:
            # What follows the prefix in the cache is cut away: the next call's prefix match holds.
            llm._ctx.kv_cache_seq_rm(-1, llm.n_tokens, -1)
        return Scores(
            tuple(out),
            tuple(len(c) for c in ctoks),
            prompt_tokens=len(ptoks),
            cached_tokens=cached,
            seconds=time.monotonic() - start,
        )

    def count_tokens(self, text: str) -> int:
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))
