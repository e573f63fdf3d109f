"""Reader of recorded incidents in the format of spec/incident-v1.md (incident.yaml + series.jsonl).

The spec lets the project add optional fields, so every model accepts unknown keys;
what the spec requires is enforced by the JSON Schema shipped beside this module.
"""

from __future__ import annotations

import json
import os
import stat
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
from core.vocabulary import MAX_MAGNITUDE, parse, unit_range
from core.window import Window

# Incidents come from other hosts and other people: every limit below is checked before the
# expensive step it protects, so a hostile folder costs at most a bounded read and parse.
# The largest bundled incident.yaml is 2.2 KB; a header is hand-sized.
MAX_HEADER_BYTES = 1 << 20
# The largest bundled series is 0.65 MB; 64 MiB holds ~17 000 samples of the widest bundled
# host (3.9 KB a line): almost 5 hours at `idletune record`'s default 1 s interval.
MAX_SERIES_BYTES = 64 << 20
# Each sample costs a few hundred bytes in memory even when its line is short: the line
# count, not only the size, bounds memory and replay time. 200 000 is 55 hours at 1 s.
MAX_SERIES_LINES = 200_000
# The longest bundled line is under 4 KB (8 GPUs, all sources); 64 KiB is room for ~2000 metrics.
MAX_LINE_BYTES = 64 << 10
# Distinct metric names in one series: each costs a vocabulary lookup and, when known, a
# summary in every report. The largest bundled series has 123; a host with 16 GPUs, 30
# devices and 10 jobs has about 600. Unbounded, 64 MiB of unique job names takes minutes.
MAX_METRIC_NAMES = 4096
# The format nests five levels deep (truth.acceptable_actions[i][j].min); deeper is not an incident.
MAX_YAML_DEPTH = 32
# Pure-Python PyYAML builds some 40 000 nodes a second, so 1 MiB of `[1,1,1,...]` alone
# would take half a minute. A bundled header has at most ~200 nodes; an event costs 7, so this
# still leaves room for a recording with a couple of thousand events, read in about a second.
MAX_YAML_NODES = 20_000
# A YAML number written longer than this is not a measurement; PyYAML turns a long
# sexagesimal integer (1:2:3:...) into a big int in quadratic time, so it is refused unread.
MAX_NUMBER_CHARS = 64
MAX_MESSAGE_CHARS = 300


def _one_line(message: str) -> str:
    """`message` on one printable line of at most MAX_MESSAGE_CHARS, cut in the middle if longer."""
    flat = " ".join(part.strip() for part in message.splitlines() if part.strip())
    if len(flat) > MAX_MESSAGE_CHARS:
        # The middle goes: the file comes first and the complaint last, both worth keeping.
        head = MAX_MESSAGE_CHARS * 2 // 3
        flat = flat[:head] + "…" + flat[len(flat) - (MAX_MESSAGE_CHARS - head - 1) :]
    # Escape sequences in a file name or key must not reach the operator's terminal.
    return "".join(c if c.isprintable() else "?" for c in flat)


class IncidentError(Exception):
    """An incident folder that cannot be read; the message is one line naming file and field."""

    def __init__(self, message: str) -> None:
        super().__init__(_one_line(message))


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


def _show(v: Any) -> str:
    """A short rendering of an offending value, never the whole of a long one."""
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) >= 10**40:
        return f"an integer of {v.bit_length()} bits"  # its decimal form can be huge, or refused
    if isinstance(v, dict | list | tuple | set):
        return f"a {type(v).__name__}"
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _path_key(path: Any) -> list[tuple[int, Any]]:
    # YAML keys need not be strings: order ints and the rest apart, never compare them.
    return [(0, p) if isinstance(p, int) else (1, str(p)) for p in path]


