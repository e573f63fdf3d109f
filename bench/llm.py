"""The LLM proposer on a model: what its decisions are worth beside the rules', load time, RSS,
proposal latency and tokens per second.

    .venv/bin/python bench/llm.py [--model PATH | --endpoint URL] [--threads 2] [--passes 1] [DIR ...]

Replays the bundled incidents (or DIR...) through report, diagnosis and the LLM
proposer, one decision each, on the embedded model, a GGUF file (--model) or an
OpenAI-compatible server (--endpoint), and prints the figures: per split (fit, earlier
held-out rounds, the held-out round) the model's action match, restraint and forbidden
actions beside the rules' on the same diagnoses (worked examples never drawn from the
incident scored or its condition, as in `idletune eval --proposer llm`); model load,
resident memory, proposal latency p50/p95 (the proposer's own call: options, prompt,
scoring the ranked options or decoding, validation, and the rules when it falls back),
generation and prompt tokens per second, and how often the model's own proposal was
used. The host's load average is printed beside them: on a shared machine the figures
move with it. Never fails on the figures.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.diagnosis.engine import diagnose
from agent.llm.backend import Model
from agent.llm.loader import LLMSettings, open_model
from agent.proposers.llm import factory
from agent.proposers.rules import RuleProposer, load_policies
from bench.figures import write_figures
from core.diagnosis import Diagnosis
from core.incident import Incident
from core.proposal import Proposal
from evals.harness import excluded_for, load_all, schema_valid
from evals.scoring import IncidentScore, score_incident, summarise
from evals.split import split_of

BUNDLED = Path(__file__).resolve().parent.parent / "evals" / "incidents"


def rss_mb() -> float:
    """Resident memory now, from /proc (ru_maxrss would include the import-time peak too)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("dirs", nargs="*", type=Path, default=[BUNDLED])
    ap.add_argument("--threads", type=int, default=None, help="llama.cpp threads (default: every core)")
    ap.add_argument("--passes", type=int, default=1, help="times over the incidents")
    ap.add_argument("--json", type=Path, help="also write the figures to this file as JSON")
    ap.add_argument("--model", type=Path, default=None, help="a GGUF file instead of the embedded model")
    ap.add_argument("--endpoint", default=None, help="an OpenAI-compatible server URL (wins over --model)")
    ap.add_argument("--endpoint-model", default="default", help="the model name the server is asked for")
    args = ap.parse_args(argv)
    settings = LLMSettings(
        threads=args.threads, model=args.model, endpoint=args.endpoint, endpoint_model=args.endpoint_model
    )

    incidents, errors = load_all(args.dirs)
    cases = []
    for inc in incidents:
        window = inc.window()
        report = inc.report(window)
        cases.append((inc, report, diagnose(window, report, inc.question)))
    load_before = os.getloadavg()[0]
    rss0 = rss_mb()
    t0 = time.perf_counter()
    opened = open_model(settings)
    load_s = time.perf_counter() - t0
    if opened.model is None:
        print(f"no model: {opened.why_not}")
        return 1
    # As `idletune eval --proposer llm` makes them: one proposer per incident, one model, one tally.
    policies = load_policies([])
    make, stats, _ = factory(settings, policies)
    latencies: list[float] = []
    scored: dict[str, tuple[list[IncidentScore], list[IncidentScore]]] = {}
    for k in range(args.passes):
        for inc, report, diagnosis in cases:
            proposer = make()
            proposer.exclude_examples(excluded_for(inc.id))
            t = time.perf_counter()
            outcome = proposer.decide(report, diagnosis)
            if outcome.completion is not None:
                latencies.append(time.perf_counter() - t)
            if k == 0:
                rules = RuleProposer(policies).propose(report, diagnosis)
                pair = scored.setdefault(split_of(inc.id), ([], []))
                for out, proposal in zip(pair, (outcome.proposal, rules), strict=True):
                    out.append(_score(inc, diagnosis, proposal))
    rss1 = rss_mb()
    s = stats
    evaluated = s.prompt_tokens - s.cached_tokens
    print(
        f"model: {opened.model.name}, threads {args.threads or os.cpu_count()}, "
        f"load average {load_before:.2f}"
    )
    print(f"incidents: {len(cases)} ({len(errors)} unreadable), decisions: {s.decisions}")
    print_quality(scored)
    print(f"model load: {load_s:.2f} s")
    print(f"RSS: {rss0:.0f} MB before load, {rss1:.0f} MB after the decisions")
    if latencies:
        print(
            f"proposal latency over {len(latencies)} model calls: p50 {pct(latencies, 0.5):.2f} s, "
            f"p95 {pct(latencies, 0.95):.2f} s, max {max(latencies):.2f} s, "
            f"mean {statistics.fmean(latencies):.2f} s"
        )
    if s.model_seconds > 0:
        print(
            f"tokens: {s.prompt_tokens} prompt ({s.cached_tokens} from the kept prefix), "
            f"{s.completion_tokens} generated; {(s.completion_tokens + evaluated) / s.model_seconds:.0f} "
            f"tokens/s evaluated and generated together, "
            f"{s.completion_tokens / s.model_seconds:.1f} generated tokens per model second"
        )
    print(
        f"used: llm {s.llm_used}, margin too small {s.abstained}, recorded cases disagree {s.contested}, "
        f"fallback invalid {s.fallback_invalid}, "
        f"timeout {s.fallback_timeout}, error {s.fallback_error}; no option to choose {s.no_choice}"
    )
    prompt_tps, gen_tps = raw_speed(opened.model)
    print(f"raw speed: prompt {prompt_tps:.0f} tokens/s, generation {gen_tps:.1f} tokens/s")
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if latencies:
        write_figures(
            args.json,
            "llm",
            {
                "model": opened.model.name,
                "model_calls": len(latencies),
                "p50_s": round(pct(latencies, 0.5), 3),
                "p95_s": round(pct(latencies, 0.95), 3),
                "load_s": round(load_s, 3),
                "rss_mib": round(rss1, 1),
                "tokens_per_s": round(gen_tps, 1),
                "prompt_tokens_per_s": round(prompt_tps, 1),
            },
        )
    return 0


