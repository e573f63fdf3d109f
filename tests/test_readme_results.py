from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.figures import read_all, write_figures
from bench.readme_results import BENCH_MARKS, bench_section, replace_section


def test_recorded_figures_round_trip_and_render(tmp_path: Path) -> None:
    write_figures(
        tmp_path / "diagnose.json",
        "diagnose",
        {
            "samples": 600,
            "metrics": 201,
            "runs": 9,
            "diagnose_ms_wall": 17.94,
            "diagnose_ms_cpu": 17.5,
            "build_report_ms_wall": 3.0,
        },
    )
    write_figures(None, "ignored", {})  # no path: nothing written
    (tmp_path / "stray.json").write_text(json.dumps({"not": "a bench"}))
    docs = read_all(tmp_path)
    assert set(docs) == {"diagnose"} and docs["diagnose"]["cpus"]
    text = bench_section(docs)
    assert text.startswith(BENCH_MARKS[0]) and text.endswith(BENCH_MARKS[1])
    row = "| diagnosis, 600 samples × 201 metrics (median of 9) | 17.9 ms wall, 17.5 ms CPU | < 20 ms |"
    assert row in text


def test_replace_section_keeps_the_rest_of_the_readme() -> None:
    marks = ("<!-- a -->", "<!-- b -->")
    text = "# title\nintro\n<!-- a -->\nold\n<!-- b -->\ntail\n"
    new = "<!-- a -->new<!-- b -->"
    assert replace_section(text, marks, new) == "# title\nintro\n" + new + "\ntail\n"
    assert replace_section("# t\n", marks, "X") == "# t\n\nX\n"


def test_testbed_figures_render_one_row_per_scenario(tmp_path: Path) -> None:
    scen = {
        "name": "writeback",
        "cause": "writeback_burst",
        "fix": "small dirty limits",
        "runs": 3,
        "fault_samples_per_s": 3400.4,
        "fix_samples_per_s": 5000.0,
        "fault_data_wait": 0.5,
        "fix_data_wait": 0.46,
        "moved_median_pct": 47.0,
        "moved_min_pct": 46.2,
    }
    write_figures(tmp_path / "testbed.json", "testbed", {"seconds": 5.0, "scenarios": [scen]})
    text = bench_section(read_all(tmp_path))
    row = (
        "| testbed writeback: fault → fix, samples/s (median of 3 runs)"
        " | 3400 → 5000 (+47%, lowest run +46%) |"
    )
    assert row in text


def test_overhead_rows_carry_the_floor_and_program_time(tmp_path: Path) -> None:
    figures = {
        "rounds": 7,
        "seconds": 3.0,
        "workloads": [
            {
                "name": "pingpong",
                "idletune_pct": 12.2,
                "runqlat_pct": 22.0,
                "floor_pct": 8.8,
                "floor_raw_pct": 4.7,
                "idletune_duty_pct": 1.3,
            }
        ],
        "program_ns_per_op": {"pingpong": {"idletune": 395.0, "runqlat": 1286.0}, "dio": {}},
        "rss_mib": 129.0,
    }
    write_figures(tmp_path / "overhead.json", "overhead", figures)
    text = bench_section(read_all(tmp_path))
    assert "idletune 12.2% · bcc runqlat 22.0% · empty programs 8.8% (on raw tracepoints 4.7%)" in text
    assert "| BPF program time per round trip, pingpong (kernel.bpf_stats_enabled) | idletune 395 ns" in text
    assert "bcc runqlat 1,286 ns" in text and "per read, dio" not in text
    assert "| `idletune serve` on its duty cycle (a healthy host), pingpong | 1.3% slowdown | ≤ 2% |" in text


def test_trainer_overhead_rows(tmp_path: Path) -> None:
    figures = {
        "rounds": 7,
        "seconds": 20.0,
        "bare_spread_pct": 2.5,
        "agent-duty": {"slowdown_pct": 0.4, "per_round_pct": [], "agent_cpu_pct": 0.8, "agent_rss_mib": 95},
    }
    write_figures(tmp_path / "overhead-trainer.json", "overhead-trainer", figures)
    text = bench_section(read_all(tmp_path))
    assert (
        "| testbed PyTorch trainer, samples/s with `idletune serve` on its duty cycle (a healthy host) "
        "(median of 7 interleaved rounds) | 0.4% slowdown (bare runs spread 2.5%); agent 0.80% of a core, "
        "95 MiB | ≤ 1%, within the pairs' spread | `bench/overhead.py --trainer` |"
    ) in text
    assert "always on" not in text  # not measured, not shown