def _schema_error(file: Path, data: Any) -> str | None:
    errors = sorted(_validator().iter_errors(data), key=lambda e: (_path_key(e.absolute_path), e.message))
    if not errors:
        return None
    best = jsonschema.exceptions.best_match(errors)
    assert best is not None  # iter_errors gave at least one
    return f"{file}: {_field(best.absolute_path)}: {best.message}"


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _not_regular(mode: int) -> str | None:
    """Why a file of this mode cannot be read as an incident file; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "not a plain file")
    return f"not a regular file ({kind})"


def _read_regular(file: Path, cap: int) -> bytes:
    """The bytes of a regular file of at most `cap` bytes; anything else is refused without blocking."""
    try:
        # stat first: merely opening some devices acts (a watchdog arms, a tape rewinds).
        problem = _not_regular(os.stat(file).st_mode)
        if problem is not None:
            raise IncidentError(f"{file}: {problem}")
        # O_NONBLOCK: a FIFO swapped in after the stat must not hang the open.
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except (OSError, ValueError) as e:
        raise IncidentError(f"{file}: cannot read ({getattr(e, 'strerror', None) or e})") from None
    try:
        st = os.fstat(fd)  # what was opened, not what the name pointed to a moment ago
        problem = _not_regular(st.st_mode)
        if problem is not None:
            raise IncidentError(f"{file}: {problem}")
        if st.st_size > cap:
            raise IncidentError(f"{file}: {st.st_size} bytes, more than the {cap} accepted")
        chunks: list[bytes] = []
        left = cap + 1  # one byte past the cap tells a file that grew since the fstat
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as e:
        raise IncidentError(f"{file}: cannot read ({e.strerror or e})") from None
    finally:
        os.close(fd)
    if left <= 0:
        raise IncidentError(f"{file}: more than the {cap} bytes accepted")
    return b"".join(chunks)


class _Refused(yaml.YAMLError):
    """A YAML construct this reader does not accept, found before anything is built from it."""

    def __init__(self, what: str, mark: object) -> None:
        super().__init__(what)
        self.what = what
        # A Mark of the pure-Python or of the libyaml reader: both have a 0-based `line`.
        line = getattr(mark, "line", None)
        self.line = line + 1 if isinstance(line, int) else None


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader without anchors, aliases, deep nesting or long numbers: nothing in the file can grow."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._nodes = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        # Refused at the event, before composing: expanding aliases first is what the
        # "billion laughs" document exploits (1.7 KB of YAML, gigabytes of nodes).
        event: yaml.Event = self.peek_event()  # type: ignore[no-untyped-call]  # untyped in the stubs
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise _Refused("YAML anchors and aliases are not accepted", event.start_mark)
        if self._depth >= MAX_YAML_DEPTH:
            raise _Refused(f"nested deeper than {MAX_YAML_DEPTH} levels", event.start_mark)
        self._nodes += 1
        if self._nodes > MAX_YAML_NODES:
            raise _Refused(f"more than {MAX_YAML_NODES} values", event.start_mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_short_number(self, node: yaml.Node) -> Any:
        """An int or float scalar, refused unread when written longer than MAX_NUMBER_CHARS."""
        if not isinstance(node, yaml.ScalarNode):
            raise yaml.constructor.ConstructorError(None, None, "a number must be a scalar", node.start_mark)
        if len(node.value) > MAX_NUMBER_CHARS:
            raise _Refused(f"a number written with more than {MAX_NUMBER_CHARS} characters", node.start_mark)
        if node.tag.endswith(":int"):
            return self.construct_yaml_int(node)
        return self.construct_yaml_float(node)


_StrictLoader.add_constructor("tag:yaml.org,2002:int", _StrictLoader.construct_short_number)
_StrictLoader.add_constructor("tag:yaml.org,2002:float", _StrictLoader.construct_short_number)


def _parse_yaml(file: Path, text: str) -> Any:
    """The document in `text`, or IncidentError naming the line."""
    loader: _StrictLoader | None = None
    try:
        loader = _StrictLoader(text)  # the reader already checks the characters here
        return loader.get_single_data()
    except _Refused as e:
        where = f":{e.line}" if e.line is not None else ""
        raise IncidentError(f"{file}{where}: {e.what}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or getattr(e, "reason", None)  # a ReaderError has a reason
        raise IncidentError(f"{file}: not valid YAML{where}{f' ({problem})' if problem else ''}") from None
    except (ValueError, OverflowError, RecursionError) as e:
        # A scalar the constructors cannot build (a date of month 13, an integer past
        # Python's digit limit): the file is bad, not the reader.
        raise IncidentError(f"{file}: not valid YAML ({type(e).__name__}: {e})") from None
    finally:
        if loader is not None:
            loader.dispose()


def _bad_number(data: Any) -> tuple[list[Any], Any] | None:
    """The path and value of the first number (key or value) that is not finite or exceeds MAX_MAGNITUDE."""
    # A stack, not recursion; the composer already capped the depth.
    todo: list[tuple[list[Any], Any]] = [([], data)]
    while todo:
        path, v = todo.pop()
        if isinstance(v, bool):
            continue
        if isinstance(v, int | float):
            # One comparison covers NaN, both infinities and integers too big for a float
            # (math.isfinite(10**400) raises OverflowError).
            if not abs(v) <= MAX_MAGNITUDE:
                return path, v
        elif isinstance(v, dict):
            for k, x in reversed(list(v.items())):
                todo.append(([*path, k], x))
                todo.append(([*path, k], k))  # keys too: YAML lets a number be a key
        elif isinstance(v, list | tuple | set | frozenset):
            todo += [([*path, i], x) for i, x in reversed(list(enumerate(v)))]
    return None


def _header(folder: Path) -> dict[str, Any]:
    """incident.yaml of `folder`, read, parsed and validated against the schema."""
    header = folder / "incident.yaml"
    raw = _read_regular(header, MAX_HEADER_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise IncidentError(f"{header}: not UTF-8 text (byte {e.start})") from None
    data = _parse_yaml(header, text)
    bad = _bad_number(data)
    if bad is not None:
        path, v = bad
        raise IncidentError(
            f"{header}: {_field(path)}: {_show(v)} is not a finite number "
            f"of magnitude at most {MAX_MAGNITUDE:g}"
        )
    problem = _schema_error(header, data)
    if problem is not None:
        raise IncidentError(problem)
    assert isinstance(data, dict)  # the schema requires an object
    return data


def _number(v: Any) -> float | None:
    """`v` as a float when it is a finite number of magnitude at most MAX_MAGNITUDE, else None."""
    if isinstance(v, bool) or not isinstance(v, int | float) or not abs(v) <= MAX_MAGNITUDE:
        return None
    return float(v)


def _read_series(file: Path) -> list[Sample]:
    raw = _read_regular(file, MAX_SERIES_BYTES)
    if raw.count(b"\n") > MAX_SERIES_LINES:
        raise IncidentError(f"{file}: more than {MAX_SERIES_LINES} lines")
    samples: list[Sample] = []
    last_t = -MAX_MAGNITUDE
    # One string per name, shared by every sample: the copy each line parses is dropped.
    names: dict[str, str] = {}
    for no, line in enumerate(raw.split(b"\n"), start=1):
        if len(line) > MAX_LINE_BYTES:
            raise IncidentError(
                f"{file}:{no}: a line of {len(line)} bytes, more than the {MAX_LINE_BYTES} accepted"
            )
        if not line.strip():
            continue
        try:
            # parse_int=float: an integer literal of any length becomes a float (inf when huge),
            # never a big int that later arithmetic would overflow on.
            row = json.loads(line.decode("utf-8"), parse_int=float)
        except UnicodeDecodeError as e:
            raise IncidentError(f"{file}:{no}: not UTF-8 text (byte {e.start})") from None
        except json.JSONDecodeError as e:
            raise IncidentError(f"{file}:{no}: not JSON ({e.msg})") from None
        except (ValueError, RecursionError) as e:
            raise IncidentError(f"{file}:{no}: not JSON ({type(e).__name__})") from None
        if not isinstance(row, dict) or not isinstance(row.get("m"), dict):
            raise IncidentError(f"{file}:{no}: m: expected an object of metric -> number")
        t = _number(row.get("t"))
        if t is None:
            raise IncidentError(
                f"{file}:{no}: t: {_show(row.get('t'))} is not a finite number "
                f"of magnitude at most {MAX_MAGNITUDE:g}"
            )
        if t < last_t:
            raise IncidentError(f"{file}:{no}: t: {t:g} is earlier than the previous sample ({last_t:g})")
        metrics: dict[str, float] = {}
        for name, v in row["m"].items():
            x = _number(v)
            if x is None:
                raise IncidentError(
                    f"{file}:{no}: m.{name}: {_show(v)} is not a finite number "
                    f"of magnitude at most {MAX_MAGNITUDE:g}"
                )
            if name not in names:
                if len(names) >= MAX_METRIC_NAMES:
                    raise IncidentError(f"{file}:{no}: more than {MAX_METRIC_NAMES} distinct metric names")
                names[name] = name
            metrics[names[name]] = x
            parsed = parse(name)
            if parsed is None:
                continue  # replay ignores it; finite and bounded is all it must be
            unit = parsed.definition.unit
            low, high = unit_range(unit)
            if not low <= x <= high:
                raise IncidentError(
                    f"{file}:{no}: m.{name}: {x:g} is out of range for its unit {unit} ({low:g} to {high:g})"
                )
        # Every field was checked above; validating again would double the load time of a long series.
        samples.append(Sample.model_construct(t=t, m=metrics))
        last_t = t
    if not samples:
        raise IncidentError(f"{file}: no samples")
    return samples


def load_incident(path: str | Path) -> Incident:
    """Read and validate one incident folder; IncidentError with one line on any defect."""
    folder = Path(path)
    if not folder.is_dir():
        raise IncidentError(f"{folder}: not a folder (an incident is a folder with incident.yaml)")
    data = _header(folder)
    header = folder / "incident.yaml"
    if data["id"] != folder.resolve().name:
        raise IncidentError(
            f"{header}: id: {_show(data['id'])} differs from the folder name {folder.resolve().name!r}"
        )
    try:
        incident = Incident.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        raise IncidentError(f"{header}: {_field(first['loc'])}: {first['msg']}") from None
    incident.samples = _read_series(folder / "series.jsonl")
    return incident
