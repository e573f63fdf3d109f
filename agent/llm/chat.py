"""Answers to an operator's questions: the model phrases, the diagnosis decides the facts.

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
from agent.llm import prompts
from agent.llm.backend import DEFAULT_TIMEOUT_S, Completion, Message, Model
from agent.llm.render import (
    clean,
    evidence_line,
    host_names,
    plain,
    quote,
    quote_names,
    quote_text,
    render_report,
)
from core.diagnosis import Category, Diagnosis
from core.report import HealthReport

MAX_TOKENS = 80
# Under the 1,500-token ceiling: a chat turn re-reads only the question, but the first one
# evaluates the whole report, and a 135M model loses the diagnosis in a long one.
REPORT_BUDGET = 800
HISTORY_TURNS = 3
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Answer:
    text: str
    source: Literal["llm", "diagnosis"]
    note: str = ""  # why the model's words were not used, or what was dropped from them
    completion: Completion | None = None


def _mentions(text: str, category: Category) -> bool:
    low = text.lower()
    if category is Category.NONE:
        return "healthy" in low
    return category.value in low or category.value.replace("_", " ") in low


def _keep(sentence: str, report: HealthReport, d: Diagnosis) -> bool:
    if check_grounded(sentence, report, d):
        return False
    named = {c.category for c in d.causes if c.confidence >= 0.05} | {d.top.category}
    return not any(_mentions(sentence, c) for c in Category if c not in named and c is not Category.NONE)


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
        count = self.model.count_tokens if self.model is not None else None
        system = (
            prompts.fill("system.md")
            + "\n\n"
            + prompts.fill(
                "report.md",
                report=render_report(self.report, self.diagnosis, count=count, budget=REPORT_BUDGET),
            )
        )
        out: list[Message] = [{"role": "system", "content": system}]
        for q, a in self.history[-HISTORY_TURNS:]:
            out += [{"role": "user", "content": q}, {"role": "assistant", "content": a}]
        chat = prompts.fill("chat.md", summary=self._summary(), question=quote_text(question, 300))
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

    def _answer(self, question: str) -> Answer:
        r, d = self.report, self.diagnosis
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
        kept = [s for s in said if _keep(s, r, d)]
        if not any(_mentions(s, d.top.category) for s in kept):
            return self._from_diagnosis("the model's answer did not state the diagnosis' top cause", done)
        dropped = len(said) - len(kept)
        note = f"{dropped} sentence(s) dropped: untraceable figures or causes" if dropped else ""
        return Answer("\n".join([" ".join(kept), *facts(r, d)]), "llm", note, done)

    def _from_diagnosis(self, why: str, done: Completion | None = None) -> Answer:
        text = "\n".join([paragraph(self.report, self.diagnosis), *facts(self.report, self.diagnosis)])
        return Answer(text, "diagnosis", why, done)
