"""Lost work that worsens inside the window: a job that never ran at its best (its loaders short of
CPU, its data wait never near zero) loses half of what it did when a newcomer takes the cores. The
step is an onset, and the stretch before it is what the later stretch is judged against."""

from __future__ import annotations

from agent.diagnosis.baseline import Frame
from agent.diagnosis.layout import layout_of
from agent.diagnosis.lostwork import find_lost_work
from core.diagnosis import Category, Diagnosis
from core.report import HostInfo, JobInfo, build_report
from core.sample import Sample
from core.window import Window
from tests.diag_helpers import Jitter, diagnose_jittered

HOST = HostInfo(cpus=2, gpus=0, block_devices=["vda"])
JOBS = [JobInfo(name="job", loader_workers=2)]
ONSET = 20


def _cpu_bound(t: int, j: Jitter, hogs: bool) -> dict[str, float]:
    """Two workers keep both cores busy and the trainer still waits 70 % of the time; from ONSET
    two hogs beside it halve its samples, double the run queue and raise CPU pressure."""
    late = hogs and t >= ONSET
    return {
        "trainer.job.data_wait_frac": j(0.77 if late else 0.7),
        "trainer.job.samples_per_s": j(800.0 if late else 1650.0),
        "trainer.job.step_time_ms": j(80.0 if late else 38.0),
        "cpu.util_pct": min(100.0, j(100.0 if late else 96.0)),
        "sched.procs_running": 5.5 if late else 3.5,
        "sched.runq_lat_p99_us": j(9000.0 if late else 4200.0),
        "sched.job.runq_lat_p99_us": j(8500.0 if late else 4200.0),
        "psi.cpu.some_avg10": j(75.0 if late else 38.0),
        "io.vda.read_kbps": j(2000.0),
        "io.vda.avg_req_kb": j(128.0),
    }


def _run(hogs: bool, seed: int = 1) -> Diagnosis:
    return diagnose_jittered(
        40, seed, lambda t, j: _cpu_bound(t, j, hogs), HOST, knobs={"loader.workers@job": 2}, jobs=list(JOBS)
    )


def test_a_newcomer_on_top_of_a_standing_loss_is_named_from_the_step() -> None:
    for seed in range(4):
        d = _run(hogs=True, seed=seed)
        ranked = [(c.category.value, c.confidence) for c in d.causes[:3]]
        assert d.top.category is Category.CPU_CONTENTION, ranked
        assert len(d.lost_work) == 2
        assert abs(d.lost_work[1].t_start - ONSET) <= 2
        # Judged against the stretch before the step, not against a healthy past the window lacks.
        assert any(e.baseline is not None for e in d.top.evidence)


def test_a_standing_loss_without_a_step_stays_one_span() -> None:
    d = _run(hogs=False)
    assert len(d.lost_work) == 1
    assert d.top.category is not Category.CPU_CONTENTION


def test_throughput_that_swings_every_few_seconds_does_not_split() -> None:
    # A checkpoint every four seconds halves two samples in four: no stretch stays worse.
    samples = [
        Sample(
            t=float(t),
            m={
                "trainer.job.data_wait_frac": 0.7,
                "trainer.job.samples_per_s": 800.0 if t % 4 < 2 else 1650.0,
            },
        )
        for t in range(40)
    ]
    w = Window(samples=samples)
    frame = Frame.from_window(w)
    lost = find_lost_work(frame, layout_of(frame, build_report(w, HOST, jobs=list(JOBS))))
    assert len(lost.spans) == 1
    assert lost.spans[0].past is None


def test_the_answer_tells_the_loss_from_its_start_and_the_step() -> None:
    import random

    from agent.answer import paragraph
    from agent.diagnosis.engine import diagnose

    rng = random.Random(3)

    def j(x: float) -> float:
        return x * (1.0 + rng.uniform(-0.05, 0.05))

    w = Window(samples=[Sample(t=float(t), m=_cpu_bound(t, j, hogs=True)) for t in range(40)])
    report = build_report(w, HOST, knobs={"loader.workers@job": 2}, jobs=list(JOBS))
    d = diagnose(w, report)
    assert [s.worsened for s in d.lost_work] == [False, True]
    text = paragraph(report, d)
    assert f"more from t={d.lost_work[1].t_start:g} s" in text, text
    assert "other span" not in text
