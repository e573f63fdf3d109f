"""`idletune eval`: replay recorded incidents through the pipeline and score the answers."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from agent.cli.errors import fail
from agent.proposers.base import Proposer
from core.text import printable

if TYPE_CHECKING:
    from agent.proposers.llm import LLMStats
    from evals.harness import EvalRun


class ProposerKind(StrEnum):
    RULES = "rules"
    LLM = "llm"


class AnswererKind(StrEnum):
    TEMPLATE = "template"
    LLM = "llm"


class SourceView(StrEnum):
    """The views of evals.sources, spelt for the command line."""

    ALL = "all"
    NO_HOOK = "no-hook"
    NO_BPF = "no-bpf"
    NO_GPU = "no-gpu"
    SPEC_ONLY = "spec-only"


def proposer_factory(kind: ProposerKind) -> Callable[[], Proposer]:
    """A maker of fresh proposers of `kind`; a user error (exit 2) when it cannot be had."""
    if kind == ProposerKind.LLM:
        return llm_factory()[0]
    from agent.proposers.policy import PolicyError
    from agent.proposers.rules import RuleProposer, load_policies

    try:
        # Parsed once; each incident gets its own proposer so hysteresis never crosses incidents.
        policies = load_policies([], with_default=True)
    except PolicyError as e:
        fail(str(e))
    return lambda: RuleProposer(policies)


def llm_factory() -> tuple[Callable[[], Proposer], LLMStats]:
    """LLM proposers sharing one model and one tally; without a model, one line and the rules answer."""
    from agent.llm.loader import SettingsError, load_settings
    from agent.proposers.llm import factory
    from agent.proposers.policy import PolicyError

    try:
        make, stats, note = factory(load_settings())
    except (SettingsError, PolicyError) as e:
        fail(str(e))
    if note:
        print(f"idletune: {note}", file=sys.stderr)
    return make, stats


def render(run: EvalRun, console: Console) -> None:
    from evals.results_table import headers, rows

    def say(line: str) -> None:
        # Plain lines, not a table: ids and cause names stay whole on any terminal width. Ids and
        # causes come from incident folders: printable drops any escape sequence in them.
        console.print(printable(line), markup=False, highlight=False, soft_wrap=True)

    width = max((len(r.replay.id) for r in run.results), default=2)
    ranked = any(r.replay.answered_by not in ("", run.proposer) for r in run.results) or any(
        r.replay.margin is not None for r in run.results
    )
    tail = "  by     margin" if ranked else ""
    say(f"{'id':<{width}}  {'truth':<24} {'top cause':<24} AC@1  actions  forbidden  latency{tail}")
    for r in run.results:
        sc = r.score
        top = r.replay.causes[0] if r.replay.causes else "-"
        # Who answered each decision, and a ranking model's margin: the LLM may hand one to the rules.
        who = f"  {r.replay.answered_by:<6} {_margin(r.replay.margin):>6}" if ranked else ""
        say(
            f"{r.replay.id:<{width}}  {r.truth[0]:<24} {top:<24} {'yes' if sc.ac1 else 'NO':<5} "
            f"{'ok' if sc.action_ok else 'NO':<8} {sc.forbidden:<10} {sc.latency_ms:.1f} ms{who}"
        )
    # Named in the report itself, not only on stderr, so a saved report says what it left out.
    for line in run.errors:
        say(f"invalid, not scored: {line}")
    for line in run.failures:
        say(f"failed, scored as wrong: {line}")
    summary = Table(title="summary" if run.view == "all" else f"summary, seen without {run.view[3:]}")
    for col in headers(run):
        summary.add_column(col)
    for row in rows(run):
        summary.add_row(*(Text(printable(cell)) for cell in row))
    console.print(summary)
    splits = run.by_split()
    if "held-out" in splits:
        for name, s in splits.items():
            say(
                f"{name}: {s.incidents} incidents, AC@1 {s.ac1:.2f}, AC@3 {s.ac3:.2f}, "
                f"actions {s.action_match_rate:.2f}, restraint {_rate(s.restraint)}, "
                f"forbidden {s.forbidden_actions}, evidence recall {_rate(s.evidence_recall)}"
            )


def _margin(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def _rate(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f}"


def chat_eval(folder: Path, answerer: AnswererKind, as_json: bool) -> None:
    """`idletune eval --chat DIR`: the chat's answers to a question set, scored."""
    from agent.llm.loader import SettingsError, load_settings, open_model
    from evals.chat import evaluate_chat

    if not folder.is_dir():
        fail(f"no such folder: {folder} (give a folder of question files, such as evals/chat)")
    model, why_not, timeout = None, "template answers only", 10.0
    if answerer == AnswererKind.LLM:
        try:
            settings = load_settings()
        except SettingsError as e:
            fail(str(e))
        opened = open_model(settings)
        if opened.model is None:
            fail(f"LLM unavailable: {opened.why_not}")
        model, why_not, timeout = opened.model, "", settings.timeout_s
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    run = evaluate_chat(folder, model, answerer=answerer.value, timeout_s=timeout, unavailable=why_not)
    for line in run.errors:
        err.print(printable(f"invalid: {line}"), markup=False)
    if not run.answers:
        fail(f"no question could be asked ({len(run.errors)} invalid)")
    if as_json:
        typer.echo(run.model_dump_json())
        return
    from evals.chat_table import render_chat

    for line in render_chat(run):
        Console(soft_wrap=True).print(printable(line), markup=False, highlight=False)


