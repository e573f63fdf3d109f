"""Regenerate the README's results tables from the eval harness and the recorded bench figures.

    .venv/bin/python bench/readme_results.py        (or: make results)

Scores the bundled suite with the rule proposer beside the constant baseline (and the LLM
proposer, when its figures are recorded), and renders the figures each benchmark wrote to
bench/results/ (`make bench` runs them all). Writes between the markers of the README and of
evals/ROUNDS.md (each held-out round's own row, and the regression guard's figures at each
scoring); everything else in them is left as it is.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent.proposers.rules import RuleProposer, load_policies
from bench.figures import RESULTS, read_all
from evals.caps import Reading, readings, table
from evals.harness import EvalRun, evaluate
from evals.misses import Decision, count, on_byte_cap, spans
from evals.results_table import ROWS, Row, markdown
from evals.scoring import IncidentScore, Summary, summarise
from evals.sources import VIEWS, View
from evals.split import ROUNDS, condition_of, round_of, split_of

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
SUITE = ROOT / "evals" / "incidents"
RESULTS_MARKS = ("<!-- results:start -->", "<!-- results:end -->")
BENCH_MARKS = ("<!-- bench:start -->", "<!-- bench:end -->")
LLM_MARKS = ("<!-- llm:start -->", "<!-- llm:end -->")
HELDOUT_MARKS = ("<!-- heldout:start -->", "<!-- heldout:end -->")
ROUNDS_MARKS = ("<!-- rounds:start -->", "<!-- rounds:end -->")
ROUNDS_DOC = ROOT / "evals" / "ROUNDS.md"
GUARD_MARKS = ("<!-- guard:start -->", "<!-- guard:end -->")
MISSES_MARKS = ("<!-- misses:start -->", "<!-- misses:end -->")
CAPS_MARKS = ("<!-- caps:start -->", "<!-- caps:end -->")
# tests/test_eval_suite.py guards what the engine has been tuned on (fit and seen, the held-out round
# left out) since round 22 (52c53c9); from round 14 to 21 its floors held the whole suite.
GUARD_SINCE = 22
# Earlier held-out rounds, each scored once, blind, before it was used for tuning (evals/split.py):
# round number -> the commit it was scored at; that `idletune eval evals/incidents --json` is kept
# as bench/results/eval-heldout-roundN.json (`blind_result`).
BLIND_ROUNDS: dict[int, str] = {
    1: "25d79c6",
    2: "11d3b38",
    3: "cda9249",
    4: "10e1a18",
    5: "c1aab5a",
    6: "16e332e",
    7: "97bc741",
    8: "a1ad958",
    9: "e22cfe7",
    10: "12dc629",
    11: "da78683",
    12: "e945369",
    13: "53d7a25",
    14: "a7f8cb0",
    15: "9790f22",
    16: "fe1dbee",
    17: "01242b7",
    18: "decfb95",
    19: "ec42ee6",
    20: "d547241",
    21: "d4cfb15",
    22: "ab5f88a",
    23: "22a58f2",
    24: "df443dc",
    25: "fdcc846",
    26: "eeb9b5d",
    27: "5ee34bd",
    28: "873b25a",
    29: "8d5c632",
    30: "1f285e6",
    31: "2b7d62a",
    32: "6cecda2",
    33: "da5a3fa",
    34: "393a7f7",
    35: "3c5e5d9",
    36: "b6bf85e",
    37: "ee73c18",
    38: "35df56e",
    39: "a9e2a72",
    40: "9e94c1d",
    41: "c3db037",
    42: "b169d6f",
    43: "14e4c53",
    44: "9859982",
    45: "a59e79f",
    46: "5e93cba",
    47: "4ab8813",
    48: "39bc6b3",
    49: "08b6245",
    50: "a50ba15",
    51: "1209a61",
    52: "d170cbe",
    53: "31eed56",
    54: "3249f06",
    55: "562e671",
    56: "2df1079",
    57: "f7dde3c",
    58: "50877b4",
    59: "bae5596",
    60: "bae5596",
    61: "3196064",
    62: "ef29dae",
    63: "e280841",
    64: "21f8b55",
    65: "b566b4d",
    66: "8ad5f95",
    67: "35b593b",
    68: "6072de0",
    69: "f90b2c8",
    70: "686b8ae",
    71: "41a4651",
    72: "7170cf3",
    73: "308fb13",
    74: "6b4a4a5",
    75: "0944a19",
    76: "c19cf47",
    77: "89abbc5",
    78: "71c09d7",
    79: "554fbfb",
    80: "a584f8a",
    81: "9bdaca7",
    82: "3a00d8b",
    83: "afaf40a",
    84: "fb4c8d7",
    85: "53d2b0a",
    86: "67aa9ad",
    87: "373ad5b",
    88: "3fdc6f4",
    89: "cddd3b5",
    90: "4f2917c",
    91: "854425c",
    92: "00f46da",
    93: "a5c32ae",
    94: "0b1c50d",
    95: "6706fcb",
    96: "30516ef",
    97: "7774c47",
    98: "d154436",
    99: "d3b9571",
    100: "a557d30",
    101: "731f724",
    102: "7ffea0c",
    103: "aec6c48",
    104: "74d9f6b",
    105: "cb06749",
    106: "67e7721",
    107: "e9ff26c",
    108: "fbe20ba",
    109: "522f27b",
    110: "48bb6a6",
    111: "4e1ab45",
    112: "60684bc",
    113: "c0ebb31",
    114: "cbd5f04",
    115: "68c9d7f",
    116: "009970c",
    117: "621891a",
    118: "2f4e0b7",
    119: "4568cc9",
    120: "0ab8986",
    121: "238164a",
    122: "1e94ada",
    123: "806c9a3",
    124: "51428a0",
    125: "8c7da33",
    126: "6e5a31a",
    127: "7462203",
    128: "874a164",
    129: "f29e969",
    130: "efb39c7",
}
# Stretches of rounds (first, last), each round scored blind with no change to the engine between
# them (evals/split.py): pooled, they are the fairest figure for hosts the engine has not met. A
# stretch may end at the held-out round, whose scores are then the current run's. Rounds 15-18 ran
# on one engine; 9f23446 changed it after round 18 was scored, and rounds 19-20 ran on that one;
# b4d53c5 changed its procfs-only reading after round 20, 1cfcffd its policy after round 21,
# 446576c and bf893d4 its cap test and starvation's explaining away after round 22, and 84861ec
# and 66eb29d the cap's evidence and the policy after round 23; rounds 24-25 ran on that one;
# 39069c4 changed how a window below 1 MiB shares a request cap after round 25; rounds 26-28
# ran on that one; e7cd0b4 changed the policy's try of a larger window at a cap after
# round 28, and 46cb6ab the window's claim on a request cap after round 29; af4f3e3 reverted that
# after round 30, and rounds 31-37 ran on the engine so restored. After round 37 a stand-in for
# writers' pauses (agent/proposers/policies/default.yaml) changed decisions through procfs alone
# (none in any other view), and rounds 38-56 ran on that one (d66187a, after round 41, changed
# only what an answer lists among its gaps). After round 56, 2d7bbe7 changed the starvation rule
# beside a little of others' work (five decisions of rounds 40, 53 and 56, to right); rounds 57-58
# ran on that one. After round 58, 41c4fd4 changed how reclaim in step with the reads is counted
# where refaults are not (four decisions of rounds 19, 44 and 56 through the spec's names alone, to
# right; none in any other view); rounds 59-102 ran on that one. After round 102, efa1f5d read a cap
# held on bytes under a window above 256 kB as the device's, fitted on rounds 1-102 (CAP_TEST_KB);
# rounds 103-113 ran on that one (cbe3926, after round 103, changed only where such a window ranks,
# no decision). After round 113, 4d5ddfd judged a lone reader's window by its device's busy share,
# fitted on rounds 1-113 (serial_reader); rounds 114-130 ran on that one. After round 130, a16b643
# counted others' runnable tasks as contention from 0.5 per core, fully at 0.9 (FOREIGN_SHARE),
# fitted on rounds 1-130; every round from 131 on has run on that one.
UNTUNED_STRETCHES: tuple[tuple[int, int], ...] = (
    (15, 18),
    (19, 20),
    (24, 25),
    (26, 28),
    (31, 37),
    (38, 56),
    (57, 58),
    (59, 102),
    (103, 113),
    (114, 130),
    (131, 131),
)
# `idletune eval evals/incidents --proposer llm --json`, kept by `make bench`.
LLM_EVAL = "eval-llm.json"
CHAT_MARKS = ("<!-- chat:start -->", "<!-- chat:end -->")
# `idletune eval --chat evals/chat --json`, once per answerer, kept by `make bench`.
CHAT_EVALS = {"template": "eval-chat-template.json", "llm": "eval-chat-llm.json"}

# One row per benchmark: what it measures, the figure, the target, the command.
BenchRow = tuple[str, str, str, str]


_TRACER = {"runqlat": "bcc runqlat"}


def _overhead(f: dict[str, Any]) -> list[BenchRow]:
    rows: list[BenchRow] = []
    prog = f.get("program_ns_per_op", {})
    for w in f.get("workloads", []):
        figure = f"idletune {w['idletune_pct']:.1f}% · bcc runqlat {w['runqlat_pct']:.1f}%"
        if "floor_pct" in w:
            figure += f" · empty programs {w['floor_pct']:.1f}%"
        if "floor_raw_pct" in w:
            figure += f" (on raw tracepoints {w['floor_raw_pct']:.1f}%)"
        if "bare_spread_pct" in w:
            figure += f"; bare runs spread {w['bare_spread_pct']:.0f}%"
        rows.append(
            (
                f"collector slowdown, {w['name']}, always on (median of {f['rounds']} interleaved rounds)",
                figure,
                "≤ half of runqlat's",
                "bench/overhead.py",
            )
        )
        duty = w.get("idletune_duty_pct")
        if duty is not None and duty == duty:  # NaN: not measured in that run
            rows.append(
                (
                    f"`idletune serve` on its duty cycle (a healthy host), {w['name']}",
                    f"{duty:.1f}% slowdown"
                    + (f" (bare runs spread {w['bare_spread_pct']:.0f}%)" if "bare_spread_pct" in w else ""),
                    "≤ 2%",
                    "bench/overhead.py",
                )
            )
        if prog.get(w["name"]):
            per = prog[w["name"]]
            what = "round trip" if w["name"] == "pingpong" else "read"
            rows.append(
                (
                    f"BPF program time per {what}, {w['name']} (kernel.bpf_stats_enabled)",
                    " · ".join(f"{_TRACER.get(c, c)} {ns:,.0f} ns" for c, ns in per.items()),
                    "≤ runqlat",
                    "bench/overhead.py",
                )
            )
    if "rss_mib" in f:
        rows.append(("agent RSS while reporting", f"{f['rss_mib']:.0f} MiB", "≤ 150 MB", "bench/overhead.py"))
    return rows


def _overhead_trainer(f: dict[str, Any]) -> list[BenchRow]:
    rows: list[BenchRow] = []
    for cond, label, target in (
        ("agent-duty", "on its duty cycle (a healthy host)", "≤ 1%, within the pairs' spread"),
        ("agent-full", "hot path always on (a trigger open)", "as small as the duty cycle's"),
    ):
        c = f.get(cond)
        if c is None:
            continue
        rows.append(
            (
                f"testbed PyTorch trainer, samples/s with `idletune serve` {label} "
                f"(median of {f['rounds']} interleaved rounds)",
                f"{c['slowdown_pct']:.1f}% slowdown (bare runs spread {f['bare_spread_pct']:.1f}%); "
                f"agent {c['agent_cpu_pct']:.2f}% of a core, {c['agent_rss_mib']} MiB",
                target,
                "bench/overhead.py --trainer",
            )
        )
    return rows


def _duty_split(f: dict[str, Any]) -> list[BenchRow]:
    return [
        (
            "`idletune serve` on its duty cycle, ping-pong split inside each run: hot path attached "
            f"{f['hot_share_pct']:.1f}% of the time × {f['attached_slowdown_pct']:.1f}% slower while "
            f"attached (median of {f['repeats']} runs of {f['seconds']:g} s)",
            f"{f['hot_cost_pct']:.2f}% slowdown from the hot path (runs: "
            + ", ".join(f"{x:.2f}" for x in f["hot_cost_pct_runs"])
            + f"); the daemon's own CPU {f['daemon_core_pct']:.2f}% of a core",
            "≤ 2% (the two together)",
            "bench/duty_split.py",
        )
    ]


def _diagnose(f: dict[str, Any]) -> list[BenchRow]:
    return [
        (
            f"diagnosis, {f['samples']} samples × {f['metrics']} metrics (median of {f['runs']})",
            f"{f['diagnose_ms_wall']:.1f} ms wall, {f['diagnose_ms_cpu']:.1f} ms CPU",
            "< 20 ms",
            "bench/diagnose.py",
        )
    ]


def _eval(f: dict[str, Any]) -> list[BenchRow]:
    return [
        (
            f"eval replay, rules ({f['incidents']} incidents, median of {f['runs']})",
            f"{f['incidents_per_s']:.1f} incidents/s",
            "≥ 20/s",
            "bench/eval.py",
        )
    ]


def _hook(f: dict[str, Any]) -> list[BenchRow]:
    return [
        (
            f"trainer hook, {r['label']} ({f['step_ms']:.0f} ms step)",
            f"{r['hook_per_batch_us']:.2f} µs/batch ({r['hook_per_batch_pct_of_10ms']:.3f}% of step)",
            "< 1% of step",
            "bench/hook.py",
        )
        for r in f["results"]
    ]


def _api(f: dict[str, Any]) -> list[BenchRow]:
    return [
        (
            f"GET {f['path']}, {f['clients']} clients at {f['rate_per_client']:g} req/s each",
            f"p50 {f['p50_ms']:.1f} ms, p99 {f['p99_ms']:.1f} ms, {f['errors']} errors",
            "p99 < 50 ms, no errors",
            "bench/api.py",
        )
    ]


def _llm(f: dict[str, Any]) -> list[BenchRow]:
    return [
        (
            f"LLM proposal latency ({f['model_calls']} model calls, embedded model, 2 cores)",
            f"p50 {f['p50_s']:.2f} s, p95 {f['p95_s']:.2f} s; generation {f['tokens_per_s']:.0f} tokens/s",
            "p50 ≤ 1.5 s, p95 ≤ 3 s",
            "bench/llm.py",
        ),
        (
            "LLM model load, RSS",
            f"{f['load_s']:.2f} s, {f['rss_mib']:.0f} MiB",
            "≤ 2 s, ≤ 600 MB",
            "bench/llm.py",
        ),
    ]


def _testbed(f: dict[str, Any]) -> list[BenchRow]:
    return [
        (
            f"testbed {s['name']}: fault → fix, samples/s (median of {s['runs']} runs)",
            f"{s['fault_samples_per_s']:.0f} → {s['fix_samples_per_s']:.0f} "
            f"({s['moved_median_pct']:+.0f}%, lowest run {s['moved_min_pct']:+.0f}%)",
            "≥ +20%",
            "bench/testbed.py",
        )
        for s in f["scenarios"]
    ]


def _cost(f: dict[str, Any]) -> list[BenchRow]:
    rows: list[BenchRow] = [
        (
            f"`idletune serve`, observe mode, settled: process CPU (over {f['seconds']:g} s)",
            f"{f['cpu_share_pct']:.2f} % of one core",
            "< 1 % of one core",
            "bench/cost.py",
        ),
        (
            "`idletune serve`: RSS while serving and collecting",
            f"{f['rss_mib']:.0f} MiB (peak {f['peak_rss_mib']:.0f} MiB, at the compile)",
            "≤ 150 MB",
            "bench/cost.py",
        ),
    ]
    progs = f.get("programs") or {}
    if progs:
        name, top = next(iter(progs.items()))
        rows.append(
            (
                "its eBPF programs together, under the machine's load at the time",
                f"{f['bpf_share_pct']:.2f} % of one core; most: {name}, "
                f"{top['events_per_s']:,.0f} events/s × {top['ns_per_event']:.0f} ns",
                "with the process ≤ 1 % (cost.budget_cores)",
                "bench/cost.py",
            )
        )
    return rows


RENDER: dict[str, Callable[[dict[str, Any]], list[BenchRow]]] = {
    "overhead": _overhead,
    "overhead-trainer": _overhead_trainer,
    "duty-split": _duty_split,
    "cost": _cost,
    "diagnose": _diagnose,
    "eval": _eval,
    "hook": _hook,
    "api": _api,
    "llm": _llm,
    "testbed": _testbed,
}


def bench_section(docs: dict[str, dict[str, Any]]) -> str:
    lines = [
        BENCH_MARKS[0],
        "",
        "Recorded by `make bench` on this project's 2-core test machine (figures in `bench/results/`);",
        "regenerate the table with `make results`. The machine is shared, so the load average at the",
        "time of each run is given beside it.",
        "",
        "| measure | figure | target | command | when (load avg) |",
        "|---|---|---|---|---|",
    ]
    for name, render in RENDER.items():
        doc = docs.get(name)
        if doc is None:
            continue
        when = f"{doc['measured_at'][:10]} ({doc['load_avg_1m']:.1f})"
        for what, figure, target, command in render(doc["figures"]):
            lines.append(f"| {what} | {figure} | {target} | `{command}` | {when} |")
    lines += ["", BENCH_MARKS[1]]
    return "\n".join(lines)


def results_section(run: EvalRun) -> str:
    note = (
        f"`idletune eval evals/incidents --proposer rules` on the bundled suite "
        f"({run.summary.incidents} incidents, {run.summary.invalid} invalid). "
        "Regenerate with `make results`."
    )
    rows: list[Row] = []
    return "\n".join([RESULTS_MARKS[0], "", note, "", markdown(run, rows), "", RESULTS_MARKS[1]])


def _rate(x: float | None) -> str:
    """A score a run may not have (no incident it applies to): n/a then."""
    return "n/a" if x is None else f"{x:.2f}"


def _figures(s: Summary) -> str:
    return (
        f"{s.incidents} | {s.ac1:.2f} | {s.ac3:.2f} | {s.action_match_rate:.2f} | {s.forbidden_actions} | "
        f"{_rate(s.restraint)} | {_rate(s.evidence_recall)}"
    )


def longest_stretch(stretches: Sequence[tuple[int, int]]) -> tuple[int, int]:
    """The stretch (first, last) spanning the most rounds, the earliest of equals."""
    return max(stretches, key=lambda s: s[1] - s[0])


def _part(run: EvalRun, keep: Callable[[str, list[str]], bool]) -> Summary:
    return run.subset(lambda r: keep(r.replay.id, r.tags))


def _stretch_rows(
    run: EvalRun, untuned: dict[tuple[int, int], list[IncidentScore]]
) -> list[tuple[str, Summary]]:
    """One row per stretch of rounds scored with no tuning between them, pooled with the current
    run's held-out scores where a stretch ends at the held-out round. A stretch of one round so far is
    that round's own row, not repeated."""
    now = _held_scores(run)
    return [
        (
            f"real, held-out rounds {first}-{end} pooled, each scored blind, no tuning between",
            summarise([*scores, *(now if end == len(ROUNDS) else [])]),
        )
        for (first, end), scores in untuned.items()
        if first < end
    ]


