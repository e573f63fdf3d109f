"""`idletune why --incident`: the answer, --json, and one-line errors with exit status 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import typer
from typer.testing import CliRunner

from agent.cli import why

BUNDLED = Path(__file__).resolve().parent.parent / "evals" / "incidents"


def _app() -> typer.Typer:
    app = typer.Typer()
    why.register(app)
    app.command("noop", hidden=True)(lambda: None)  # keeps `why` a named subcommand
    return app


def test_answer_for_an_incident() -> None:
    res = CliRunner().invoke(_app(), ["why", "--incident", str(BUNDLED / "checkpoint-writeback-burst")])
    assert res.exit_code == 0, res.output
    assert "Q: Why is GPU utilization low?" in res.output
    assert "1. writeback_burst" in res.output


def test_json_is_the_diagnosis_and_keeps_the_question() -> None:
    res = CliRunner().invoke(
        _app(),
        ["why", "--incident", str(BUNDLED / "healthy-host"), "--json", "--question", "why is training slow?"],
    )
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["causes"][0]["category"] == "none"
    assert data["question"] == "why is training slow?"


def test_missing_folder_is_one_line_exit_2(tmp_path: Path) -> None:
    res = CliRunner().invoke(_app(), ["why", "--incident", str(tmp_path / "nope")])
    assert res.exit_code == 2
    assert res.output.strip().count("\n") == 0 and "not a folder" in res.output


def test_invalid_incident_names_file_and_field(tmp_path: Path) -> None:
    folder = tmp_path / "healthy-host"
    shutil.copytree(BUNDLED / "healthy-host", folder)
    yaml_path = folder / "incident.yaml"
    yaml_path.write_text(yaml_path.read_text().replace("noop_correct: true", "noop_correct: maybe"))
    res = CliRunner().invoke(_app(), ["why", "--incident", str(folder)])
    assert res.exit_code == 2
    assert "incident.yaml: truth.noop_correct: 'maybe' is not of type 'boolean'" in res.output


def test_registered_in_the_main_cli() -> None:
    from agent.cli.main import COMMAND_MODULES

    assert "agent.cli.why" in COMMAND_MODULES
