"""Answers for POST /v1/ask: the chat's answer over the current snapshot.

With a model, `agent.llm.chat` phrases and the diagnosis decides the facts; without
one it answers from the diagnosis alone, deterministically. Each request is its own
conversation: the service keeps no per-client history. A local model serves one
request at a time.
"""

from __future__ import annotations

import threading

from agent.llm.backend import Model
from agent.llm.chat import Conversation
from core.diagnosis import Diagnosis
from core.report import HealthReport


class ChatAsker:
    def __init__(self, model: Model | None = None, unavailable: str = "no model configured for the service"):
        self.model = model
        self.unavailable = unavailable
        self._lock = threading.Lock()

    def __call__(self, question: str, report: HealthReport, diagnosis: Diagnosis) -> tuple[str, str, str]:
        conv = Conversation(self.model, report, diagnosis, unavailable=self.unavailable)
        if self.model is None:
            a = conv.ask(question)
        else:
            with self._lock:
                a = conv.ask(question)
        return a.text, a.source, a.note