def eval_command(
    dirs: Annotated[
        list[Path] | None,
        typer.Argument(help="incident folders, or folders of incident folders", show_default=False),
    ] = None,
    proposer: Annotated[
        ProposerKind, typer.Option("--proposer", help="who proposes the actions", case_sensitive=False)
    ] = ProposerKind.RULES,
    as_json: Annotated[bool, typer.Option("--json", help="one JSON object: summary and incidents")] = False,
    view: Annotated[
        SourceView,
        typer.Option(
            "--sources",
            help="score as a host without a source would see it: no-hook, no-bpf (procfs only), no-gpu; "
            "or as a recorder of the spec's names only: spec-only",
            case_sensitive=False,
        ),
    ] = SourceView.ALL,
    chat: Annotated[
        Path | None,
        typer.Option("--chat", help="score the chat on the question set in this folder (evals/chat)"),
    ] = None,
    answerer: Annotated[
        AnswererKind | None,
        typer.Option("--answerer", help="with --chat: who answers, template or llm", case_sensitive=False),
    ] = None,
) -> None:
    """Score the agent on recorded incidents (root cause, actions, restraint, evidence, latency),
    or with --chat its answers to questions (right cause, grounded figures, unsafe requests
    declined, injections ignored, latency)."""
    if chat is not None:
        if dirs:
            fail("give either incident folders or --chat DIR, not both")
        llm = answerer == AnswererKind.LLM or (answerer is None and proposer == ProposerKind.LLM)
        chat_eval(chat, AnswererKind.LLM if llm else AnswererKind.TEMPLATE, as_json)
        return
    if not dirs:
        fail("give incident folders to score (such as evals/incidents), or --chat DIR")
    missing = [str(d) for d in dirs if not d.is_dir()]
    if missing:
        fail(f"no such folder: {', '.join(missing)} (give incident folders or folders of them)")
    stats: LLMStats | None = None
    if proposer == ProposerKind.LLM:
        make, stats = llm_factory()
    else:
        make = proposer_factory(proposer)
    from evals.harness import evaluate

    err = Console(stderr=True, highlight=False, soft_wrap=True)

    def tell(line: str) -> None:
        err.print(printable(f"invalid: {line}"), markup=False)

    # Each bad incident is one line and the run goes on with the rest: on stderr beside the
    # JSON document (which lists them too); the text report lists them in its body.
    run = evaluate(dirs, make, on_error=tell if as_json else None, view=view.value)
    if not run.results:
        if not as_json:  # no report follows to list them: say them here
            for line in run.errors:
                tell(line)
        fail(f"no incident could be read ({len(run.errors)} invalid)")
    if as_json:
        doc = run.to_json()
        if stats is not None:
            doc["llm"] = stats.as_dict()
        typer.echo(json.dumps(doc))
        return
    render(run, Console(soft_wrap=True))
    if stats is not None:
        from agent.proposers.llm import tally

        print(tally(stats))


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