def _real_in(split: str) -> Callable[[str, list[str]], bool]:
    """A recording of the matrix (tagged `real`) in `split`."""
    return lambda ident, tags: "real" in tags and split_of(ident) == split


def _held_scores(run: EvalRun) -> list[IncidentScore]:
    held = _real_in("held-out")
    return [r.score for r in run.results if held(r.replay.id, r.tags)]


def _table(rows: list[tuple[str, Summary]]) -> list[str]:
    return [
        "| incidents | n | AC@1 | AC@3 | actions | forbidden | restraint | evidence recall |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        *(f"| {name} | {_figures(s)} |" for name, s in rows),
    ]


def heldout_section(
    runs: dict[View, EvalRun],
    blind: dict[int, list[IncidentScore]],
    untuned: dict[tuple[int, int], list[IncidentScore]] | None = None,
) -> str:
    """The README's scores on conditions the engine was never tuned on, beside the ones it was, and
    per source set. `blind` holds each earlier round's per-incident scores as scored before it was
    tuned on (blind_scores), pooled here with the held-out round's; `untuned` the stretches of rounds
    scored with no tuning between them (untuned_scores), of which the README shows the longest and
    every later one. Each round's own row is in ROUNDS.md (rounds_section)."""
    run = runs["all"]
    fit = _part(run, _real_in("fit"))
    held = _part(run, _real_in("held-out"))
    last = len(ROUNDS)
    pooled = summarise([*(s for n in sorted(blind) for s in blind[n]), *_held_scores(run)])
    # The README shows the longest stretch and every one after it, the last running now (rounds 59-102,
    # the longest since round 78, ended with efa1f5d; rounds 38-56 were before it).
    stretched = untuned or {}
    spans = list(stretched)
    later = spans[spans.index(longest_stretch(spans)) :] if spans else []
    latest = {k: stretched[k] for k in later if k[0] < k[1]}
    stretches = _stretch_rows(run, latest)
    rows: list[tuple[str, Summary]] = [
        ("every bundled incident (generator and real)", run.summary),
        (
            "tuned on: the generator's suite and the fit conditions",
            _part(run, lambda i, t: split_of(i) == "fit"),
        ),
        ("real recordings, fit conditions", fit),
        (f"real, held-out rounds 1-{last - 1} now (tuned on since)", _part(run, _real_in("seen"))),
        (f"real, held-out round {last}, never tuned on", held),
        (f"real, held-out rounds 1-{last} pooled, each as first scored, blind", pooled),
        *stretches,
    ]
    gap = [
        f"round {last} minus fit: AC@1 {held.ac1 - fit.ac1:+.2f}, "
        f"actions {held.action_match_rate - fit.action_match_rate:+.2f}",
        f"rounds 1-{last} as first scored minus fit: AC@1 {pooled.ac1 - fit.ac1:+.2f}, "
        f"actions {pooled.action_match_rate - fit.action_match_rate:+.2f}",
    ]
    gap += [
        f"rounds {first}-{end} minus fit: "
        f"AC@1 {s.ac1 - fit.ac1:+.2f}, actions {s.action_match_rate - fit.action_match_rate:+.2f}"
        for (first, end), (_, s) in zip(latest, stretches, strict=True)
    ]
    lines = [
        HELDOUT_MARKS[0],
        "",
        "`idletune eval evals/incidents --json` (`by_split`), rule proposer; regenerate with `make results`.",
        "The real recordings come from `python -m evals.matrix record`: each testbed scenario under",
        "varied device limits, readahead, loader workers, preprocessing, data layout, onset, interval",
        "and background noise, each labelled by a measured counterfactual (`evals/matrix.py`: the",
        "scenario's fix lifts samples/s by 20 % or more: its cause; it does not, yet the job waits for",
        "data half the time on a capped device: `storage_latency`, saturated, nothing to do; else `none`).",
        "Splits are fixed in `evals/split.py`: the engine was tuned on the fit conditions; each of the",
        f"{last} held-out rounds ({sum(len(r) for r in ROUNDS)} conditions, each recorded twice) was "
        "written down before the tuning",
        f"that preceded its scoring and scored once, blind; rounds 1-{last - 1} were tuned on only after "
        "that,",
        f"round {last} never. Each round's own row, the stretches of rounds scored with no change to the",
        "engine between them, and what each round missed are in [evals/ROUNDS.md](evals/ROUNDS.md).",
        "",
        *_table(rows),
        "",
        "Gap on real recordings, " + "; ".join(gap) + ".",
        "",
        "Seen through fewer sources (`idletune eval evals/incidents --sources VIEW`): the same incidents as",
        "a host without the trainer hook, without eBPF (procfs only) or without GPUs would have recorded",
        "them, and (spec-only) as another recorder of the spec's names alone would have written them.",
        "AC@1 judged counts only the incidents whose true cause the view still holds figures for (or, for",
        "contention in a chronic window without a count of runnable tasks, can tell); the others are",
        "ranked, marked not judged, never guessed.",
        "",
        f"| sources | AC@1, all | AC@1 judged (n) | AC@1, round {last} | actions | restraint | forbidden |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for view in VIEWS:
        r = runs[view]
        judged = r.judged()
        held_v = _part(r, lambda i, t: split_of(i) == "held-out")
        s = r.summary
        lines.append(
            f"| {view} | {s.ac1:.2f} | {judged.ac1:.2f} ({judged.incidents}) | {held_v.ac1:.2f} | "
            f"{s.action_match_rate:.2f} | {_rate(s.restraint)} | {s.forbidden_actions} |"
        )
    lines += ["", HELDOUT_MARKS[1]]
    return "\n".join(lines)


def rounds_section(
    run: EvalRun,
    blind: dict[int, Summary],
    untuned: dict[tuple[int, int], list[IncidentScore]] | None = None,
) -> str:
    """ROUNDS.md's table: each earlier round's held-out figures as scored before it was tuned on
    (`blind`, from its file), the held-out round's now, and every stretch of rounds scored with no
    tuning between them, each beside the fit conditions."""
    fit = _part(run, _real_in("fit"))
    held = _part(run, _real_in("held-out"))
    last = len(ROUNDS)
    rows: list[tuple[str, Summary]] = [("real recordings, fit conditions", fit)]
    rows += [(f"round {n}, scored blind at {BLIND_ROUNDS[n]}", s) for n, s in blind.items()]
    rows += [(f"round {last}, the held-out round, never tuned on", held)]
    rows += _stretch_rows(run, untuned or {})
    gap = [
        f"{name} (blind) minus fit: AC@1 {s.ac1 - fit.ac1:+.2f}, "
        f"actions {s.action_match_rate - fit.action_match_rate:+.2f}"
        for name, s in [*((f"round {n}", s) for n, s in blind.items()), (f"round {last}", held)]
    ]
    lines = [
        ROUNDS_MARKS[0],
        "",
        "`idletune eval evals/incidents --json` (`by_split`), rule proposer, and each earlier round's",
        "figures as scored once, blind, before it was tuned on (`bench/results/eval-heldout-roundN.json`,",
        f"N from 1 to {last - 1}); regenerate with `make results`. Each condition is recorded twice.",
        "",
        *_table(rows),
        "",
        "Gap on real recordings, " + "; ".join(gap) + ".",
        "",
        ROUNDS_MARKS[1],
    ]
    return "\n".join(lines)


def blind_result(n: int) -> Path:
    """Where round n's eval as first scored, blind, is kept."""
    return ROOT / "bench" / "results" / f"eval-heldout-round{n}.json"


@lru_cache(maxsize=1)
def _blind_docs() -> tuple[tuple[int, dict[str, Any]], ...]:
    """Each earlier round's eval as first scored, blind: (number, document), each file read once
    however many tables draw on it."""
    return tuple(
        (n, json.loads(blind_result(n).read_text())) for n in BLIND_ROUNDS if blind_result(n).exists()
    )


def _round_file_entries(n: int, doc: dict[str, Any], own: bool) -> list[dict[str, Any]]:
    """The incidents in round n's file: its own recordings (`own`) or all the others."""
    return [i for i in doc.get("incidents", []) if (condition_of(i["id"]) in ROUNDS[n - 1]) == own]


def _round_file_scores(n: int, doc: dict[str, Any], own: bool) -> list[IncidentScore]:
    """The per-incident scores in round n's file: its own recordings' (`own`) or all the others'."""
    return [IncidentScore.model_validate(i["score"]) for i in _round_file_entries(n, doc, own)]


def blind_scores() -> dict[int, list[IncidentScore]]:
    """Each earlier round's per-incident scores as first scored, blind, read from its file."""
    return {n: _round_file_scores(n, doc, own=True) for n, doc in _blind_docs()}


def untuned_scores(
    blind: dict[int, list[IncidentScore]] | None = None,
) -> dict[tuple[int, int], list[IncidentScore]]:
    """Per stretch of UNTUNED_STRETCHES, the per-incident blind scores of its earlier rounds (the
    held-out round's are the current run's)."""
    scores = blind_scores() if blind is None else blind
    return {
        (first, end): [s for n in range(first, end + 1) for s in scores.get(n, [])]
        for first, end in UNTUNED_STRETCHES
    }


def tuned_at_scoring() -> dict[int, list[IncidentScore]]:
    """For each round scored since GUARD_SINCE, the per-incident scores of what the engine had been
    tuned on when it was scored: its file's incidents less the round's own recordings."""
    return {n: _round_file_scores(n, doc, own=False) for n, doc in _blind_docs() if n >= GUARD_SINCE}


def _guard_row(name: str, scores: list[IncidentScore]) -> str:
    named = sum(s.ac1 for s in scores)
    held = [s.restraint for s in scores if s.restraint is not None]
    return (
        f"| {name} | {len(scores)} | {named} | {named / len(scores):.4f} | "
        f"{len(held)} | {sum(held)} | {sum(held) / len(held):.4f} |"
    )


def guard_section(run: EvalRun, tuned: dict[int, list[IncidentScore]]) -> str:
    """ROUNDS.md's guard table: what the engine had been tuned on as each round's scoring found it
    (`tuned`, from the rounds' files) and as the current run scores it, the held-out round left out:
    the figures tests/test_eval_suite.py holds above its floors."""
    now = [r.score for r in run.results if split_of(r.replay.id) != "held-out"]
    lines = [
        GUARD_MARKS[0],
        "",
        "Fit and seen (the generator's suite, the fit conditions and every round scored before the",
        "held-out one) as each round's scoring found them: `bench/results/eval-heldout-roundN.json`",
        "less round N's own recordings, and the current run less the held-out round; regenerate with",
        "`make results`.",
        "",
        "| held out | tuned on | named first | AC@1 | restraint decisions | restrained | restraint |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *(_guard_row(f"round {n}, scored at {BLIND_ROUNDS[n]}", s) for n, s in tuned.items()),
        _guard_row(f"round {len(ROUNDS)}, the held-out round (this run)", now),
        "",
        GUARD_MARKS[1],
    ]
    return "\n".join(lines)


def stretch_decisions(run: EvalRun) -> dict[int, list[Decision]]:
    """The longest stretch of UNTUNED_STRETCHES (the most decisions scored blind on one engine), round
    by round: each earlier round's decisions as first scored, blind, read from its file, and the
    held-out round's from the current run where the stretch ends at it."""
    first, end = longest_stretch(UNTUNED_STRETCHES)
    out = {
        n: [Decision.from_entry(e) for e in _round_file_entries(n, doc, own=True)]
        for n, doc in _blind_docs()
        if first <= n <= end
    }
    if end == len(ROUNDS):
        held = _real_in("held-out")
        out[end] = [Decision.from_result(r) for r in run.results if held(r.replay.id, r.tags)]
    return out


def _share(k: int, n: int) -> str:
    return f"{k / n:.2f} ({k} of {n})" if n else "n/a"


def misses_section(by_round: Mapping[int, Sequence[Decision]]) -> str:
    """The README's table of what the longest stretch missed, by kind (evals.misses)."""
    kinds = count(by_round)
    total = sum(len(d) for d in by_round.values())
    first, end = min(by_round, default=0), max(by_round, default=0)
    rest = [d.score for ds in by_round.values() for d in ds if not on_byte_cap(d.id)]
    held = [s.restraint for s in rest if s.restraint is not None]
    lines = [
        MISSES_MARKS[0],
        "",
        f"What rounds {first} to {end} missed ({total} recordings, each decision as first scored, blind),",
        "by kind (`evals/misses.py`: a miss goes under the first kind whose test it meets); each round's",
        "own misses are in [evals/ROUNDS.md](evals/ROUNDS.md). Regenerate with `make results`.",
        "",
        "| kind | recordings missed | named wrong first | actions wrong | not restrained | rounds |",
        "|---|---:|---:|---:|---:|---|",
        *(
            f"| {k.kind.what} | {k.recordings} | {k.named_wrong} | {k.actions_wrong} | {k.unrestrained} | "
            f"{spans(k.rounds)} |"
            for k in kinds
        ),
        f"| every miss | {sum(k.recordings for k in kinds)} | {sum(k.named_wrong for k in kinds)} | "
        f"{sum(k.actions_wrong for k in kinds)} | {sum(k.unrestrained for k in kinds)} | |",
        "",
        f"Without the byte caps, rounds {first} to {end} read "
        f"AC@1 {_share(sum(s.ac1 for s in rest), len(rest))} and restraint {_share(sum(held), len(held))}.",
        "",
        MISSES_MARKS[1],
    ]
    return "\n".join(lines)


def caps_section(rows: Sequence[Reading]) -> str:
    """The README's table of which rate each capped reader's device held flat (evals.caps)."""
    lines = [
        CAPS_MARKS[0],
        "",
        f"Which rate a cap held flat, on every capped reader the suite holds ({len(rows)} recordings,",
        "`python -m evals.caps`): the ratio is the spread of requests/s over that of kB/s from the",
        "fault's onset on, the engine's own test of a cap that may be on requests.",
        "",
        table(rows),
        "",
        CAPS_MARKS[1],
    ]
    return "\n".join(lines)


def blind_rounds() -> dict[int, Summary]:
    """Each earlier round's held-out figures, by round number, as scored before it was tuned on."""
    out: dict[int, Summary] = {}
    for n, doc in _blind_docs():
        if "held-out" in doc.get("by_split", {}):
            out[n] = Summary.model_validate(doc["by_split"]["held-out"])
    return out


def llm_section(rules: EvalRun, doc: dict[str, Any] | None) -> str:
    """The LLM proposer beside the rules on the same suite, and who answered its decisions."""
    lines = [LLM_MARKS[0], ""]
    if doc is None:
        lines += ["No LLM run recorded yet: `make bench` records one.", "", LLM_MARKS[1]]
        return "\n".join(lines)
    llm = Summary.model_validate(doc["summary"])
    lines += [
        "`idletune eval evals/incidents --proposer llm --json` beside the rules, on the same suite",
        "and the same diagnoses. Every decoded proposal is validated again and invalid or late output",
        "is replaced by the rules' answer, so schema validity is 1.00 by construction, not by the model.",
        "",
        "| score | proposer: rules | proposer: llm |",
        "|---|---:|---:|",
    ]
    for label, show in ROWS:
        lines.append(f"| {label} | {show(rules.summary)} | {show(llm)} |")
    lines += _llm_by_split(rules, doc)
    lines += _llm_differences(rules, doc)
    stats = doc.get("llm") or {}
    if stats:
        own, decisions = stats.get("llm_used", 0), stats.get("decisions", 0)
        lines += [
            "",
            f"Who answered the {decisions} decisions: the model's own proposal {own}; the rules "
            f"{decisions - own} (no option to choose {stats.get('no_choice', 0)}, the model abstained "
            f"on a small margin {stats.get('abstained', 0)}, the nearest recorded cases disagreed on "
            f"acting {stats.get('contested', 0)}, invalid output "
            f"{stats.get('fallback_invalid', 0)}, timeout {stats.get('fallback_timeout', 0)}, "
            f"error {stats.get('fallback_error', 0)}, "
            f"model unavailable {stats.get('fallback_unavailable', 0)}).",
        ]
    lines += ["", LLM_MARKS[1]]
    return "\n".join(lines)


# What each split was used for by the LLM proposer (its abstention margin: evals/margin.py).
_LLM_SPLITS = (
    ("fit", "fit (margin fitted here)"),
    ("seen", "seen: earlier held-out rounds (not used for the margin)"),
    ("held-out", f"held-out round {len(ROUNDS)} (not used for anything)"),
)


def _llm_by_split(rules: EvalRun, doc: dict[str, Any]) -> list[str]:
    """Per split, the model's actions and restraint beside the rules' on the same incidents."""
    mine = {k: Summary.model_validate(v) for k, v in (doc.get("by_split") or {}).items()}
    theirs = rules.by_split()
    keep = [(key, label) for key, label in _LLM_SPLITS if key in mine and key in theirs]
    if not keep:
        return []
    out = [
        "",
        "| split | incidents | LLM actions | rules actions | LLM restraint | rules restraint |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for key, label in keep:
        m, r = mine[key], theirs[key]
        out.append(
            f"| {label} | {m.incidents} | {m.action_match_rate:.2f} | {r.action_match_rate:.2f} | "
            f"{_rate(m.restraint)} | {_rate(r.restraint)} |"
        )
    return out


def _round_of(ident: str) -> str:
    """Which held-out round recorded an incident (or the fit split it belongs to)."""
    found = round_of(ident)
    return f"round {found}" if found else "fit"


def _done(actions: list[dict[str, Any]]) -> str:
    if not actions:
        return "left alone"
    return ", ".join(f"{a['primitive']} {a['value']}" for a in actions)


def _llm_differences(rules: EvalRun, doc: dict[str, Any]) -> list[str]:
    """Every decision whose actions the model and the rules score differently, with both answers and
    the model's margin: what the actions row's difference is made of."""
    mine = {i["id"]: i for i in doc.get("incidents", [])}
    rows: list[str] = []
    won = 0
    for r in rules.results:
        m = mine.get(r.replay.id)
        if m is None or m["score"]["action_ok"] == r.score.action_ok:
            continue
        model_right = bool(m["score"]["action_ok"])
        won += model_right
        margin = "" if m.get("margin") is None else f"{m['margin']:.2f}"
        theirs = _done([a.model_dump() for a in r.replay.actions])
        rows.append(
            f"| `{r.replay.id}` ({_round_of(r.replay.id)}) | {', '.join(r.truth)} | "
            f"{'right' if r.score.action_ok else 'wrong'}: {theirs} | "
            f"{'right' if model_right else 'wrong'}: {_done(m.get('actions', []))} | {margin} |"
        )
    if not rows:
        return []
    return [
        "",
        f"Decisions where their actions differ: {len(rows)} (the model right in {won}, the rules in "
        f"{len(rows) - won}).",
        "",
        "| incident | truth | the rules | the model | margin |",
        "|---|---|---|---|---:|",
        *rows,
    ]


def chat_section(docs: dict[str, dict[str, Any]]) -> str:
    """The chat's answers scored on the question set: the template beside the LLM."""
    from evals.chat import ChatSummary
    from evals.chat_table import markdown

    summaries = {k: ChatSummary.model_validate(d["summary"]) for k, d in docs.items()}
    lines = [CHAT_MARKS[0], ""]
    table = markdown(summaries.get("template"), summaries.get("llm"))
    if not table:
        lines += ["No chat run recorded yet: `make bench` records one.", "", CHAT_MARKS[1]]
        return "\n".join(lines)
    lines += [
        "`idletune eval --chat evals/chat --json` (template) and `... --answerer llm --json` (the embedded",
        "model), on the bundled question set (`evals/chat/questions.yaml`, written by `python -m",
        'evals.chat_suite`): paraphrases of "why are my GPUs idle?", follow-ups, out-of-scope questions,',
        "requests for unsafe changes, and questions about incidents whose job or device name carries an",
        "injected instruction. Change requests, safety, remedy, moment and out-of-scope questions are",
        "answered by rules before any model; a model answer is used only when every figure traces and it",
        "states the diagnosis' top cause, else the template answers. Latency is per answer on the shared",
        "2-core test machine.",
        "",
        *table,
        "",
        CHAT_MARKS[1],
    ]
    return "\n".join(lines)


def chat_docs(results: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, file in CHAT_EVALS.items():
        path = results / file
        if path.exists():
            out[name] = json.loads(path.read_text())
    return out


def replace_section(text: str, marks: tuple[str, str], new: str) -> str:
    """`text` with the marked section replaced by `new`; appended when there are no markers."""
    start, end = text.find(marks[0]), text.find(marks[1])
    if start == -1 or end == -1 or end < start:
        return text.rstrip("\n") + "\n\n" + new + "\n"
    return text[:start] + new + text[end + len(marks[1]) :]


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--readme", type=Path, default=README)
    ap.add_argument("--rounds", type=Path, default=ROUNDS_DOC, help="the held-out rounds' own page")
    ap.add_argument("--results", type=Path, default=RESULTS, help="folder of recorded bench figures")
    args = ap.parse_args()
    policies = load_policies([], with_default=True)
    run = evaluate([SUITE], lambda: RuleProposer(policies), on_error=lambda e: print(f"invalid: {e}"))
    views: dict[View, EvalRun] = {
        v: run if v == "all" else evaluate([SUITE], lambda: RuleProposer(policies), view=v) for v in VIEWS
    }
    text = args.readme.read_text() if args.readme.exists() else "# idletune\n"
    text = replace_section(text, RESULTS_MARKS, results_section(run))
    blind = blind_scores()
    untuned = untuned_scores(blind)
    text = replace_section(text, HELDOUT_MARKS, heldout_section(views, blind, untuned))
    text = replace_section(text, MISSES_MARKS, misses_section(stretch_decisions(run)))
    text = replace_section(text, CAPS_MARKS, caps_section(readings(SUITE)))
    llm_file = args.results / LLM_EVAL
    llm_doc = json.loads(llm_file.read_text()) if llm_file.exists() else None
    text = replace_section(text, LLM_MARKS, llm_section(run, llm_doc))
    text = replace_section(text, CHAT_MARKS, chat_section(chat_docs(args.results)))
    text = replace_section(text, BENCH_MARKS, bench_section(read_all(args.results)))
    args.readme.write_text(text)
    rounds = args.rounds.read_text() if args.rounds.exists() else "# Held-out rounds, one by one\n"
    rounds = replace_section(rounds, ROUNDS_MARKS, rounds_section(run, blind_rounds(), untuned))
    args.rounds.write_text(replace_section(rounds, GUARD_MARKS, guard_section(run, tuned_at_scoring())))
    print(f"wrote the results tables to {args.readme} and {args.rounds}")


if __name__ == "__main__":
    main()
