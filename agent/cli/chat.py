"""`idletune ask` and `idletune chat`: questions answered from the report and diagnosis, phrased by the LLM.

Without a usable model (llama-cpp-python missing, no model file, an endpoint down) the
answers come from the diagnosis alone, after one line on stderr saying why. What is printed
(answers, host strings, the question, a backend's error) passes `core.text.printable` first.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TextIO

import typer

from agent.cli.errors import fail
from agent.llm.chat import Answer, Conversation
from agent.llm.loader import LLMSettings, SettingsError, load_settings, open_model
from core.text import printable

ModelOpt = Annotated[
    Path | None, typer.Option("--model", help="a GGUF model file instead of the embedded one")
]
EndpointOpt = Annotated[
    str | None, typer.Option("--endpoint", help="an OpenAI-compatible server URL (llama.cpp server, vLLM)")
]
ConfigOpt = Annotated[Path | None, typer.Option("--config", help="config file with an `llm:` section")]
TimeoutOpt = Annotated[float | None, typer.Option("--timeout", min=0.1, help="seconds a model call may take")]
IncidentOpt = Annotated[
    Path | None, typer.Option("--incident", help="answer about a recorded incident folder")
]
DurationOpt = Annotated[float, typer.Option("--duration", min=1.0, help="seconds to watch the live host")]
IntervalOpt = Annotated[float, typer.Option("--interval", min=0.05, help="seconds between samples")]
NoBpfOpt = Annotated[bool, typer.Option("--no-bpf", help="do not load the eBPF collectors")]
JobOpt = Annotated[list[str] | None, typer.Option("--job", help="a training job to watch, NAME=PID")]

HELP = "/report shows the report, /why the full diagnosis, /quit ends; anything else is a question."


def settings_from(
    config: Path | None, model: Path | None, endpoint: str | None, timeout: float | None
) -> LLMSettings:
    try:
        s = load_settings(config)
    except SettingsError as e:
        fail(str(e))
    changes: dict[str, object] = {}
    if model is not None:
        changes |= {"model": model, "endpoint": None}
    if endpoint is not None:
        changes["endpoint"] = endpoint
    if timeout is not None:
        changes["timeout_s"] = timeout
    return s.model_copy(update=changes)


def conversation(
    settings: LLMSettings,
    incident: Path | None,
    duration: float,
    interval: float,
    no_bpf: bool,
    job: list[str] | None,
    quiet: bool = False,
) -> Conversation:
    from agent.cli.common import load_recorded, observe_live
    from agent.diagnosis.engine import diagnose

    if incident is not None:
        window, report, asked = load_recorded(incident)
    else:
        window, report = observe_live(duration, interval, no_bpf=no_bpf, jobs=job, quiet=quiet)
        asked = ""
    diagnosis = diagnose(window, report, asked or None)
    opened = open_model(settings)
    if opened.model is None:
        print(
            printable(f"idletune: LLM unavailable, answering from the diagnosis alone: {opened.why_not}"),
            file=sys.stderr,
        )
    return Conversation(opened.model, report, diagnosis, settings.timeout_s, opened.why_not)


def _say(answer: Answer, out: TextIO) -> None:
    print(printable(answer.text), file=out)
    if answer.note:
        print(printable(f"({answer.note})"), file=out)


def repl(conv: Conversation, read: Callable[[str], str], out: TextIO) -> None:
    """The terminal conversation; `read` is `input` in use and a scripted reader in tests."""
    from agent.answer import answer_text, catalogue_remedies
    from agent.llm.render import render_report

    print(HELP, file=out)
    while True:
        try:
            line = read("you> ").strip()
        except (EOFError, KeyboardInterrupt):
            print(file=out)
            return
        if not line:
            continue
        if line in ("/quit", "/exit", "/q"):
            return
        if line == "/report":
            print(printable(render_report(conv.report)), file=out)
        elif line == "/why":
            print(answer_text(conv.report, conv.diagnosis, catalogue_remedies), file=out)
        elif line.startswith("/"):
            print(printable(f"unknown command {line.split()[0]}. {HELP}"), file=out)
        else:
            _say(conv.ask(line), out)


def ask_command(
    question: Annotated[str, typer.Argument(help="the question, in any words", show_default=False)],
    incident: IncidentOpt = None,
    duration: DurationOpt = 30.0,
    interval: IntervalOpt = 1.0,
    no_bpf: NoBpfOpt = False,
    job: JobOpt = None,
    model: ModelOpt = None,
    endpoint: EndpointOpt = None,
    config: ConfigOpt = None,
    timeout: TimeoutOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object: answer, source, note")] = False,
) -> None:
    """Answer one question about the host from its report and diagnosis."""
    settings = settings_from(config, model, endpoint, timeout)
    conv = conversation(settings, incident, duration, interval, no_bpf, job, quiet=as_json)
    answer = conv.ask(question)
    if as_json:
        done = answer.completion
        tokens = {"prompt": done.prompt_tokens, "completion": done.completion_tokens} if done else None
        doc = {"answer": answer.text, "source": answer.source, "note": answer.note, "tokens": tokens}
        typer.echo(json.dumps(doc))
        return
    _say(answer, sys.stdout)


def chat_command(
    incident: IncidentOpt = None,
    duration: DurationOpt = 30.0,
    interval: IntervalOpt = 1.0,
    no_bpf: NoBpfOpt = False,
    job: JobOpt = None,
    model: ModelOpt = None,
    endpoint: EndpointOpt = None,
    config: ConfigOpt = None,
    timeout: TimeoutOpt = None,
) -> None:
    """A conversation about the host in the terminal (/report, /why, /quit)."""
    settings = settings_from(config, model, endpoint, timeout)
    conv = conversation(settings, incident, duration, interval, no_bpf, job)
    repl(conv, input, sys.stdout)


def register(app: typer.Typer) -> None:
    app.command("ask")(ask_command)
    app.command("chat")(chat_command)
