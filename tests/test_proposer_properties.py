"""Properties of the rule policy: benign noise never moves a knob, and a cause the top cause explains
is no reason to act."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.diagnosis.engine import diagnose
from agent.proposers.rules import RuleProposer, load_policies
from core.diagnosis import Category, Cause, Diagnosis
from core.report import HealthReport, HostInfo, JobInfo, build_report
from core.sample import Sample
from core.window import Window
from primitives import catalog

POLICY = load_policies([])
HOST = HostInfo(cpus=8, numa_nodes=1, gpus=1, block_devices=["nvme0n1"])
KNOBS: dict[str, int | float | str] = {
    "block.read_ahead_kb@nvme0n1": 128,
    "block.nr_requests@nvme0n1": 256,
    "vm.dirty_background_ratio": 10,
    "vm.dirty_ratio": 20,
    "vm.dirty_background_bytes": 0,
    "vm.dirty_bytes": 0,
    "vm.swappiness": 60,
    "vm.min_free_kbytes": 67584,
    "loader.workers@job": 2,
    "loader.prefetch_factor@job": 2,
    "kernel.numa_balancing": 0,
}
JOBS = [JobInfo(name="job", gpus=[0], loader_workers=2)]


def _healthy(t: int, amp: float, rng: st.DataObject) -> dict[str, float]:
    def n(x: float) -> float:
        return max(0.0, x * (1.0 + rng.draw(st.floats(-amp, amp))))

    return {
        "gpu.0.util_pct": min(100.0, n(96.0)),
        "gpu.0.power_w": n(650.0),
        "gpu.0.power_limit_w": 700.0,
        "gpu.0.sm_clock_mhz": n(1900.0),
        "gpu.0.sm_clock_max_mhz": 1980.0,
        "gpu.0.temp_c": n(62.0),
        "trainer.job.data_wait_frac": min(0.02, n(0.01)),
        "trainer.job.samples_per_s": n(1200.0),
        "trainer.job.step_time_ms": n(210.0),
        "io.nvme0n1.read_iops": n(800.0),
        "io.nvme0n1.read_kbps": n(100000.0),
        "io.nvme0n1.avg_req_kb": n(125.0),
        "io.nvme0n1.lat_p50_us": n(120.0),
        "io.nvme0n1.lat_p99_us": n(400.0),
        "cpu.util_pct": min(100.0, n(45.0)),
        "psi.cpu.some_avg10": n(1.0),
        "psi.io.some_avg10": n(1.0),
        "psi.mem.some_avg10": 0.0,
        "mem.dirty_mib": n(60.0),
        "mem.writeback_mib": n(2.0),
        "mem.available_mib": n(40000.0),
        "sched.runq_lat_p99_us": n(60.0),
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.floats(0.0, 0.15), st.integers(20, 60))
def test_benign_noise_on_a_healthy_window_never_yields_an_action(
    data: st.DataObject, amp: float, n: int
) -> None:
    samples = [Sample(t=float(t), m=_healthy(t, amp, data)) for t in range(n)]
    w = Window(samples=samples)
    report = build_report(w, HOST, knobs=dict(KNOBS), jobs=list(JOBS))
    d = diagnose(w, report)
    proposal = RuleProposer(POLICY).propose(report, d)
    assert not proposal.actions, (d.causes[:3], proposal)


def _report() -> HealthReport:
    samples = [
        Sample(t=float(t), m={"trainer.job.data_wait_frac": 0.4, "cpu.util_pct": 40.0}) for t in range(10)
    ]
    w = Window(samples=samples)
    return build_report(w, HOST, knobs=dict(KNOBS), jobs=list(JOBS))


NOOP = [c for c in Category if c is not Category.NONE and not catalog.for_cause(c)]
ANY = [c for c in Category if c is not Category.NONE]


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from(NOOP),
    st.floats(0.3, 0.97),
    st.lists(
        st.tuples(st.sampled_from(ANY), st.floats(0.0, 1.0)), min_size=1, max_size=6, unique_by=lambda x: x[0]
    ),
)
def test_no_action_for_a_cause_ranked_below_a_no_op_cause_that_explains_the_loss(
    top: Category, conf: float, rest: list[tuple[Category, float]]
) -> None:
    others = [(c, min(x, conf) * 0.99) for c, x in rest if c is not top]
    causes = [Cause(category=top, confidence=conf, summary="explains the lost work")]
    causes += [Cause(category=c, confidence=x, summary="secondary") for c, x in others]
    causes.append(Cause(category=Category.NONE, confidence=0.01, summary="not healthy"))
    causes.sort(key=lambda c: -c.confidence)
    d = Diagnosis(causes=causes)
    proposal = RuleProposer(POLICY).propose(_report(), d)
    assert not proposal.actions, (causes, proposal.actions)
