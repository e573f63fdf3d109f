"""The incident reader: spec examples load; every defect is one line naming file and field."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from core.incident import IncidentError, load_incident

BUNDLED = Path(__file__).resolve().parent.parent / "evals" / "incidents"


def _copy(tmp_path: Path, name: str = "healthy-host") -> Path:
    dst = tmp_path / name
    shutil.copytree(BUNDLED / "healthy-host", dst)
    if name != "healthy-host":
        _edit(dst, lambda d: d.update(id=name))
    return dst


def _edit(folder: Path, change: Callable[[dict[str, Any]], object]) -> None:
    data = yaml.safe_load((folder / "incident.yaml").read_text())
    change(data)
    (folder / "incident.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


def test_bundled_examples_load() -> None:
    inc = load_incident(BUNDLED / "checkpoint-writeback-burst")
    assert inc.id == "checkpoint-writeback-burst"
    assert inc.host.cpus == 64 and inc.jobs[0].loader_workers == 16
    assert inc.truth.root_causes[0].value == "writeback_burst"
    assert len(inc.samples) == 101 and inc.samples[0].m["gpu.0.util_pct"] == pytest.approx(95.186)
    assert len(inc.window()) == 101
    report = inc.report()
    assert report.knobs["block.read_ahead_kb@vdb"] == 4096
    assert report.sources["replay"].live


def test_wrong_type_names_file_and_field(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "x")
    _edit(folder, lambda d: d["truth"].update(noop_correct="maybe"))
    with pytest.raises(IncidentError) as e:
        load_incident(folder)
    msg = str(e.value)
    assert msg == f"{folder}/incident.yaml: truth.noop_correct: 'maybe' is not of type 'boolean'"
    assert "\n" not in msg


def test_missing_required_field(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "y")
    _edit(folder, lambda d: d.pop("interval_s"))
    with pytest.raises(
        IncidentError, match=r"incident.yaml: \(top level\): 'interval_s' is a required property"
    ):
        load_incident(folder)


def test_unknown_category_rejected(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "z")
    _edit(folder, lambda d: d["truth"].update(root_causes=["cosmic_rays"]))
    with pytest.raises(IncidentError, match=r"truth.root_causes.0"):
        load_incident(folder)


def test_id_must_equal_folder(tmp_path: Path) -> None:
    folder = tmp_path / "other-name"
    shutil.copytree(BUNDLED / "healthy-host", folder)
    with pytest.raises(IncidentError, match="differs from the folder name"):
        load_incident(folder)


def test_optional_additions_are_accepted(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "extra")
    _edit(folder, lambda d: (d.update(recorded_by="idletune 0.1"), d["host"].update(memory_gib=512)))
    inc = load_incident(folder)
    assert inc.model_extra == {"recorded_by": "idletune 0.1"}


def test_bad_series_line_names_line_and_metric(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "s")
    lines = (folder / "series.jsonl").read_text().splitlines()
    lines[3] = '{"t": 6, "m": {"gpu.0.util_pct": "high"}}'
    (folder / "series.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(
        IncidentError, match=r"series.jsonl:4: m.gpu.0.util_pct: 'high' is not a finite number"
    ):
        load_incident(folder)


def test_series_out_of_order(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "o")
    lines = (folder / "series.jsonl").read_text().splitlines()
    lines[1], lines[2] = lines[2], lines[1]
    (folder / "series.jsonl").write_text("\n".join(lines) + "\n")
    with pytest.raises(IncidentError, match=r"series.jsonl:3: t: .* earlier than the previous sample"):
        load_incident(folder)


def test_not_a_folder(tmp_path: Path) -> None:
    with pytest.raises(IncidentError, match="not a folder"):
        load_incident(tmp_path / "missing")


def test_unknown_metrics_are_ignored_by_the_report(tmp_path: Path) -> None:
    folder = _copy(tmp_path, "u")
    lines = (folder / "series.jsonl").read_text().splitlines()
    lines[0] = lines[0].replace('{"gpu.0.util_pct"', '{"vendor.fan_rpm": 3000, "gpu.0.util_pct"')
    (folder / "series.jsonl").write_text("\n".join(lines) + "\n")
    inc = load_incident(folder)
    assert "vendor.fan_rpm" in inc.samples[0].m
    assert "vendor.fan_rpm" not in inc.report().metrics