def _one_recording_per_split(tmp_path: Path, splits: tuple[str, ...] = ("fit", "seen", "held-out")) -> Path:
    """A suite of bundled recordings, the first of each split asked for."""
    import shutil

    from evals.split import split_of

    bundled = Path(__file__).resolve().parent.parent / "evals" / "incidents"
    suite = tmp_path / "suite"
    for split in splits:
        d = next(d for d in sorted(bundled.glob("real-*-1")) if split_of(d.name) == split)
        shutil.copytree(d, suite / d.name)
    return suite


def test_heldout_sections_show_each_split_the_blind_rounds_and_every_view(tmp_path: Path) -> None:
    from agent.proposers.rules import RuleProposer, load_policies
    from bench.readme_results import (
        HELDOUT_MARKS,
        ROUNDS_MARKS,
        UNTUNED_STRETCHES,
        blind_rounds,
        blind_scores,
        heldout_section,
        rounds_section,
        untuned_scores,
    )
    from evals.harness import evaluate
    from evals.sources import VIEWS
    from evals.split import ROUNDS, condition_of

    suite = _one_recording_per_split(tmp_path)
    policies = load_policies([], with_default=True)
    runs = {v: evaluate([suite], lambda: RuleProposer(policies), view=v) for v in VIEWS}
    held_out = len(ROUNDS)  # the held-out round is the last one written down
    blind = blind_rounds()
    assert set(blind) == set(range(1, held_out)) and blind[1].incidents == 28
    # Each round's per-incident blind scores are its conditions' recordings in its own file.
    scores = blind_scores()
    assert sorted(scores) == list(range(1, held_out))
    assert all(len(scores[n]) == blind[n].incidents for n in scores)
    assert all(condition_of(s.id) in ROUNDS[n - 1] for n in scores for s in scores[n])
    untuned = untuned_scores(scores)
    # Rounds 38-56 ran on one engine; 2d7bbe7 changed it after round 56 was scored, 41c4fd4 (the
    # reclaim stand-in, through the spec's names alone) after round 58, efa1f5d (a cap held on
    # bytes) after round 102, 4d5ddfd (a lone reader's busy device) after round 113 and a16b643
    # (others' runnable tasks as contention) after round 130; the last stretch runs from round 131
    # to the held-out round.
    assert (
        list(untuned)
        == list(UNTUNED_STRETCHES)
        == [
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
            (131, held_out),
        ]
    )
    for first, end in UNTUNED_STRETCHES:
        # The held-out round is the current run's: a stretch holds the blind scores before it.
        wanted = sum(blind[n].incidents for n in range(first, min(end, held_out - 1) + 1))
        assert len(untuned[(first, end)]) == wanted

    # The README: the splits, every round as first scored pooled with the held-out round's (one
    # recording in the suite copied here), the longest stretch and every later one, and every view.
    text = heldout_section(runs, scores, untuned)
    assert text.startswith(HELDOUT_MARKS[0]) and text.endswith(HELDOUT_MARKS[1])
    assert f"| real, held-out round {held_out}, never tuned on | 1 |" in text
    pooled = sum(len(v) for v in scores.values()) + 1
    assert f"| real, held-out rounds 1-{held_out} pooled, each as first scored, blind | {pooled} |" in text
    longest = "| real, held-out rounds 59-102 pooled, each scored blind, no tuning between |"
    assert f"{longest} {len(untuned[(59, 102)])} |" in text
    closed = "| real, held-out rounds 103-113 pooled, each scored blind, no tuning between |"
    assert f"{closed} {len(untuned[(103, 113)])} |" in text
    closed = "| real, held-out rounds 114-130 pooled, each scored blind, no tuning between |"
    assert f"{closed} {len(untuned[(114, 130)])} |" in text
    running = f"| real, held-out rounds 131-{held_out} pooled, each scored blind, no tuning between |"
    # A stretch of one round so far is that round's own row.
    assert (f"{running} {len(untuned[(131, held_out)]) + 1} |" in text) is (held_out > 131)
    # Rounds 59-102 are the longest stretch (44 rounds to 38-56's 19): the earlier ones are in
    # ROUNDS.md only.
    for first, end in ((31, 37), (38, 56), (57, 58)):
        assert f"rounds {first}-{end} pooled" not in text
    assert "round 3, scored blind" not in text  # in ROUNDS.md
    assert "[evals/ROUNDS.md](evals/ROUNDS.md)" in text
    assert all(f"| {v} |" in text for v in VIEWS)
    # Each view's actions beside its AC@1: a source missing can leave the cause right, the change not.
    actions = runs["no-bpf"].summary.action_match_rate
    assert f"| AC@1, round {held_out} | actions | restraint | forbidden |" in text
    assert any(line.startswith("| no-bpf |") and f"| {actions:.2f} |" in line for line in text.splitlines())

    # ROUNDS.md: each round's row as scored blind, and every stretch. One that ended before the
    # held-out round pools its blind scores alone; one that ends at it adds the current run's.
    page = rounds_section(runs["all"], blind, untuned)
    assert page.startswith(ROUNDS_MARKS[0]) and page.endswith(ROUNDS_MARKS[1])
    assert "| round 3, scored blind at cda9249 | 8 | 0.50 |" in page
    assert "| round 1, scored blind at 25d79c6 | 28 | 0.86 |" in page
    assert f"| round {held_out}, the held-out round, never tuned on | 1 |" in page
    for (first, end), pool in untuned.items():
        row = f"| real, held-out rounds {first}-{end} pooled, each scored blind, no tuning between |"
        # A stretch of one round so far is that round's own row.
        assert (f"{row} {len(pool) + (1 if end == held_out else 0)} |" in page) is (first < end)
    round20 = [s for s in untuned[(19, 20)] if condition_of(s.id) in ROUNDS[19]]
    assert len(round20) == blind[20].incidents
    open_ = rounds_section(runs["all"], blind, {(20, held_out): round20})
    pooled_row = f"| real, held-out rounds 20-{held_out} pooled, each scored blind, no tuning between |"
    assert f"{pooled_row} {len(round20) + 1} |" in open_


