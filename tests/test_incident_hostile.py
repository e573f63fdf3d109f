"""Hostile incident folders: each is refused with one short line, quickly, and never stops an eval run."""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from agent.cli import eval as eval_cli
from agent.cli import why
from agent.proposers.rules import RuleProposer, load_policies
from core.incident import (
    MAX_HEADER_BYTES,
    MAX_LINE_BYTES,
    MAX_MESSAGE_CHARS,
    MAX_SERIES_BYTES,
    MAX_SERIES_LINES,
    Incident,
    IncidentError,
    load_incident,
)
from core.vocabulary import parse, unit_range
from evals.harness import EvalRun, evaluate

BUNDLED = Path(__file__).resolve().parent.parent / "evals" / "incidents"
HEALTHY = BUNDLED / "healthy-host"
HEADER = (HEALTHY / "incident.yaml").read_text()
SERIES = [json.loads(line) for line in (HEALTHY / "series.jsonl").read_text().splitlines()]

# Ten levels of nine: 9**10 (3.5 billion) strings once aliases are expanded, from 1.5 KB of text.
BILLION_LAUGHS = 'lol: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"lol{i}: &l{i} [{','.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 10)
)


def _copy(root: Path, name: str = "healthy-host") -> Path:
    dst = root / name
    shutil.copytree(HEALTHY, dst)
    if name != "healthy-host":
        (dst / "incident.yaml").write_text(HEADER.replace("id: healthy-host", f"id: {name}"))
    return dst


def _write_series(folder: Path, change: Callable[[int, dict[str, Any]], object]) -> None:
    """The healthy series with `change(line index, metrics)` applied to every sample."""
    rows = []
    for i, row in enumerate(SERIES):
        m = dict(row["m"])
        change(i, m)
        rows.append(json.dumps({"t": row["t"], "m": m}))
    (folder / "series.jsonl").write_text("\n".join(rows) + "\n")


def _one_line(e: pytest.ExceptionInfo[IncidentError]) -> str:
    msg = str(e.value)
    assert "\n" not in msg and "\r" not in msg
    assert 0 < len(msg) <= MAX_MESSAGE_CHARS
    return msg


def _refused(folder: Path, match: str) -> str:
    with pytest.raises(IncidentError, match=match) as e:
        load_incident(folder)
    return _one_line(e)


def test_alias_bomb_is_refused_before_it_expands(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "incident.yaml").write_text(HEADER + BILLION_LAUGHS)
    t0 = time.perf_counter()
    msg = _refused(folder, "anchors and aliases are not accepted")
    assert time.perf_counter() - t0 < 0.5
    assert msg.startswith(f"{folder}/incident.yaml:")


@pytest.mark.parametrize(
    "extra",
    [
        "x: &a 1\n",  # an anchor alone
        "x: *a\n",  # an alias of nothing
        "x: &a {k: 1}\ny:\n  <<: *a\n",  # a merge key is an alias too
    ],
)
def test_any_anchor_or_alias_is_refused(tmp_path: Path, extra: str) -> None:
    folder = _copy(tmp_path)
    (folder / "incident.yaml").write_text(HEADER + extra)
    _refused(folder, r"incident.yaml:\d+: YAML anchors and aliases are not accepted")


@pytest.mark.parametrize(
    ("extra", "match"),
    [
        ("x: " + "[" * 5000 + "]" * 5000 + "\n", "nested deeper than"),
        ("x: [" + "1," * 30_000 + "1]\n", "more than 20000 values"),
        # PyYAML would build this base-60 integer in quadratic time.
        ("x: 1" + ":1" * 100_000 + "\n", "a number written with more than"),
        ("x: " + "9" * 5000 + "\n", "a number written with more than"),
        ("x: 2020-13-45\n", "not valid YAML"),
        ("x: !!python/object:os.system echo\n", "not valid YAML"),
        ("x: \x1b[31m\n", "not valid YAML"),
    ],
)
def test_expensive_or_odd_yaml_is_refused_quickly(tmp_path: Path, extra: str, match: str) -> None:
    folder = _copy(tmp_path)
    (folder / "incident.yaml").write_text(HEADER + extra)
    t0 = time.perf_counter()
    _refused(folder, match)
    assert time.perf_counter() - t0 < 5.0


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", "1.0e+999"])
def test_non_finite_interval_is_refused(tmp_path: Path, value: str) -> None:
    folder = _copy(tmp_path)
    (folder / "incident.yaml").write_text(HEADER.replace("interval_s: 2", f"interval_s: {value}"))
    _refused(folder, r"incident.yaml: interval_s: .* is not a finite number")