def _score(inc: Incident, diagnosis: Diagnosis, proposal: Proposal) -> IncidentScore:
    causes = [c.category.value for c in diagnosis.causes]
    return score_incident(
        inc.id, inc.truth, causes, proposal.actions, [], schema_valid=schema_valid(proposal), latency_ms=0.0
    )


SPLITS = ("fit", "seen", "held-out")


def print_quality(scored: dict[str, tuple[list[IncidentScore], list[IncidentScore]]]) -> None:
    """Per split, the model's decisions beside the rules' on the same diagnoses."""

    def fig(x: float | None) -> str:
        return "-" if x is None else f"{x:.2f}"

    print("| split | incidents | actions: llm / rules | restraint: llm / rules | forbidden: llm / rules |")
    print("|---|---:|---:|---:|---:|")
    for split in (*SPLITS, "all"):
        if split == "all":
            llm = [s for a, _ in scored.values() for s in a]
            rules = [s for _, b in scored.values() for s in b]
        elif split in scored:
            llm, rules = scored[split]
        else:
            continue
        a, b = summarise(llm), summarise(rules)
        print(
            f"| {split} | {a.incidents} | {fig(a.action_match_rate)} / {fig(b.action_match_rate)} "
            f"| {fig(a.restraint)} / {fig(b.restraint)} | {a.forbidden_actions} / {b.forbidden_actions} |"
        )


def raw_speed(model: Model) -> tuple[float, float]:
    """Prompt evaluation (a fresh ~500-token prompt, one token out) and generation (64 tokens
    after a prompt already in the cache), each without a grammar."""
    filler = " ".join(f"line {i}: the loader waits for the disk." for i in range(50))
    first = model.complete(filler, max_tokens=1, timeout_s=120)
    prompt_tps = first.prompt_tokens / first.seconds if first.seconds else float("nan")
    model.complete("Count slowly: one, two, three,", max_tokens=1, timeout_s=120)
    gen = model.complete("Count slowly: one, two, three,", max_tokens=64, timeout_s=120)
    return prompt_tps, gen.completion_tokens / gen.seconds if gen.seconds else float("nan")


if __name__ == "__main__":
    raise SystemExit(main())
