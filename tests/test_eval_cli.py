"""`idletune eval`: the table, the --json shape, the unavailable LLM proposer, bad folders."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import typer
import yaml
from typer.testing import CliRunner

from agent.cli import eval as eval_cli
from agent.cli.main import COMMAND_MODULES

BUNDLED = Path(__file__).resolve().parent.parent / "evals" / "incidents"
WB = BUNDLED / "checkpoint-writeback-burst"
HEALTHY = BUNDLED / "healthy-host"


def _app() -> typer.Typer:
    app = typer.Typer()
    eval_cli.register(app)
    app.command("noop", hidden=True)(lambda: None)  # keeps `eval` a named subcommand
    return app


def test_registered_with_the_main_command() -> None:
    assert "agent.cli.eval" in COMMAND_MODULES


def test_json_shape() -> None:
    res = CliRunner().invoke(_app(), ["eval", str(WB), str(HEALTHY), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert {"summary", "incidents"} <= set(doc)
    s = doc["summary"]
    for key in ("ac1", "ac3", "action_match_rate", "forbidden_actions", "restraint", "schema_valid_rate"):
        assert key in s
    assert s["evidence_recall"] is not None and "latency_p95_ms" in s and "tokens" in s
    assert s["incidents"] == 2 and s["invalid"] == 0
    assert doc["baseline"]["cause"] in ("writeback_burst", "none")
    wb, healthy = doc["incidents"]
    assert {"id", "causes", "actions", "evidence", "answer", "latency_ms"} <= set(wb)
    assert wb["id"] == "checkpoint-writeback-burst" and wb["causes"][0] == "writeback_burst"
    assert all(set(a) == {"primitive", "target", "value"} for a in wb["actions"]) and wb["actions"]
    assert "mem.dirty_mib" in wb["evidence"] and wb["answer"].startswith("Q: ")
    assert isinstance(wb["latency_ms"], float)
    assert healthy["causes"][0] == "none" and healthy["actions"] == []


def test_table_by_default() -> None:
    res = CliRunner().invoke(_app(), ["eval", str(BUNDLED / "healthy-host")], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "healthy-host" in res.stdout
    assert "root cause AC@1" in res.stdout and "baseline: always none" in res.stdout
    assert "proposer: rules" in res.stdout


def test_llm_proposer_without_a_model_says_why_and_the_rules_answer(tmp_path: Path) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("llm:\n  model: /nonexistent/model.gguf\n")
    res = CliRunner().invoke(
        _app(), ["eval", str(WB), "--proposer", "llm", "--json"], env={"IDLETUNE_CONFIG": str(config)}
    )
    assert res.exit_code == 0, res.output
    assert "LLM unavailable, the rules answer" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    doc = json.loads(res.stdout)
    assert doc["proposer"] == "llm" and doc["summary"]["schema_valid_rate"] == 1.0
    assert doc["llm"]["fallback_unavailable"] == 1 and doc["llm"]["llm_used"] == 0
    assert doc["incidents"][0]["actions"]  # the rule proposer's answer


def test_missing_folder_is_one_line_exit_2(tmp_path: Path) -> None:
    res = CliRunner().invoke(_app(), ["eval", str(tmp_path / "nope")])
    assert res.exit_code == 2 and "no such folder" in res.stderr


def test_invalid_incident_is_named_and_the_run_goes_on(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(HEALTHY, suite / "healthy-host")
    bad = suite / "no-truth"
    shutil.copytree(HEALTHY, bad)
    data = yaml.safe_load((bad / "incident.yaml").read_text())
    data["id"] = "no-truth"
    del data["truth"]
    (bad / "incident.yaml").write_text(yaml.safe_dump(data))
    res = CliRunner().invoke(_app(), ["eval", str(suite), "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["summary"]["incidents"] == 1 and doc["summary"]["invalid"] == 1
    assert [i["id"] for i in doc["incidents"]] == ["healthy-host"]
    (line,) = res.stderr.strip().splitlines()
    assert str(bad / "incident.yaml") in line and "truth" in line


def test_nothing_readable_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    res = CliRunner().invoke(_app(), ["eval", str(tmp_path)])
    assert res.exit_code == 2 and "no incident could be read" in res.stderr
