"""bench/llm.py on any model: a missing GGUF is one line, an OpenAI-compatible server gets the table."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import llm as bench_llm
from tests.llm_helpers import FakeServer

SUITE = Path(__file__).resolve().parent.parent / "evals" / "incidents"


def test_a_missing_model_file_is_one_line_and_a_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope.gguf"
    assert bench_llm.main(["--model", str(missing), str(SUITE / "healthy-host")]) == 1
    out = capsys.readouterr().out.strip()
    assert out == f"no model: model file {missing} not found"


def test_an_endpoint_model_gets_its_decisions_scored_beside_the_rules(
    capsys: pytest.CaptureFixture[str],
) -> None:
    server = FakeServer()
    try:
        dirs = [str(SUITE / "healthy-host"), str(SUITE / "checkpoint-writeback-burst")]
        assert bench_llm.main(["--endpoint", server.url, "--endpoint-model", "big", *dirs]) == 0
    finally:
        server.httpd.shutdown()
    out = capsys.readouterr().out
    assert "| split | incidents | actions: llm / rules |" in out
    # Both incidents are from the generator's suite (the fit split); the model never beats a rule
    # here, since every answer it gives is validated and the rules answer where it fails.
    assert "| fit | 2 |" in out and "| all | 2 |" in out
    assert "incidents: 2 (0 unreadable), decisions: 2" in out
    assert server.requests and all(body.get("model") == "big" for _, body in server.requests)
