"""The operator's config file: the model narrows the catalogue only, and every bad file is one line
naming the file and the line, exit 2, never a traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent.cli.main import _register_all, app
from agent.config.load import ConfigError, load_config, parse_config
from agent.config.model import AT_START, AgentConfig
from agent.config.show import effective_lines

_register_all()
runner = CliRunner()

GOOD = """\
mode: auto
job: testbed
gate:
  cooldown_s: 30
  consensus: 2
primitives:
  block.read_ahead_kb:
    bounds: [128, 4096]
  vm.swappiness:
    enabled: false
  vm.dirty_ratio:
    tier: 2
    cooldown_s: 300
effect:
  window_s: 20
priorities:
  bert: 5
"""

# (file text, the line the error must name, words the message must carry)
MALFORMED: list[tuple[str, int, str]] = [
    ("mode: sometimes\n", 1, "mode"),
    ("job: x\ngate:\n  cooldown: 5\n", 3, "unknown field 'cooldown'"),
    ("gate:\n  cooldown_s: [1\n", 3, "YAML syntax"),
    ("primitives:\n  vm.nonsense: {enabled: false}\n", 2, "not in the catalogue"),
    ("primitives:\n  block.read_ahead_kb:\n    bounds: [1, 99999999]\n", 2, "only narrow"),
    ("primitives:\n  block.read_ahead_kb:\n    tier: 0\n", 2, "looser"),
    ("mode: auto\nmode: observe\n", 2, "set twice"),
    ("- a\n- b\n", 1, "mapping"),
    ("effect:\n  window_s: -3\n", 2, "effect.window_s"),
    (
        "pid:\n  - primitive: loader.workers\n    metric: trainer.x.data_wait_frac\n"
        "    pid: {lo: 0, hi: 999}\n",
        2,
        "outside its bounds",
    ),
    (
        "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
        "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
        "e: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n",
        5,
        "e expands past",
    ),
    ("primitives:\n  vm.swappiness:\n    bounds: [40, 10]\n", 2, "above high"),
    ("jobs:\n  bert: -4\n", 2, "jobs.bert"),
]


def test_an_empty_or_absent_file_is_the_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("IDLETUNE_CONFIG", raising=False)
    empty = tmp_path / "c.yaml"
    empty.write_text("")
    assert load_config(empty).config == AgentConfig()
    assert AgentConfig().mode == "observe"  # a daemon changes nothing until told to


def test_a_good_file_becomes_the_gate_and_loop_settings(tmp_path: Path) -> None:
    loaded = parse_config(GOOD, tmp_path / "c.yaml")
    cfg = loaded.config
    gate = cfg.gate_config()
    assert gate.mode == "auto" and gate.cooldown_s == 30 and gate.consensus == 2
    assert gate.bounds == {"block.read_ahead_kb": (128, 4096)}
    assert gate.disabled == frozenset({"vm.swappiness"}) and gate.tiers == {"vm.dirty_ratio": 2}
    assert gate.priorities == {"bert": 5} and gate.cooldowns == {"vm.dirty_ratio": 300}
    lc = cfg.loop_config()
    assert lc.job == "testbed" and lc.effect.window_s == 20 and not lc.keep_on_exit


@pytest.mark.parametrize(("text", "line", "words"), MALFORMED)
def test_each_malformed_file_is_one_line_with_its_line(
    tmp_path: Path, text: str, line: int, words: str
) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text(text)
    with pytest.raises(ConfigError) as e:
        load_config(f)
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith(f"{f}:{line}: "), msg
    assert words in msg, msg


def test_config_check_on_many_bad_files_gives_one_line_each_and_exit_2(tmp_path: Path) -> None:
    files = []
    for i, (text, _, _) in enumerate(MALFORMED):
        f = tmp_path / f"bad{i}.yaml"
        f.write_text(text)
        files.append(str(f))
    res = runner.invoke(app, ["config", "check", *files])
    assert res.exit_code == 2, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)
    lines = [ln for ln in res.output.splitlines() if ln]
    assert len(lines) == len(MALFORMED) >= 10
    for f, ln, (_, line, _) in zip(files, lines, MALFORMED, strict=True):
        assert ln.startswith(f"idletune: {f}:{line}: "), ln
        assert "Traceback" not in ln


def test_a_fifo_a_missing_file_and_binary_are_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"mode: auto\n\xff\xfe\n")
    res = runner.invoke(app, ["config", "check", str(fifo), str(tmp_path / "none.yaml"), str(binary)])
    assert res.exit_code == 2
    assert "not a regular file" in res.output and "no such config file" in res.output
    assert f"{binary}:2: not UTF-8" in res.output


def test_config_check_says_ok_for_a_good_file(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(GOOD)
    res = runner.invoke(app, ["config", "check", str(f)])
    assert res.exit_code == 0 and res.output.strip() == f"{f}: ok"


def test_the_shipped_example_is_valid() -> None:
    example = Path(__file__).parent.parent / "deploy" / "config.yaml"
    cfg = load_config(example).config
    assert cfg.mode == "observe"


def test_schema_is_the_models(tmp_path: Path) -> None:
    res = runner.invoke(app, ["config", "schema"])
    assert res.exit_code == 0
    schema = json.loads(res.output)
    assert schema["additionalProperties"] is False
    assert {"mode", "gate", "effect", "primitives", "pid", "safe_mode"} <= set(schema["properties"])


def test_show_names_where_each_value_came_from(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(GOOD)
    lines = effective_lines(load_config(f))
    by_name = {ln.split(" = ")[0]: ln for ln in lines}
    assert by_name["mode"].endswith(f"# {f}:1")
    assert by_name["gate.cooldown_s"].endswith(f"# {f}:4")
    assert by_name["gate.rate_limit"].endswith("# default")
    assert by_name["primitives.block.read_ahead_kb.bounds"].endswith(f"# {f}:8")
    res = runner.invoke(app, ["config", "show", "--config", str(f)])
    assert res.exit_code == 0 and "effect.window_s = 20.0" in res.output


def test_show_marks_the_settings_a_reload_does_not_apply(tmp_path: Path) -> None:
    f = tmp_path / "c.yaml"
    f.write_text(GOOD)
    by_name = {ln.split(" = ")[0]: ln for ln in effective_lines(load_config(f))}
    assert by_name["loop.interval_s"].endswith("# default; at start only")
    assert by_name["server.port"].endswith("; at start only")
    assert by_name["cost.budget_cores"].endswith("; at start only")
    assert by_name["gate.cooldown_s"].endswith(f"# {f}:4")  # a reload applies it
    assert not any(by_name[n].endswith("at start only") for n in by_name if n.startswith("collection."))
    # Each setting marked belongs to one the daemon's reload names as not applied, and each of those
    # has a setting marked.
    marked = [n for n, ln in by_name.items() if ln.endswith("; at start only")]
    assert {next(k for k in AT_START if n == k or n.startswith(f"{k}.")) for n in marked} == set(AT_START)