def test_guard_table_gives_what_each_scoring_had_tuned_on(tmp_path: Path) -> None:
    from agent.proposers.rules import RuleProposer, load_policies
    from bench.readme_results import (
        BLIND_ROUNDS,
        GUARD_MARKS,
        GUARD_SINCE,
        _blind_docs,
        guard_section,
        tuned_at_scoring,
    )
    from evals.harness import evaluate
    from evals.split import ROUNDS, condition_of, split_of

    held_out = len(ROUNDS)
    tuned = tuned_at_scoring()
    assert sorted(tuned) == list(range(GUARD_SINCE, held_out))
    # What a round's scoring had tuned on is its file less its own recordings: every earlier round's
    # are in, its own are not, and the count is the file's fit and seen splits as they stood then.
    docs = dict(_blind_docs())
    for n, scores in tuned.items():
        conditions = {condition_of(s.id) for s in scores}
        assert not conditions & ROUNDS[n - 1]
        assert ROUNDS[n - 2] <= conditions
        fit, seen = docs[n]["by_split"]["fit"], docs[n]["by_split"]["seen"]
        assert len(scores) == fit["incidents"] + seen["incidents"]
        rate = (fit["ac1"] * fit["incidents"] + seen["ac1"] * seen["incidents"]) / len(scores)
        assert sum(s.ac1 for s in scores) / len(scores) == pytest.approx(rate, abs=0.001)

    suite = _one_recording_per_split(tmp_path)
    policies = load_policies([], with_default=True)
    run = evaluate([suite], lambda: RuleProposer(policies))
    page = guard_section(run, tuned)
    assert page.startswith(GUARD_MARKS[0]) and page.endswith(GUARD_MARKS[1])
    rows = [line for line in page.splitlines() if line.startswith("| round ")]
    assert len(rows) == len(tuned) + 1
    last = BLIND_ROUNDS[held_out - 1]
    scores = tuned[held_out - 1]
    named = sum(s.ac1 for s in scores)
    assert rows[-2].startswith(f"| round {held_out - 1}, scored at {last} | {len(scores)} | {named} |")
    # The current run's row leaves its held-out recording out: two of the three copied here.
    now = [r.score for r in run.results if split_of(r.replay.id) != "held-out"]
    assert rows[-1].startswith(
        f"| round {held_out}, the held-out round (this run) | 2 | {sum(s.ac1 for s in now)} |"
    )


