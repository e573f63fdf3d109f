"""Incidents seen through fewer sources, scores per split, tag and truth, and the matrix's labels."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from agent.cli import eval as eval_cli
from agent.proposers.rules import RuleProposer, load_policies
from core.incident import load_incident
from evals.harness import evaluate
from evals.sources import BPF_ONLY, VIEWS, seen
from evals.split import HELD_OUT, ROUNDS, condition_of, split_of

BUNDLED = Path(__file__).resolve().parent.parent / "evals" / "incidents"


def _app() -> typer.Typer:
    app = typer.Typer()
    eval_cli.register(app)
    app.command("noop", hidden=True)(lambda: None)  # keeps `eval` a named subcommand
    return app


def _rules() -> RuleProposer:
    return RuleProposer(load_policies([], with_default=True))


@pytest.fixture
def small_suite(tmp_path: Path) -> Path:
    """Spec examples and a real recording of a fit, a seen and a held-out condition."""
    suite = tmp_path / "suite"
    picked = [
        next(d for d in sorted(BUNDLED.iterdir()) if condition_of(d.name) and split_of(d.name) == split)
        for split in ("fit", "seen", "held-out")
    ]
    for d in (BUNDLED / "checkpoint-writeback-burst", BUNDLED / "healthy-host", *picked):
        shutil.copytree(d, suite / d.name)
    return suite


def test_split_is_by_condition_and_only_matrix_ids_can_be_held_out() -> None:
    some = sorted(ROUNDS[-1])[0]
    assert condition_of(f"real-{some}-2") == some and split_of(f"real-{some}-2") == "held-out"
    for earlier in ROUNDS[:-1]:
        assert split_of(f"real-{sorted(earlier)[0]}-1") == "seen"
    assert sum(len(r) for r in ROUNDS) == len(frozenset().union(*ROUNDS))  # no condition in two rounds
    assert split_of("real-readahead") == "fit"  # a recording from before the matrix
    assert split_of("syn-comm-wait-24c-2gpu-s502") == "fit"
    assert split_of(f"{some}-1") == "fit"  # not a matrix id


def test_each_view_drops_only_its_source() -> None:
    inc = load_incident(BUNDLED / "real-readahead")
    names = {k for s in inc.samples for k in s.m}
    assert any(n.startswith("trainer.") for n in names) and any("lat_p99_us" in n for n in names)
    no_hook = seen(inc, "no-hook")
    kept = {k for s in no_hook.samples for k in s.m}
    assert not any(k.startswith("trainer.") for k in kept)
    assert kept == {n for n in names if not n.startswith("trainer.")}
    # The loader's settings go with the hook; its worker processes are still counted (agent/jobs.py).
    assert [j.loader_workers for j in no_hook.jobs] == [j.loader_workers for j in inc.jobs]
    assert all(j.loader_workers is not None for j in no_hook.jobs)
    assert not any(k.startswith("loader.") for k in no_hook.knobs)
    no_bpf = {k for s in seen(inc, "no-bpf").samples for k in s.m}
    assert not any("lat_p99_us" in k or "runq_lat" in k for k in no_bpf)
    assert any(k.endswith(".avg_req_kb") for k in no_bpf)  # diskstats gives request sizes
    assert seen(inc, "all") is inc
    assert inc.samples[0].m == load_incident(BUNDLED / "real-readahead").samples[0].m  # not mutated


def test_no_gpu_view_has_no_gpu_anything() -> None:
    inc = load_incident(BUNDLED / "checkpoint-writeback-burst")
    out = seen(inc, "no-gpu")
    assert out.host.gpus == 0
    assert not any(k.startswith("gpu.") for s in out.samples for k in s.m)
    assert not any(k.startswith("gpu.") for k in out.knobs)


# The metric table of spec/incident-v1.md, copied as test_primitives_catalog copies its catalogue ids.
SPEC_METRICS = {
    *(f"gpu.<i>.{m}" for m in ("util_pct", "sm_clock_mhz", "sm_clock_max_mhz", "power_w", "power_limit_w")),
    *(f"gpu.<i>.{m}" for m in ("clock_event_reasons", "temp_c", "pcie_rx_kbps", "pcie_tx_kbps")),
    "gpu.<i>.mem_used_mib",
    *(f"trainer.<job>.{m}" for m in ("step_time_ms", "data_wait_frac", "samples_per_s")),
    *(f"io.<dev>.{m}" for m in ("lat_p50_us", "lat_p99_us", "read_iops", "write_iops", "read_kbps")),
    *(f"io.<dev>.{m}" for m in ("write_kbps", "avg_req_kb")),
    "sched.runq_lat_p99_us",
    "sched.<job>.runq_lat_p99_us",
    "sched.<job>.offcpu_frac",
    "sched.ctx_switches_per_s",
    "sched.migrations_per_s",
    "cpu.util_pct",
    *(f"mem.{m}" for m in ("direct_reclaim_ms_per_s", "kswapd_wakeups_per_s", "dirty_mib", "writeback_mib")),
    *(f"mem.{m}" for m in ("dirty_throttle_ms_per_s", "pagecache_miss_per_s", "available_mib")),
    "numa.remote_frac",
    *(f"psi.{m}" for m in ("cpu.some_avg10", "io.some_avg10", "io.full_avg10", "mem.some_avg10")),
    "psi.mem.full_avg10",
}


def test_spec_only_view_keeps_the_spec_names_alone() -> None:
    """A recorder of the spec's names has none of idletune's additions (runnable tasks, refaults,
    cgroup reclaim, device busy time), and every spec name."""
    from core.vocabulary import METRICS, parse

    assert {d.template for d in METRICS if not d.extension} == SPEC_METRICS
    inc = load_incident(BUNDLED / "real-recl-160-1")
    names = {k for s in inc.samples for k in s.m}
    assert {"sched.procs_running", "mem.refaults_per_s", "mem.memcg_reclaim_ms_per_s"} <= names
    out = seen(inc, "spec-only")
    kept = {k for s in out.samples for k in s.m}
    assert kept and kept < names
    for k in names:
        p = parse(k)
        assert p is not None
        assert (k in kept) == (p.definition.template in SPEC_METRICS), k
    assert out.knobs == inc.knobs and out.jobs == inc.jobs


def test_bpf_only_families_are_in_the_vocabulary() -> None:
    from core.vocabulary import METRICS

    assert {d.family for d in METRICS} >= BPF_ONLY


def test_split_tags_and_confusion_add_up(small_suite: Path) -> None:
    run = evaluate([small_suite], _rules)
    parts = run.by_split()
    assert set(parts) == {"fit", "seen", "held-out"}
    assert parts["held-out"].incidents == 1 and parts["seen"].incidents == 1 and parts["fit"].incidents == 3
    confusion = run.confusion()
    assert sum(sum(row.values()) for row in confusion.values()) == 5
    assert confusion["none"].get("none") == 1  # the healthy host
    tags = run.by_tag()
    assert tags["real"].incidents == 3 and tags["matrix"].incidents == 3
    doc = run.to_json()
    assert {"view", "judged", "by_split", "confusion", "by_tag"} <= set(doc)
    json.dumps(doc)


def test_a_view_without_the_cause_figures_marks_it_not_judged(small_suite: Path) -> None:
    run = evaluate([small_suite], _rules, view="no-hook")
    assert run.view == "no-hook"
    for r in run.results:
        # The worker count stays (the agent counts the job's processes); a CPU-only testbed
        # recording has no trainer figure and no GPU to show whether the trainer waited for data.
        assert "loader_oversubscription" not in r.replay.not_judged
        if r.replay.id.startswith("real-"):
            assert "dataloader_starvation" in r.replay.not_judged, r.replay.id
    judged = run.judged()
    assert judged.incidents <= run.summary.incidents


def test_eval_cli_sources_and_splits(small_suite: Path) -> None:
    res = CliRunner().invoke(_app(), ["eval", str(small_suite), "--sources", "no-bpf", "--json"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["view"] == "no-bpf" and set(doc["by_split"]) == {"fit", "seen", "held-out"}
    table = CliRunner().invoke(_app(), ["eval", str(small_suite)])
    assert table.exit_code == 0 and "held-out: 1 incidents" in table.output
    bad = CliRunner().invoke(_app(), ["eval", str(small_suite), "--sources", "no-disk"])
    assert bad.exit_code == 2
    assert set(VIEWS) == {"all", "no-hook", "no-bpf", "no-gpu", "spec-only"}


def test_matrix_labels_come_from_the_counterfactual() -> None:
    from evals import matrix
    from evals.testbed.scenarios import SCENARIOS

    cond = next(c for c in matrix.CONDITIONS if c.name == "ra64-iops100")
    sc = cond.built()
    assert sc.fault.read_ahead_kb == 64 and sc.read_iops == 100
    assert SCENARIOS["readahead"].fault.read_ahead_kb != 64  # the base scenario is untouched
    moved = matrix._truth(cond, sc, "loop3", True, 0.0)
    assert moved["root_causes"] == ["readahead_mismatch"] and not moved["noop_correct"]
    assert moved["acceptable_actions"][0][0]["target"] == "loop3"
    still = matrix._truth(cond, sc, "loop3", False, 0.0)
    assert still["root_causes"] == ["none"] and still["noop_correct"] and still["acceptable_actions"] == []
    assert {"primitive": "trainer.batch_size"} in still["forbidden_actions"]
    cont = next(c for c in matrix.CONDITIONS if c.scenario == "contention")
    t = matrix._truth(cont, cont.built(), "loop3", True, 0.0)
    assert t["root_causes"] == ["cpu_contention"] and t["noop_correct"] and t["acceptable_actions"] == []


def test_matrix_covers_the_issue_conditions_and_each_family_keeps_fit_and_held_out() -> None:
    from evals import matrix

    names = [c.name for c in matrix.CONDITIONS]
    assert len(names) == len(set(names)) and set(names) >= frozenset().union(*ROUNDS)
    for scenario in {c.scenario for c in matrix.CONDITIONS if not c.name.startswith("healthy")}:
        family = [
            c.name for c in matrix.CONDITIONS if c.scenario == scenario and not c.name.startswith("healthy")
        ]
        assert any(n in HELD_OUT for n in family) and any(n not in HELD_OUT for n in family), scenario
    tags = {t for c in matrix.CONDITIONS for t in c.tags}
    assert {"raw", "fs", "workers-0", "workers-3", "iops-30", "iops-300", "ra-32", "ra-512"} <= tags
    assert {c.onset for c in matrix.CONDITIONS} == {"start", "mid"}
    assert {c.interval_s for c in matrix.CONDITIONS} == {1.0, 2.0}
    assert {"noise-dirty", "noise-rootwrites", "noise-hog-elsewhere", "noise-memhog"} <= tags


def test_matrix_skips_recordings_it_has(tmp_path: Path) -> None:
    from evals import matrix

    cond = matrix.CONDITIONS[0]
    (tmp_path / f"real-{cond.name}-1").mkdir()
    assert matrix._idents(cond, 3, tmp_path) == [f"real-{cond.name}-2", f"real-{cond.name}-3"]


def test_every_matrix_recording_is_labelled_by_the_counterfactual_rule() -> None:
    """The truth of each `real-<condition>-<n>` follows from the figures in its own header."""
    import re

    import yaml

    from evals import matrix

    conds = {c.name: c for c in matrix.CONDITIONS}
    checked = 0
    for d in sorted(BUNDLED.glob("real-*")):
        cond = conds.get(condition_of(d.name) or "")
        if cond is None:
            continue
        text = (d / "incident.yaml").read_text()
        # The move from the header's samples/s, not its rounded percentage: +19.7 % prints as +20 %.
        m = re.search(r"fault ([\d.]+) samples/s \(data wait (\d+) %\), fix \(.*\) ([\d.]+) samples/s:", text)
        dev = re.search(r"data on /dev/(\w+)", text)
        assert m and dev, d.name
        truth = yaml.safe_load(text)["truth"]
        want = matrix._truth(
            cond,
            cond.built(),
            dev.group(1),
            float(m.group(3)) / float(m.group(1)) - 1.0 >= matrix.MOVE,
            truth.get("onset_t", 0.0),
            int(m.group(2)) / 100,
        )
        assert truth == want, d.name
        checked += 1
    assert checked >= 60


def test_worker_sweep_refuses_bad_input_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from evals import workers

    assert workers.parse_counts("3,2") == [3, 2]
    for bad in ("three", "3,3", "-1,2", ""):
        with pytest.raises(ValueError):
            workers.parse_counts(bad)
    assert workers.main(["no-such-condition", "3,2"]) == 2
    assert workers.main(["healthy-w6-p1", "6,x"]) == 2
    assert workers.main(["healthy-w6-p1", "6,2", "--rounds", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("evals.workers: ") for line in err)


def test_every_conditions_noise_is_one_the_testbed_starts() -> None:
    from evals import matrix
    from evals.testbed.scenarios import NOISES

    for c in matrix.CONDITIONS:
        noise = c.setup.get("noise", ())
        assert set(noise) <= set(NOISES), (c.name, noise)
        assert not ("dirty" in noise and c.setup.get("raw")), c.name  # dirty pages need a file system
