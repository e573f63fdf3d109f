"""evals.caps: which rate a device cap holds flat, measured on capped readers of the matrix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agent.diagnosis.rules_io import ON_REQUESTS
from evals.caps import class_of, main, readings, table

SUITE = Path(__file__).resolve().parents[1] / "evals" / "incidents"
BYTE_CAP = "real-ra112-bps39-raw-w3-rootwrites-i2-1"  # 112 kB window, 39 MiB/s
REQUEST_CAP = "real-ra136-iops60-raw-rootwrites-mid-1"  # 136 kB window, 60 IOPS, from mid-window


def _with_series(tmp: Path, name: str, rows: list[tuple[float, float, float]]) -> None:
    """A copy of a bundled recording whose data device reads (t, requests/s, kB/s) as given."""
    folder = tmp / name
    shutil.copytree(SUITE / name, folder)
    lines = [
        json.dumps(
            {"t": t, "m": {"io.loop0.read_iops": iops, "io.loop0.read_kbps": kbps, "io.vda.read_kbps": 1.0}}
        )
        for t, iops, kbps in rows
    ]
    (folder / "series.jsonl").write_text("\n".join(lines) + "\n")


def _jitter(i: int) -> float:
    return (0.9, 1.1, 0.95, 1.05)[i % 4]


def test_the_flatter_rate_decides_and_the_window_class_groups(tmp_path: Path) -> None:
    # Bytes flat, requests moving (merges): no cap on requests is read there.
    _with_series(tmp_path, BYTE_CAP, [(2.0 * i, 340.0 * _jitter(i), 39000.0) for i in range(12)])
    # Requests flat, bytes moving: a cap that may be on requests. Before the onset (t = 19) the
    # device read freely and unevenly; those samples are not the cap's.
    free = [(float(t), 900.0 * _jitter(t), 120000.0 * _jitter(t + 1)) for t in range(19)]
    capped = [(19.0 + t, 60.0, 8100.0 * _jitter(t)) for t in range(12)]
    _with_series(tmp_path, REQUEST_CAP, free + capped)

    got = {r.id: r for r in readings(tmp_path)}
    assert set(got) == {BYTE_CAP, REQUEST_CAP}
    byte, req = got[BYTE_CAP], got[REQUEST_CAP]
    assert (byte.cap, byte.window_kb, byte.bytes_cv) == ("bytes", 112.0, 0.0)
    assert not byte.on_requests
    assert (req.cap, req.window_kb, req.requests_cv) == ("requests", 136.0, 0.0)
    assert req.on_requests and req.bytes_cv > 0.05

    text = table(got.values())
    assert f"ratio <= {ON_REQUESTS:g}" in text
    assert "| up to 128 kB | bytes | 1 | 0.00 (0) | 0.00 (0) | inf |" in text
    assert "| 129-256 kB | requests | 1 | 1.00 (1) | 1.00 (1) | 0.00 |" in text


def test_recordings_outside_the_capped_readers_are_left_out(tmp_path: Path) -> None:
    shutil.copytree(SUITE / "real-recl-240-rootwrites-i2-1", tmp_path / "real-recl-240-rootwrites-i2-1")
    shutil.copytree(SUITE / "healthy-host", tmp_path / "healthy-host")
    assert readings(tmp_path) == []


@pytest.mark.parametrize(
    ("kb", "name"),
    [
        (32, "up to 128 kB"),
        (129, "129-256 kB"),
        (512, "257-512 kB"),
        (1023, "513-1023 kB"),
        (4096, "1 MiB and up"),
    ],
)
def test_window_classes(kb: float, name: str) -> None:
    assert class_of(kb) == name


def test_not_a_folder_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a folder" in err


def test_the_readme_section_is_marked_and_counts_the_recordings() -> None:
    from bench.readme_results import CAPS_MARKS, caps_section
    from evals.caps import Reading

    rows = [Reading("a", 64.0, "bytes", 0.02, 0.01), Reading("b", 600.0, "requests", 0.01, 0.02)]
    text = caps_section(rows)
    assert text.startswith(CAPS_MARKS[0]) and text.endswith(CAPS_MARKS[1])
    assert "(2 recordings," in text
    assert "| up to 128 kB | bytes | 1 | 1.00 (1) | 0.00 (0) | 2.00 |" in text
    assert "| 513-1023 kB | requests | 1 | 1.00 (1) | 1.00 (1) | 0.50 |" in text
