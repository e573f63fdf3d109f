"""Reader of recorded incidents in the format of spec/incident-v1.md (incident.yaml + series.jsonl).

The spec lets the project add optional fields, so every model accepts unknown keys;
what the spec requires is enforced by the JSON Schema shipped beside this module.
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from core.diagnosis import DEFAULT_QUESTION, Category
from core.knob import KnobValue
from core.report import HealthReport, HostInfo, JobInfo, build_report
from core.sample import Sample, SourceStatus
from core.window import Window


class IncidentError(Exception):
    """An incident folder that cannot be read; the message is one line naming file and field."""


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class IncidentHost(_Open):
    cpus: int
    numa_nodes: int
    gpus: int
    gpu_model: str | None = None
    kernel: str | None = None
    block_devices: list[str] = Field(default_factory=list)


class IncidentJob(_Open):
    name: str
    pid: int | None = None
    gpus: list[int] = Field(default_factory=list)
    loader_workers: int | None = None


class IncidentEvent(_Open):
    t: float
    kind: str
    detail: str = ""


class ActionStep(_Open):
    primitive: str
    target: str | int | None = None
    min: float | None = None
    max: float | None = None
    value: float | str | None = None


class ForbiddenAction(_Open):
    primitive: str
    target: str | int | None = None


class Truth(_Open):
    root_causes: list[Category]
    onset_t: float | None = None
    evidence: list[str] = Field(default_factory=list)
    acceptable_actions: list[list[ActionStep]]
    forbidden_actions: list[ForbiddenAction] = Field(default_factory=list)
    noop_correct: bool


class Incident(_Open):
    schema_version: int
    id: str
    title: str
    tags: list[str] = Field(default_factory=list)
    host: IncidentHost
    interval_s: float
    knobs: dict[str, KnobValue]
    jobs: list[IncidentJob] = Field(default_factory=list)
    events: list[IncidentEvent] = Field(default_factory=list)
    question: str = DEFAULT_QUESTION
    truth: Truth
    samples: list[Sample] = Field(default_factory=list, exclude=True)

    def host_info(self) -> HostInfo:
        h = self.host
        return HostInfo(
            cpus=h.cpus,
            numa_nodes=h.numa_nodes,
            gpus=h.gpus,
            gpu_model=h.gpu_model,
            kernel=h.kernel,
            block_devices=list(h.block_devices),
        )

    def job_infos(self) -> list[JobInfo]:
        return [
            JobInfo(name=j.name, pid=j.pid, gpus=list(j.gpus), loader_workers=j.loader_workers)
            for j in self.jobs
        ]

    def window(self) -> Window:
        """All samples in one window: the horizon covers the whole recording."""
        span = self.samples[-1].t - self.samples[0].t if self.samples else 0.0
        return Window(horizon_s=max(600.0, span + 2 * self.interval_s), samples=self.samples)

    def report(self, window: Window | None = None) -> HealthReport:
        """The HealthReport a live host would have produced; only the header and series feed it."""
        return build_report(
            window if window is not None else self.window(),
            self.host_info(),
            knobs=dict(self.knobs),
            jobs=self.job_infos(),
            sources={"replay": SourceStatus(live=True, reason="recorded incident")},
        )


@lru_cache(maxsize=1)
def _validator() -> jsonschema.Draft202012Validator:
    text = resources.files("core").joinpath("schema/incident-v1.schema.json").read_text()
    return jsonschema.Draft202012Validator(json.loads(text))


def _field(path: Any) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


def _schema_error(file: Path, data: Any) -> str | None:
    errors = sorted(_validator().iter_errors(data), key=lambda e: (list(e.absolute_path), e.message))
    if not errors:
        return None
    best = jsonschema.exceptions.best_match(errors)
    assert best is not None  # iter_errors gave at least one
    return f"{file}: {_field(best.absolute_path)}: {best.message}"


def _read_series(file: Path) -> list[Sample]:
    samples: list[Sample] = []
    try:
        lines = file.read_text().splitlines()
    except OSError as e:
        raise IncidentError(f"{file}: cannot read ({e.strerror or e})") from None
    last_t = -math.inf
    for no, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise IncidentError(f"{file}:{no}: not JSON ({e.msg})") from None
        if not isinstance(row, dict) or not isinstance(row.get("m"), dict):
            raise IncidentError(f"{file}:{no}: m: expected an object of metric -> number")
        t = row.get("t")
        if isinstance(t, bool) or not isinstance(t, int | float):
            raise IncidentError(f"{file}:{no}: t: {t!r} is not a number")
        if t < last_t:
            raise IncidentError(f"{file}:{no}: t: {t} is earlier than the previous sample ({last_t})")
        metrics: dict[str, float] = {}
        for name, v in row["m"].items():
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                raise IncidentError(f"{file}:{no}: m.{name}: {v!r} is not a finite number")
            metrics[name] = float(v)
        samples.append(Sample(t=float(t), m=metrics))
        last_t = t
    if not samples:
        raise IncidentError(f"{file}: no samples")
    return samples


def load_incident(path: str | Path) -> Incident:
    """Read and validate one incident folder; IncidentError with one line on any defect."""
    folder = Path(path)
    if not folder.is_dir():
        raise IncidentError(f"{folder}: not a folder (an incident is a folder with incident.yaml)")
    header = folder / "incident.yaml"
    try:
        data = yaml.safe_load(header.read_text())
    except OSError as e:
        raise IncidentError(f"{header}: cannot read ({e.strerror or e})") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise IncidentError(f"{header}: not valid YAML{where}") from None
    problem = _schema_error(header, data)
    if problem is not None:
        raise IncidentError(problem)
    if data["id"] != folder.resolve().name:
        raise IncidentError(
            f"{header}: id: {data['id']!r} differs from the folder name {folder.resolve().name!r}"
        )
    try:
        incident = Incident.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        raise IncidentError(f"{header}: {_field(first['loc'])}: {first['msg']}") from None
    incident.samples = _read_series(folder / "series.jsonl")
    return incident