def test_every_number_of_the_header_must_be_finite_and_bounded(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "incident.yaml").write_text(HEADER.replace("vm.swappiness: 60", "vm.swappiness: .nan"))
    _refused(folder, r"knobs.vm.swappiness: nan is not a finite number")
    (folder / "incident.yaml").write_text(HEADER.replace("cpus: 224", "cpus: 10000000000000000000"))
    _refused(folder, r"host.cpus: 10000000000000000000 is not a finite number of magnitude at most 1e\+15")


def test_huge_integer_series_value_is_one_line(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    lines = (folder / "series.jsonl").read_text().splitlines()
    lines[2] = '{"t": 4, "m": {"gpu.0.util_pct": ' + "1" + "0" * 400 + "}}"
    (folder / "series.jsonl").write_text("\n".join(lines) + "\n")
    _refused(folder, r"series.jsonl:3: m.gpu.0.util_pct: inf is not a finite number")
    lines[2] = '{"t": 4, "m": {"vendor.fan_rpm": ' + "9" * 5000 + "}}"  # past Python's digit limit
    (folder / "series.jsonl").write_text("\n".join(lines) + "\n")
    _refused(folder, r"series.jsonl:3: m.vendor.fan_rpm: inf is not a finite number")


def test_huge_time_is_refused(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "series.jsonl").write_text('{"t": 1' + "0" * 400 + ', "m": {}}\n')
    _refused(folder, r"series.jsonl:1: t: inf is not a finite number")


def test_values_of_1e308_are_refused(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    _write_series(folder, lambda i, m: m.update({"io.nvme0n1.read_kbps": 1e308}))
    _refused(folder, r"series.jsonl:1: m.io.nvme0n1.read_kbps: 1e\+308 is not a finite number")


def test_unknown_names_must_be_finite_and_bounded_but_may_be_negative(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    _write_series(folder, lambda i, m: m.update({"vendor.offset": -5.0}))
    assert load_incident(folder).samples[0].m["vendor.offset"] == -5.0
    _write_series(folder, lambda i, m: m.update({"vendor.offset": 2e15}))
    _refused(folder, r"m.vendor.offset: 2000000000000000.0 is not a finite number")


@pytest.mark.parametrize(
    ("name", "value", "match"),
    [
        ("trainer.bert-ft.data_wait_frac", 3.0, r"3 is out of range for its unit 0..1 \(-0.05 to 1.05\)"),
        ("trainer.bert-ft.data_wait_frac", -0.2, "out of range for its unit 0..1"),
        ("gpu.0.util_pct", 106.0, r"106 is out of range for its unit % \(-5 to 105\)"),
        ("psi.io.some_avg10", -40.0, "out of range for its unit %"),
        ("gpu.0.temp_c", -300.0, r"-300 is out of range for its unit °C \(-273.15 to 1e\+15\)"),
    ],
)
def test_values_outside_their_unit_are_refused(tmp_path: Path, name: str, value: float, match: str) -> None:
    folder = _copy(tmp_path)
    _write_series(folder, lambda i, m: m.update({name: value}) if i == 5 else None)
    msg = _refused(folder, match)
    assert f"series.jsonl:6: m.{name}: " in msg


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("gpu.0.util_pct", 104.0),  # the 5 % slack for measurement skew
        ("trainer.bert-ft.data_wait_frac", 1.04),
        ("trainer.bert-ft.data_wait_frac", -0.01),  # zero-mean noise near zero
        ("gpu.0.temp_c", -20.0),
        # The spec states no range for rates, latencies and sizes: finite and bounded is all.
        ("io.nvme0n1.write_kbps", -500.0),
    ],
)
def test_values_within_the_slack_are_accepted(tmp_path: Path, name: str, value: float) -> None:
    folder = _copy(tmp_path)
    _write_series(folder, lambda i, m: m.update({name: value}) if i == 5 else None)
    inc = load_incident(folder)
    assert inc.samples[5].m[name] == value
    assert name in inc.report().metrics


def test_extreme_accepted_values_still_make_a_report(tmp_path: Path) -> None:
    folder = _copy(tmp_path)

    def highest(i: int, m: dict[str, Any]) -> None:
        for k in m:
            parsed = parse(k)
            if parsed is not None:
                m[k] = unit_range(parsed.definition.unit)[1]

    _write_series(folder, highest)
    report = load_incident(folder).report()
    assert report.metrics["io.nvme0n1.read_kbps"] == 1e15 and report.metrics["gpu.0.util_pct"] == 105
    assert all(math.isfinite(s.mean) for sub in report.subsystems.values() for s in sub.values())


def _hangs(fn: Callable[[], object], seconds: float) -> tuple[bool, BaseException | None]:
    """Run `fn` in a daemon thread: whether it was still running after `seconds`, and what it raised."""
    raised: list[BaseException] = []

    def run() -> None:
        try:
            fn()
        except BaseException as e:
            raised.append(e)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    return worker.is_alive(), (raised[0] if raised else None)


@pytest.mark.parametrize("which", ["series.jsonl", "incident.yaml"])
def test_a_fifo_is_refused_without_blocking(tmp_path: Path, which: str) -> None:
    folder = _copy(tmp_path)
    fifo = folder / which
    fifo.unlink()
    os.mkfifo(fifo)
    try:
        alive, raised = _hangs(lambda: load_incident(folder), 5.0)
        assert not alive, "load_incident blocked on a FIFO"
        assert isinstance(raised, IncidentError)
        assert str(raised) == f"{fifo}: not a regular file (a FIFO)"
    finally:
        # Free a reader that blocked (the old behaviour), so no thread outlives the test.
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


def test_a_link_to_dev_zero_is_refused(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "series.jsonl").unlink()
    (folder / "series.jsonl").symlink_to("/dev/zero")
    msg = _refused(folder, r"not a regular file \(a character device\)")
    assert msg == f"{folder}/series.jsonl: not a regular file (a character device)"


def test_a_folder_in_place_of_a_file_is_refused(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "series.jsonl").unlink()
    (folder / "series.jsonl").mkdir()
    _refused(folder, r"series.jsonl: not a regular file \(a folder\)")


def test_a_link_to_a_regular_file_is_followed(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    shutil.move(folder / "series.jsonl", tmp_path / "elsewhere.jsonl")
    (folder / "series.jsonl").symlink_to(tmp_path / "elsewhere.jsonl")
    assert len(load_incident(folder).samples) == len(SERIES)


def test_oversized_files_are_refused_before_reading(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    with (folder / "series.jsonl").open("r+b") as f:
        f.truncate(MAX_SERIES_BYTES + 1)  # sparse: nothing is written, and nothing must be read
    t0 = time.perf_counter()
    _refused(
        folder, rf"series.jsonl: {MAX_SERIES_BYTES + 1} bytes, more than the {MAX_SERIES_BYTES} accepted"
    )
    assert time.perf_counter() - t0 < 0.5
    (folder / "incident.yaml").write_text(HEADER + "#" * MAX_HEADER_BYTES + "\n")
    _refused(folder, r"incident.yaml: \d+ bytes, more than the 1048576 accepted")


def test_too_many_lines_or_too_long_a_line_is_refused(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "series.jsonl").write_text('{"t": 0, "m": {}}\n' * (MAX_SERIES_LINES + 1))
    _refused(folder, rf"series.jsonl: more than {MAX_SERIES_LINES} lines")
    long_name = "vendor." + "x" * MAX_LINE_BYTES
    (folder / "series.jsonl").write_text(json.dumps({"t": 0, "m": {long_name: 1}}) + "\n")
    _refused(folder, rf"series.jsonl:1: a line of \d+ bytes, more than the {MAX_LINE_BYTES} accepted")


def test_too_many_metric_names_are_refused(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    rows = [json.dumps({"t": t, "m": {f"vendor.m{t}_{k}": 1 for k in range(1000)}}) for t in range(5)]
    (folder / "series.jsonl").write_text("\n".join(rows) + "\n")
    _refused(folder, r"series.jsonl:5: more than 4096 distinct metric names")


def test_long_values_never_reach_the_message(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "series.jsonl").write_text(json.dumps({"t": 0, "m": {"gpu.0.util_pct": "x" * 60_000}}) + "\n")
    _refused(folder, r"m.gpu.0.util_pct: 'xxx.*\.\.\. is not a finite number")
    (folder / "series.jsonl").write_text((HEALTHY / "series.jsonl").read_text())
    (folder / "incident.yaml").write_text(
        HEADER.replace("title: Healthy host, GPUs busy", "title: [" + "1," * 15_000 + "1]")
    )
    _refused(folder, r"incident.yaml: title: .* is not of type 'string'")
    long_id = "a" * 5000
    (folder / "incident.yaml").write_text(HEADER.replace("id: healthy-host", f"id: {long_id}"))
    _refused(folder, "differs from the folder name")


def test_control_characters_in_a_name_do_not_reach_the_message(tmp_path: Path) -> None:
    folder = _copy(tmp_path)
    (folder / "series.jsonl").write_text(json.dumps({"t": 0, "m": {"vendor.\x1b[2J\nx": "bad"}}) + "\n")
    msg = _refused(folder, r"m.vendor.\?\[2J x: 'bad' is not a finite number")
    assert "\x1b" not in msg


def _hostile_suite(root: Path, *, blocking: bool = True) -> Path:
    """The two spec examples beside hostile incidents; `blocking` adds those that once hung the reader."""
    suite = root / "suite"
    for name in ("checkpoint-writeback-burst", "healthy-host"):
        shutil.copytree(BUNDLED / name, suite / name)
    bomb = _copy(suite, "bomb")
    (bomb / "incident.yaml").write_text((bomb / "incident.yaml").read_text() + BILLION_LAUGHS)
    huge = _copy(suite, "huge")
    (huge / "series.jsonl").write_text('{"t": 0, "m": {"gpu.0.util_pct": 1' + "0" * 400 + "}}\n")
    out_of_range = _copy(suite, "out-of-range")
    _write_series(out_of_range, lambda i, m: m.update({"trainer.bert-ft.data_wait_frac": 3.0}))
    if not blocking:
        return suite
    fifo = _copy(suite, "fifo")
    (fifo / "series.jsonl").unlink()
    os.mkfifo(fifo / "series.jsonl")
    zero = _copy(suite, "zero")
    (zero / "series.jsonl").unlink()
    (zero / "series.jsonl").symlink_to("/dev/zero")
    return suite


def test_eval_scores_the_good_and_lists_the_hostile(tmp_path: Path) -> None:
    suite = _hostile_suite(tmp_path)
    runs: list[EvalRun] = []
    alive, raised = _hangs(
        lambda: runs.append(evaluate([suite], lambda: RuleProposer(load_policies([], with_default=True)))),
        30.0,
    )
    assert not alive and raised is None, raised
    (run,) = runs
    assert [r.replay.id for r in run.results] == ["checkpoint-writeback-burst", "healthy-host"]
    assert run.summary.incidents == 2 and run.summary.invalid == 5
    assert run.results[0].score.ac1 and run.results[1].score.restraint
    refused = {Path(e.split(":")[0]).parent.name for e in run.errors}
    assert refused == {"bomb", "huge", "out-of-range", "fifo", "zero"}
    assert all("\n" not in e and len(e) <= MAX_MESSAGE_CHARS for e in run.errors)


def _eval_app() -> typer.Typer:
    app = typer.Typer()
    eval_cli.register(app)
    app.command("noop", hidden=True)(lambda: None)  # keeps `eval` a named subcommand
    return app


def test_eval_command_lists_the_refused_in_text_and_json(tmp_path: Path) -> None:
    suite = _hostile_suite(tmp_path, blocking=False)
    res = CliRunner().invoke(_eval_app(), ["eval", str(suite)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    listed = [line for line in res.stdout.splitlines() if line.startswith("invalid, not scored: ")]
    assert len(listed) == 3 and any("anchors and aliases" in line for line in listed)
    assert "checkpoint-writeback-burst" in res.stdout and "root cause AC@1" in res.stdout
    res = CliRunner().invoke(_eval_app(), ["eval", str(suite), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["summary"]["incidents"] == 2 and doc["summary"]["invalid"] == 3
    assert len(doc["errors"]) == 3 and any("out of range for its unit 0..1" in e for e in doc["errors"])
    assert len(res.stderr.strip().splitlines()) == 3


def test_eval_of_only_hostile_incidents_says_why(tmp_path: Path) -> None:
    bomb = _copy(tmp_path, "bomb")
    (bomb / "incident.yaml").write_text((bomb / "incident.yaml").read_text() + BILLION_LAUGHS)
    res = CliRunner().invoke(_eval_app(), ["eval", str(tmp_path)])
    assert res.exit_code == 2
    assert "anchors and aliases" in res.stderr and "no incident could be read (1 invalid)" in res.stderr


def test_why_on_a_hostile_incident_is_one_line_exit_2(tmp_path: Path) -> None:
    app = typer.Typer()
    why.register(app)
    app.command("noop", hidden=True)(lambda: None)
    folder = _copy(tmp_path)
    (folder / "incident.yaml").write_text(HEADER + BILLION_LAUGHS)
    res = CliRunner().invoke(app, ["why", "--incident", str(folder)])
    assert res.exit_code == 2
    (line,) = res.stderr.strip().splitlines()
    assert line.startswith("idletune: ") and "anchors and aliases are not accepted" in line


# --- fuzzing -------------------------------------------------------------------------------

_NUMBER_TEXT = st.sampled_from(
    [
        "0", "-1", "1e308", "-1e308", "1e400", "1" + "0" * 400, "9" * 5000, "NaN", "Infinity",
        "-Infinity", "1e15", "1e16", "-273.15", "105", "1.05", "3.0", "true", "null", '"7"', "[]", "{}",
    ]
)  # fmt: skip
_YAML_SCALARS = st.sampled_from(
    [
        ".nan", ".inf", "-.inf", "1.0e+999", "1" + "0" * 40, "0b" + "1" * 80, "1:2:3", "2020-13-45",
        "2020-01-01", "~", "yes", "!!binary aGVsbG8=", "!!set {a, b}", '"\\x1b[2J"', "&a 1", "*a",
        "[1, [2, [3]]]", "{k: .nan}", "- x", "'", "!!python/name:os.system", "? [a]\n  : 1",
    ]
)  # fmt: skip
_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=12,
)
_SERIES_NAMES = [
    "gpu.0.util_pct", "io.nvme0n1.lat_p99_us", "gpu.0.temp_c", "mem.dirty_mib", "vendor.x",
    "trainer.bert-ft.data_wait_frac",
]  # fmt: skip
_FIELDS = [
    "schema_version", "id", "title", "tags", "host", "host.cpus", "host.gpus", "interval_s", "knobs",
    "knobs.vm.swappiness", "jobs", "events", "question", "truth", "truth.root_causes", "truth.noop_correct",
    "truth.acceptable_actions", "truth.onset_t",
]  # fmt: skip


def _mutate_header(data: Any, field: str, value: Any) -> None:
    """Put `value` at `field` of the parsed header (dots descend, except inside knob ids)."""
    if field.startswith("knobs."):
        data["knobs"][field.removeprefix("knobs.")] = value
        return
    *parents, last = field.split(".")
    for p in parents:
        data = data[p]
    data[last] = value


@st.composite
def _header_text(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["mutated", "scalar", "raw"]))
    if kind == "mutated":
        data = yaml.safe_load(HEADER)
        _mutate_header(data, draw(st.sampled_from(_FIELDS)), draw(_JSON_VALUES))
        return yaml.safe_dump(data, sort_keys=False)
    if kind == "scalar":
        field = draw(st.sampled_from(["interval_s", "title", "  cpus", "  vm.swappiness", "  noop_correct"]))
        return "\n".join(
            f"{line.split(':')[0]}: {draw(_YAML_SCALARS)}" if line.startswith(field + ":") else line
            for line in HEADER.splitlines()
        )
    return HEADER + draw(st.text(alphabet="&*![]{}:,-?'\"\n #ab1.\t|>~", max_size=200))


@st.composite
def _series_text(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["numbers", "metrics", "values", "raw"]))
    lines = []
    for t in range(draw(st.integers(1, 6))):
        # Mostly a good time, so that the metrics behind it are reached too.
        when = draw(st.one_of(st.just(str(t)), st.just(str(t)), _NUMBER_TEXT))
        if kind == "numbers":  # number literals as written: huge, NaN, 10**400, wrong types
            names = draw(st.lists(st.sampled_from(_SERIES_NAMES), max_size=4))
            body = ", ".join(f'"{n}": {draw(_NUMBER_TEXT)}' for n in names)
            lines.append(f'{{"t": {when}, "m": {{{body}}}}}')
        elif kind == "metrics":  # any JSON value under known and unknown names
            m = draw(st.dictionaries(st.sampled_from(_SERIES_NAMES) | st.text(max_size=12), _JSON_VALUES))
            lines.append(f'{{"t": {when}, "m": {json.dumps(m)}}}')
        elif kind == "values":
            lines.append(json.dumps(draw(_JSON_VALUES)))
        else:
            lines.append(draw(st.text(max_size=60)))
    return "\n".join(lines) + "\n"


def _check(header: str, series: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "healthy-host"
        folder.mkdir()
        (folder / "incident.yaml").write_text(header, encoding="utf-8", errors="surrogatepass")
        (folder / "series.jsonl").write_text(series, encoding="utf-8", errors="surrogatepass")
        try:
            inc = load_incident(folder)
        except IncidentError as e:
            msg = str(e)
            assert msg and "\n" not in msg and len(msg) <= MAX_MESSAGE_CHARS, msg
            return
        assert isinstance(inc, Incident)
        inc.report()  # what is accepted must also summarise


@settings(max_examples=200, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(header=_header_text(), series=st.just((HEALTHY / "series.jsonl").read_text()))
def test_fuzz_hostile_headers(header: str, series: str) -> None:
    _check(header, series)


@settings(max_examples=200, deadline=2000, suppress_health_check=[HealthCheck.too_slow])
@given(series=_series_text())
def test_fuzz_hostile_series(series: str) -> None:
    _check(HEADER, series)
