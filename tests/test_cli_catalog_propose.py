"""`idletune catalog` and `idletune propose --incident`: output shapes, and one-line policy errors."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from agent.cli import catalog, propose
from primitives.catalog import all_primitives

BUNDLED = Path(__file__).resolve().parent.parent / "evals" / "incidents"


def _app() -> typer.Typer:
    app = typer.Typer()
    catalog.register(app)
    propose.register(app)
    return app


def test_catalog_json_is_one_object_with_primitives_and_schema() -> None:
    res = CliRunner().invoke(_app(), ["catalog", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert [p["id"] for p in doc["primitives"]] == [p.id for p in all_primitives()]
    Draft202012Validator.check_schema(doc["proposal_schema"])


def test_catalog_lists_every_primitive_readably(tmp_path: Path) -> None:
    res = CliRunner().invoke(_app(), ["catalog"], env={"IDLETUNE_ROOT": str(tmp_path)})
    assert res.exit_code == 0, res.output
    for p in all_primitives():
        assert p.id in res.stdout
    # An empty root has no cpufreq, no sysctls: they say so instead of being offered.
    assert "not offered here: no cpufreq" in res.stdout


def test_propose_for_an_incident_prints_a_schema_valid_proposal() -> None:
    inc = str(BUNDLED / "checkpoint-writeback-burst")
    res = CliRunner().invoke(_app(), ["propose", "--incident", inc, "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    schema = Draft202012Validator(
        json.loads(CliRunner().invoke(_app(), ["catalog", "--json"]).stdout)["proposal_schema"]
    )
    assert schema.is_valid(doc["proposal"])
    assert doc["proposal"]["actions"][0]["primitive"].startswith("vm.dirty_background")
    assert doc["trace"]

    text = CliRunner().invoke(_app(), ["propose", "--incident", inc]).stdout
    assert "would set vm.dirty_background" in text and "nothing was changed" in text


def test_propose_for_a_healthy_host_is_an_explicit_noop() -> None:
    res = CliRunner().invoke(_app(), ["propose", "--incident", str(BUNDLED / "healthy-host"), "--json"])
    doc = json.loads(res.stdout)
    assert doc["proposal"]["actions"] == [] and "healthy" in doc["proposal"]["noop_reason"]


def test_a_bad_policy_is_one_line_naming_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "ops.yaml"
    bad.write_text("version: 1\nrules:\n  - name: x\n    cause: writeback_burst\n    noop: [oops\n")
    res = CliRunner().invoke(
        _app(), ["propose", "--incident", str(BUNDLED / "healthy-host"), "--policy", str(bad)]
    )
    assert res.exit_code == 2
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"idletune: {bad}:6: not valid YAML"), res.stderr
    assert res.stdout == ""


def test_no_policy_at_all_is_refused() -> None:
    res = CliRunner().invoke(
        _app(), ["propose", "--incident", str(BUNDLED / "healthy-host"), "--no-default-policy"]
    )
    assert res.exit_code == 2 and "no policy" in res.stderr
