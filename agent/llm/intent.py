"""What an operator's question asks for, decided by rules before any model sees it.

A small model cannot be trusted to refuse a change or to stay on topic, so these are
decided here, deterministically: a request to change a setting (declined: the chat never
applies changes), a question whether a change is safe (the catalogue's tier and bounds),
a question about a moment (`t=40`), a question about what to change (the catalogue's
remedies), a question outside what idletune answers; anything else asks why, and the
model may phrase that answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

from primitives.base import Primitive
from primitives.catalog import all_primitives, get


class Intent(StrEnum):
    WHY = "why"
    CHANGE = "change"  # a request that a setting be changed now
    SAFETY = "safety"  # whether changing a setting would be safe or would help
    REMEDY = "remedy"  # what could be changed
    AT_TIME = "at_time"  # what happened at a moment of the window
    OUT_OF_SCOPE = "out_of_scope"


@dataclass(frozen=True)
class Asked:
    intent: Intent
    primitive: Primitive | None = None  # the setting the question names
    value: float | None = None  # the value a change request asks for
    t: float | None = None  # the moment an AT_TIME question names, seconds into the window


# Words people use for a catalogue setting, beyond its id and the id's last part.
_ALIASES: dict[str, str] = {
    "readahead": "block.read_ahead_kb",
    "read-ahead": "block.read_ahead_kb",
    "read ahead": "block.read_ahead_kb",
    "io scheduler": "block.scheduler",
    "i/o scheduler": "block.scheduler",
    "queue depth": "block.nr_requests",
    "power limit": "gpu.power_limit_w",
    "power cap": "gpu.power_limit_w",
    "batch size": "trainer.batch_size",
    "num_workers": "loader.workers",
    "loader workers": "loader.workers",
    "dataloader workers": "loader.workers",
    "prefetch": "loader.prefetch_factor",
    "governor": "cpufreq.governor",
    "numa balancing": "kernel.numa_balancing",
    "autogroup": "kernel.sched_autogroup_enabled",
    "huge pages": "mm.thp_enabled",
    "thp": "mm.thp_enabled",
    "dirty ratio": "vm.dirty_ratio",
    "dirty background ratio": "vm.dirty_background_ratio",
}


def _names() -> list[tuple[str, str]]:
    """(phrase, primitive id), longest phrase first so `dirty_background_ratio` wins over `dirty_ratio`."""
    pairs: dict[str, str] = dict(_ALIASES)
    for p in all_primitives():
        pairs[p.id] = p.id
        pairs[p.id.rsplit(".", 1)[1]] = p.id
    return sorted(pairs.items(), key=lambda kv: (-len(kv[0]), kv[0]))


def named_primitive(text: str) -> Primitive | None:
    """The catalogue setting `text` names, if any."""
    low = text.lower()
    for phrase, pid in _names():
        if re.search(rf"(?<![\w.]){re.escape(phrase)}(?![\w])", low):
            return get(pid)
    return None


_VERB = (
    r"(?:set|change|raise|increase|lower|decrease|reduce|bump|apply|disable|enable|turn|switch|tune|"
    r"double|halve|drop|max out|cap|uncap)"
)
# "set X to 90", "please raise readahead", "can you lower the power limit", "go ahead and apply it".
_CHANGE = re.compile(
    rf"^(?:please\s+|ok(?:ay)?,?\s+|now\s+|just\s+|go ahead and\s+|"
    rf"(?:can|could|would|will) you(?: please)?\s+|i want you to\s+|you should\s+)*{_VERB}\b"
)
_SAFETY = re.compile(
    rf"\b(?:is it (?:safe|ok|okay|wise|a good idea)|would it (?:be safe|help|hurt)|"
    rf"should i|can i|may i|what happens if i|what if i|what would happen if)\b.*\b{_VERB}\b"
)
_REMEDY = re.compile(
    r"\b(?:what (?:would|should|could|can) (?:you|i|we) (?:change|do|tune|try|fix)|"
    r"how (?:do|can|could|would|should) (?:i|we|you) (?:fix|solve|improve|speed|resolve|tune)|"
    r"what (?:can|could|should) be (?:done|changed)|what (?:is|'s) the fix|any fix|"
    r"what (?:settings?|knobs?) (?:should|would|could))"
)
_ADVISE = re.compile(r"\b(?:recommend\w*|suggest\w*|advice|advise)\b")
_AT_TIME = re.compile(
    r"\b(?:t\s*=\s*|at\s+(?:second\s+)?|around\s+)(\d+(?:\.\d+)?)\s*(?:s\b|sec|seconds?\b)?"
)
_MOMENT = re.compile(r"\b(?:t\s*=\s*\d|what happened|going on|at second|seconds? in)\b")
# What the tool answers about: this host, its GPUs and jobs, and their figures.
_DOMAIN = re.compile(
    r"\b(?:gpus?|idle|util\w*|slow\w*|train\w*|jobs?|step|loader|dataloader|data|batch\w*|"
    r"cpus?|memory|ram|reclaim|swap\w*|disks?|storage|nvme\w*|io|i/o|read\w*|writ\w*|"
    r"dirty|page cache|checkpoint\w*|throughput|samples|bottleneck|stall\w*|wait\w*|"
    r"healthy|wrong|problem|issue|cause\w*|why|fix|host|node|machine|server|numa|pcie|"
    r"power|thermal|throttl\w*|temperature|nccl|collectives?|comm\w*|latency|diagnos\w*|"
    r"evidence|figures?|happen\w*|going on|kernel|settings?|knobs?|tun\w*|sysctl)\b"
)
# About GPUs or training, yet not about this host: buying, coding, news, models in general.
_ELSEWHERE = re.compile(
    r"\b(?:buy|purchase|price|cost of|stock|weather|poem|joke|recipe|translate|capital of|"
    r"who (?:won|is the)|write (?:me )?(?:a |an |the )?(?:poem|story|essay|song|cuda|kernel|script|"
    r"code|function|program)|implement|explain (?:how )?transformers?|what is (?:a |an )?(?:gpu|llm|"
    r"transformer)|best (?:gpu|llm|model|framework)|which (?:gpu|cloud|framework) should|"
    r"pytorch or|tensorflow or|history of|salary|election)\b"
)


def _number(text: str) -> float | None:
    found = re.findall(r"(?<![\w.])(\d+(?:\.\d+)?)", text)
    return float(found[-1]) if found else None


def classify(question: str) -> Asked:
    """The question's intent, with the setting, value or moment it names."""
    low = " ".join(question.lower().split()).strip(" ?!.")
    primitive = named_primitive(low)
    domain = _DOMAIN.search(low) is not None or primitive is not None
    value = _number(low) if primitive is not None else None
    if _SAFETY.search(low) or (primitive is not None and re.match(r"^(?:is|are|would|does)\b", low)):
        return Asked(Intent.SAFETY, primitive, value)
    if _ELSEWHERE.search(low) and primitive is None:
        return Asked(Intent.OUT_OF_SCOPE)
    if _CHANGE.search(low):
        return Asked(Intent.CHANGE, primitive, value)
    if _REMEDY.search(low) or (_ADVISE.search(low) and domain):
        return Asked(Intent.REMEDY, primitive)
    at = _AT_TIME.search(low)
    if at is not None and _MOMENT.search(low):
        return Asked(Intent.AT_TIME, t=float(at.group(1)))
    # A short follow-up ("since when?", "and then?") leans on the conversation, not on a topic.
    if not domain and len(low.split()) > 3:
        return Asked(Intent.OUT_OF_SCOPE)
    return Asked(Intent.WHY, primitive)
