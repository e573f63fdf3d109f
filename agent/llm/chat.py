"""Answers to an operator's questions: the model phrases, the diagnosis decides the facts.

Rules answer first (agent.llm.intent, agent.llm.direct): a request to change a setting is
declined with the reason, a question about a setting's safety, the remedies or a moment of
the window is answered from the catalogue and the diagnosis, and a question outside the
tool's scope says so; the model never sees those. For the rest:
The model sees the system rules, the compact report and diagnosis, the recent turns and
the question. What it says is kept sentence by sentence only where every number traces
to the report or diagnosis (agent.grounding) and no cause outside the diagnosis is
named; if the top cause is not among what remains, the diagnosis' own paragraph is the
answer. The figures of the top cause and every source that was not live are then
added from the diagnosis, so each answer cites figures and says "not enough evidence"
where it has to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from agent.answer import paragraph
from agent.grounding import check_grounded
from agent.llm import direct, prompts
from agent.llm.backend import DEFAULT_TIMEOUT_S, Completion, Message, Model
from agent.llm.intent import Asked, Intent, classify
from agent.llm.render import (
    clean,
    evidence_line,
    host_names,
    plain,
    quote,
    quote_names,
    quote_text,
)
from core.diagnosis import Category, Diagnosis
from core.report import HealthReport

# One sentence. On a busy 2-core host the embedded model makes 5 to 15 tokens a second, and the
# prompt (the rules, the diagnosis' paragraph, the question: about 250 tokens) costs as much again;
# the whole report in the prompt (800 tokens) took 20 to 30 s and a 135M model lost the diagnosis in it.
MAX_TOKENS = 40
HISTORY_TURNS = 3
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Answer:
    text: str
    source: Literal["llm", "diagnosis"]
    note: str = ""  # why the model's words were not used, or what was dropped from them
    completion: Completion | None = None
    intent: Intent = Intent.WHY  # what the rules took the question for


def _mentions(text: str, category: Category) -> bool:
    low = text.lower()
    if category is Category.NONE:
        return "healthy" in low
    return category.value in low or category.value.replace("_", " ") in low


def _without_names(text: str, names: list[str]) -> str:
    """`text` with host names blanked: a job named `say_the_host_is_healthy` names no cause."""
    for n in names:
        text = text.replace(n, " ")
    return text


def _keep(sentence: str, report: HealthReport, d: Diagnosis, names: list[str] | None = None) -> bool:
    if check_grounded(sentence, report, d):
        return False
    words = _without_names(sentence, names if names is not None else host_names(report, d))
    named = {c.category for c in d.causes if c.confidence >= 0.05} | {d.top.category}
    if d.top.category is not Category.NONE and _mentions(words, Category.NONE):
        return False  # "the host is healthy" where the diagnosis finds a cause
    return not any(_mentions(words, c) for c in Category if c not in named and c is not Category.NONE)


def facts(report: HealthReport, d: Diagnosis, *, quoted: bool = False) -> list[str]:
    """What every answer carries from the diagnosis: the top cause's figures, and the gaps.
    `quoted` for a prompt: a gap holds a source's reason, host text."""
    names = host_names(report, d)
    out = [f"Figures: {evidence_line(e, names, rule=False)}" for e in d.top.evidence[:3]]
    gaps = [*report.missing(), *(m for m in d.missing if m not in report.missing())]
    out += [f"Not enough evidence: {quote(g, 160) if quoted else clean(g, 160)}" for g in gaps]
    return out


@dataclass
class Conversation:
    model: Model | None
    report: HealthReport
    diagnosis: Diagnosis
    timeout_s: float = DEFAULT_TIMEOUT_S
    unavailable: str = ""
    history: list[tuple[str, str]] = field(default_factory=list)

    def messages(self, question: str) -> list[Message]:
        system = prompts.fill("chat_system.md", summary=self._summary())
        out: list[Message] = [{"role": "system", "content": system}]
        for q, a in self.history[-HISTORY_TURNS:]:
            out += [{"role": "user", "content": q}, {"role": "assistant", "content": a}]
        chat = prompts.fill("chat.md", question=quote_text(question, 300))
        out.append({"role": "user", "content": chat})
        return out

    def ask(self, question: str) -> Answer:
        answer = self._answer(question)
        # The model sees the answer it gave, facts included, so follow-ups stay on them.
        self.history.append((plain(question, 300), self._recalled(answer)))
        return answer

    def _summary(self) -> str:
        """The diagnosis' paragraph for a prompt, the host strings it names (jobs, devices) quoted."""
        names = host_names(self.report, self.diagnosis)
        return quote_names(paragraph(self.report, self.diagnosis), names, 600)

    def _recalled(self, answer: Answer) -> str:
        """The answer as a later prompt repeats it, host strings quoted as everywhere in a prompt."""
        # The model's kept sentences are the first line of its answer (`plain` left no line break).
        said = answer.text.split("\n", 1)[0] if answer.source == "llm" else self._summary()
        return "\n".join([said, *facts(self.report, self.diagnosis, quoted=True)])

    def _direct(self, asked: Asked) -> str | None:
        r, d = self.report, self.diagnosis
        if asked.intent is Intent.CHANGE:
            return direct.decline(asked, r, d)
        if asked.intent is Intent.SAFETY:
            return direct.safety(asked, r, d)
        if asked.intent is Intent.REMEDY:
            return direct.remedies(r, d)
        if asked.intent is Intent.AT_TIME and asked.t is not None:
            return direct.at_time(asked.t, r, d)
        if asked.intent is Intent.OUT_OF_SCOPE:
            return direct.OUT_OF_SCOPE
        return None

    def _answer(self, question: str) -> Answer:
        r, d = self.report, self.diagnosis
        asked = classify(question)
        said_by_rules = self._direct(asked)
        if said_by_rules is not None:
            return Answer(said_by_rules, "diagnosis", intent=asked.intent)
        if self.model is None:
            return self._from_diagnosis(f"model unavailable: {self.unavailable or 'none configured'}")
        done = self.model.chat(self.messages(question), max_tokens=MAX_TOKENS, timeout_s=self.timeout_s)
        if done.finish == "timeout" or done.seconds > self.timeout_s:
            return self._from_diagnosis(f"model past its {self.timeout_s:g} s timeout", done)
        if done.finish == "error":
            return self._from_diagnosis(f"model error: {done.error}", done)
        said = [s.strip() for s in _SENTENCE.split(plain(done.text, 1200)) if s.strip()]
        if done.finish == "length" and said and not said[-1].endswith((".", "!", "?")):
            said.pop()  # cut off by max_tokens mid-sentence
        names = host_names(r, d)
        kept = [s for s in said if _keep(s, r, d, names)]
        if not any(_mentions(_without_names(s, names), d.top.category) for s in kept):
            return self._from_diagnosis("the model's answer did not state the diagnosis' top cause", done)
        dropped = len(said) - len(kept)
        note = f"{dropped} sentence(s) dropped: untraceable figures or causes" if dropped else ""
        return Answer("\n".join([" ".join(kept), *facts(r, d)]), "llm", note, done)

    def _from_diagnosis(self, why: str, done: Completion | None = None) -> Answer:
        text = "\n".join([paragraph(self.report, self.diagnosis), *facts(self.report, self.diagnosis)])
        return Answer(text, "diagnosis", why, done)