def test_the_rounds_page_is_linked_and_carries_its_table() -> None:
    from bench.readme_results import README, ROUNDS_DOC, ROUNDS_MARKS

    page = ROUNDS_DOC.read_text()
    assert ROUNDS_MARKS[0] in page and ROUNDS_MARKS[1] in page
    assert "evals/ROUNDS.md" in README.read_text()


def test_cost_figures_render_the_process_and_its_programs(tmp_path: Path) -> None:
    figures = {
        "seconds": 60.0,
        "cpu_share_pct": 0.82,
        "rss_mib": 94.0,
        "peak_rss_mib": 188.0,
        "bpf_share_pct": 1.41,
        "programs": {
            "sched/sched_switch": {"share_pct": 0.87, "events_per_s": 62826.0, "ns_per_event": 138.0}
        },
    }
    write_figures(tmp_path / "cost.json", "cost", figures)
    text = bench_section(read_all(tmp_path))
    assert "| `idletune serve`, observe mode, settled: process CPU (over 60 s) | 0.82 % of one core |" in text
    assert "| 94 MiB (peak 188 MiB, at the compile) | ≤ 150 MB |" in text
    assert "1.41 % of one core; most: sched/sched_switch, 62,826 events/s × 138 ns" in text


def test_llm_section_gives_each_split_beside_the_rules_and_who_answered(tmp_path: Path) -> None:
    from agent.proposers.rules import RuleProposer, load_policies
    from bench.readme_results import LLM_MARKS, llm_section
    from evals.harness import evaluate
    from evals.split import ROUNDS

    suite = _one_recording_per_split(tmp_path, ("fit", "held-out"))
    rules = evaluate([suite], lambda: RuleProposer(load_policies([], with_default=True)))
    doc = rules.to_json()
    doc["by_split"]["fit"]["action_match_rate"] = 0.25  # the model's own figure differs from the rules'
    doc["llm"] = {"decisions": 2, "llm_used": 1, "no_choice": 0, "abstained": 1}
    text = llm_section(rules, doc)
    assert text.startswith(LLM_MARKS[0]) and text.endswith(LLM_MARKS[1])
    fit = rules.by_split()["fit"]
    assert f"| fit (margin fitted here) | 1 | 0.25 | {fit.action_match_rate:.2f} |" in text
    assert f"| held-out round {len(ROUNDS)} (not used for anything) | 1 |" in text
    assert "seen:" not in text  # a split the run does not hold is left out
    assert "the model abstained on a small margin 1" in text
    assert "their actions differ" not in text  # the same decisions: nothing to list


def test_llm_section_lists_each_decision_whose_actions_differ_from_the_rules(tmp_path: Path) -> None:
    from agent.proposers.rules import RuleProposer, load_policies
    from bench.readme_results import llm_section
    from evals.harness import evaluate
    from evals.split import ROUNDS, split_of

    suite = _one_recording_per_split(tmp_path, ("fit", "held-out"))
    rules = evaluate([suite], lambda: RuleProposer(load_policies([], with_default=True)))
    doc = rules.to_json()
    held = next(i for i in doc["incidents"] if split_of(i["id"]) == "held-out")
    right = held["score"]["action_ok"]
    held["score"]["action_ok"] = not right  # the model scored the other way on this one
    held["actions"] = (
        [] if held["actions"] else [{"primitive": "block.read_ahead_kb", "target": "vda", "value": 4096}]
    )
    held["margin"] = 1.4
    text = llm_section(rules, doc)
    won = 0 if right else 1
    assert (
        f"Decisions where their actions differ: 1 (the model right in {won}, the rules in {1 - won})." in text
    )
    row = next(line for line in text.splitlines() if line.startswith(f"| `{held['id']}`"))
    mine = "left alone" if not held["actions"] else "block.read_ahead_kb 4096"
    assert f"{'right' if not right else 'wrong'}: {mine} | 1.40 |" in row
    assert f"(round {len(ROUNDS)})" in row
