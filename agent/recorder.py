"""The recorder: a live window of the host written as a v1 incident (spec/incident-v1.md).

`truth` cannot be known by the machine: it is written as a placeholder that
validates (root_causes [none], no acceptable action, noop_correct true), tagged
`unlabelled`, with a comment asking a person to label it before it joins a suite.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

from agent.devicefilter import DeviceFilter
from core.knob import KnobValue
from core.report import HealthReport, HostInfo, JobInfo
from core.sample import Sample, SourceStatus
from core.vocabulary import is_known
from core.window import Window

UNLABELLED = "unlabelled"

LABEL_NOTE = (
    "# UNLABELLED: the recorder cannot know the truth. Before adding this incident to a suite,\n"
    "# set truth.root_causes (taxonomy of spec/incident-v1.md), onset_t, evidence,\n"
    "# acceptable_actions, forbidden_actions and noop_correct, and remove the `unlabelled` tag.\n"
)


def incident_id(name: str) -> str:
    """A folder name usable as an incident id: [a-z0-9][a-z0-9-]*."""
    text = re.sub(r"[^a-z0-9]+", "-", name.strip().lower()).strip("-")
    return text or "incident"


@dataclass
class Recording:
    """What a recording run saw; `write_incident` turns it into a folder."""

    host: HostInfo
    interval_s: float
    samples: list[Sample]
    knobs: dict[str, KnobValue] = field(default_factory=dict)
    jobs: list[JobInfo] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    sources: dict[str, SourceStatus] = field(default_factory=dict)


def _header(rec: Recording, ident: str, title: str, question: str | None, tags: list[str]) -> dict[str, Any]:
    h = rec.host
    host: dict[str, Any] = {"cpus": h.cpus, "numa_nodes": h.numa_nodes, "gpus": h.gpus}
    if h.gpu_model:
        host["gpu_model"] = h.gpu_model
    if h.kernel:
        host["kernel"] = h.kernel
    host["block_devices"] = list(h.block_devices)
    out: dict[str, Any] = {
        "schema_version": 1,
        "id": ident,
        "title": title,
        "tags": tags,
        "host": host,
        "interval_s": rec.interval_s,
        "knobs": dict(sorted(rec.knobs.items())),
        "jobs": [
            {
                "name": j.name,
                **({"pid": j.pid} if j.pid is not None else {}),
                "gpus": list(j.gpus),
                **({"loader_workers": j.loader_workers} if j.loader_workers is not None else {}),
            }
            for j in rec.jobs
        ],
    }
    if rec.events:
        out["events"] = rec.events
    if question:
        out["question"] = question
    # An optional field (the spec allows additions): which sources were live, so a
    # labeller knows what the recording could and could not see.
    out["recorded_sources"] = {
        name: {"live": st.live, **({"reason": st.reason} if st.reason else {})}
        for name, st in sorted(rec.sources.items())
    }
    return out


def series_lines(samples: Sequence[Sample]) -> list[str]:
    """Samples as series.jsonl lines: times from the first sample, vocabulary names only."""
    if not samples:
        return []
    t0 = samples[0].t
    lines: list[str] = []
    for s in samples:
        m = {k: round(v, 6) for k, v in sorted(s.m.items()) if is_known(k)}
        lines.append(json.dumps({"t": round(s.t - t0, 3), "m": m}, separators=(",", ":")))
    return lines


def write_incident(
    rec: Recording,
    folder: str | Path,
    *,
    title: str | None = None,
    question: str | None = None,
    truth: dict[str, Any] | None = None,
    tags: list[str] | None = None,
    comment: str = "",
) -> Path:
    """Write incident.yaml and series.jsonl into `folder`, whose last part must already be a valid id.

    Without `truth` the incident is tagged `unlabelled` and carries a placeholder truth and a note
    asking a person to label it; a labelled one (a measured counterfactual, say) gives its truth,
    its tags and a comment saying where the truth came from."""
    path = Path(folder)
    ident = path.name
    if incident_id(ident) != ident:
        raise ValueError(f"{ident!r} is not a valid incident id; use {incident_id(ident)!r}")
    if not rec.samples:
        raise ValueError("no samples were collected")
    path.mkdir(parents=True, exist_ok=True)
    title = title or f"Recorded on a live host ({len(rec.samples)} samples)"
    if truth is None:
        header = _header(rec, ident, title, question, [UNLABELLED])
        placeholder = {"truth": {"root_causes": ["none"], "acceptable_actions": [], "noop_correct": True}}
        text = (
            yaml.safe_dump(header, sort_keys=False)
            + LABEL_NOTE
            + yaml.safe_dump(placeholder, sort_keys=False)
        )
    else:
        header = _header(rec, ident, title, question, list(tags or []))
        note = "".join(f"# {line}\n" for line in comment.splitlines())
        text = note + yaml.safe_dump({**header, "truth": truth}, sort_keys=False)
    (path / "incident.yaml").write_text(text)
    (path / "series.jsonl").write_text("\n".join(series_lines(rec.samples)) + "\n")
    return path


class LiveLike(Protocol):
    """What the recorder needs of agent.live.LiveHost (tests pass a fake with fake sources)."""

    def start(self) -> dict[str, SourceStatus]: ...

    def collect(self, duration_s: float, on_sample: Callable[[Sample], None] | None = None) -> Window: ...

    def knobs(self, devices: Sequence[str], gpus: Sequence[int]) -> dict[str, KnobValue]: ...

    def report(self, window: Window) -> HealthReport: ...

    def close(self) -> None: ...


def record(live: LiveLike, duration_s: float, interval_s: float) -> Recording:
    """Collect for `duration_s`, then read host, jobs and knobs while the sources still run.

    Knobs are the values at the start (the spec's meaning), read after the first
    sample; per-job knobs only exist once a job's hook has announced it, so those
    come from the end of the window when the start did not have them.
    """
    first: dict[str, KnobValue] = {}
    taken = False

    def at_first(sample: Sample) -> None:
        nonlocal first, taken
        if not taken:
            taken = True
            first = live.knobs(_host_devices(live), [])

    try:
        live.start()
        window = live.collect(duration_s, at_first)
        report = live.report(window)
    finally:
        live.close()
    knobs = dict(report.knobs)
    # Start values win for every knob that was readable then.
    knobs.update(first)
    return Recording(
        host=report.host,
        interval_s=interval_s,
        samples=list(window.samples),
        knobs=knobs,
        jobs=list(report.jobs),
        sources=dict(report.sources),
    )


def only_devices(rec: Recording, devices: Sequence[str]) -> Recording:
    """The recording restricted to these block devices: other devices' figures, knobs and names
    are left out, so a disk that belongs to other work on a shared host is not in the incident."""
    ours = DeviceFilter(devices)
    return Recording(
        host=ours.host(rec.host),
        interval_s=rec.interval_s,
        samples=[ours.sample(s) for s in rec.samples],
        knobs={k: v for k, v in rec.knobs.items() if ours.knob(k)},
        jobs=list(rec.jobs),
        events=list(rec.events),
        sources=dict(rec.sources),
    )


def _host_devices(live: LiveLike) -> list[str]:
    fs = getattr(live, "fs", None)
    if fs is None:
        return []
    from agent.host import block_devices

    return block_devices(fs) or []


def default_folder_name(now: float | None = None) -> str:
    return "rec-" + time.strftime("%Y%m%d-%H%M%S", time.localtime(now))
