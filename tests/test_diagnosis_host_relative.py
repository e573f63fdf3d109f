"""Signatures judged against the host, not this VM: merged readahead requests, a flush already under
way, device classes and read shares, someone else's CPU work, and causes a window cannot judge."""

from __future__ import annotations

from collections.abc import Callable

from agent.proposers.rules import RuleProposer, load_policies
from core.diagnosis import Category, Diagnosis
from core.report import HealthReport, HostInfo, JobInfo, build_report
from core.sample import Sample
from core.window import Window
from tests.diag_helpers import Jitter, diagnose_jittered, rank_of

CPU_HOST = HostInfo(cpus=2, numa_nodes=1, gpus=0, block_devices=["loop0", "vda"])
JOB = [JobInfo(name="job", gpus=[], loader_workers=2)]
KNOBS: dict[str, int | float | str] = {"block.read_ahead_kb@loop0": 128, "loader.workers@job": 2}


def _throttled_reader(t: int, j: Jitter, req_kb: float = 152.0) -> dict[str, float]:
    """A job streaming shards from an IOPS-capped loop device stacked on vda: it waits on I/O."""
    return {
        "trainer.job.data_wait_frac": min(1.0, j(0.93)),
        "trainer.job.samples_per_s": j(390.0),
        "io.loop0.avg_req_kb": j(req_kb),
        "io.loop0.read_iops": j(190.0),
        "io.loop0.read_kbps": j(190.0 * req_kb),
        "io.loop0.lat_p99_us": j(2000.0),
        "io.loop0.lat_p50_us": j(500.0),
        # The loop device's backing file: the same reads reach vda, at a virtio disk's usual latency.
        "io.vda.avg_req_kb": j(req_kb),
        "io.vda.read_iops": j(190.0),
        "io.vda.read_kbps": j(190.0 * req_kb),
        "io.vda.lat_p99_us": j(950.0),
        "io.vda.lat_p50_us": j(360.0),
        "psi.io.some_avg10": j(75.0),
        "cpu.util_pct": j(8.0),
        "psi.cpu.some_avg10": j(1.0),
        "mem.dirty_mib": j(2.0),
        "mem.writeback_mib": 0.0,
    }


def _cpu(
    metrics: Callable[[int, Jitter], dict[str, float]], seed: int = 1, knobs: dict | None = None
) -> Diagnosis:
    return diagnose_jittered(40, seed, metrics, CPU_HOST, knobs=dict(knobs or KNOBS), jobs=list(JOB))


def test_requests_merged_past_the_readahead_window_still_point_at_readahead() -> None:
    for req in (135.0, 152.0, 240.0):  # 1.05x, 1.19x (an independent recorder) and nearly 2x the window
        d = _cpu(lambda t, j, req=req: _throttled_reader(t, j, req))
        assert d.top.category is Category.READAHEAD_MISMATCH, (req, d.causes[:3])
        assert d.top.target == "loop0"


def test_a_chronic_small_window_cites_the_request_rate_it_costs() -> None:
    # No healthy past, so the request rate never "rose"; it is still the figure a request cap limits.
    d = _cpu(_throttled_reader)
    assert d.top.category is Category.READAHEAD_MISMATCH
    assert {"io.loop0.avg_req_kb", "io.loop0.read_iops"} <= {e.metric for e in d.top.evidence}


def test_a_device_at_its_class_latency_with_no_healthy_past_is_not_slow() -> None:
    d = _cpu(_throttled_reader)
    storage = next(c for c in d.causes if c.category is Category.STORAGE_LATENCY)
    assert storage.target != "vda" or storage.confidence < 0.2, storage


def test_a_slow_nvme_device_is_slow_against_its_class() -> None:
    host = HostInfo(cpus=2, gpus=0, block_devices=["nvme0n1"])

    def slow(t: int, j: Jitter) -> dict[str, float]:
        return {
            "trainer.job.data_wait_frac": j(0.7),
            "trainer.job.samples_per_s": j(900.0),
            "io.nvme0n1.avg_req_kb": j(256.0),
            "io.nvme0n1.read_iops": j(600.0),
            "io.nvme0n1.read_kbps": j(600.0 * 256),
            "io.nvme0n1.lat_p99_us": j(6000.0),
            "io.nvme0n1.lat_p50_us": j(2500.0),
            "psi.io.some_avg10": j(60.0),
            "cpu.util_pct": j(20.0),
        }

    d = diagnose_jittered(40, 3, slow, host, knobs={"block.read_ahead_kb@nvme0n1": 4096}, jobs=list(JOB))
    assert d.top.category is Category.STORAGE_LATENCY and d.top.target == "nvme0n1", d.causes[:3]


def test_a_flush_already_under_way_is_not_a_write_burst() -> None:
    def staged(t: int, j: Jitter) -> dict[str, float]:
        m = _throttled_reader(t, j, 135.0)
        # 928 MiB left dirty by writing the data set just before, flushing away over the window.
        m["mem.dirty_mib"] = max(5.0, 928.0 - 24.0 * t)
        m["mem.writeback_mib"] = 60.0 if t < 35 else 2.0
        m["io.loop0.write_kbps"] = j(40000.0) if t < 35 else 0.0
        return m

    d = _cpu(staged)
    assert d.top.category is Category.READAHEAD_MISMATCH, d.causes[:3]
    assert rank_of(d, Category.WRITEBACK_BURST) > 2


def test_a_pile_that_grows_inside_the_window_is_a_burst() -> None:
    def burst(t: int, j: Jitter) -> dict[str, float]:
        m = _throttled_reader(t, j, 4096.0)
        m["io.loop0.avg_req_kb"] = m["io.vda.avg_req_kb"] = j(1024.0)
        healthy = t < 15
        m["trainer.job.data_wait_frac"] = j(0.02) if healthy else j(0.6)
        m["psi.io.some_avg10"] = j(1.0) if healthy else j(55.0)
        m["mem.dirty_mib"] = j(20.0) if healthy else j(1500.0)
        m["mem.writeback_mib"] = j(1.0) if healthy else j(300.0)
        m["io.loop0.write_kbps"] = 0.0 if healthy else j(150000.0)
        m["io.loop0.lat_p99_us"] = j(1500.0) if healthy else j(30000.0)
        return m

    d = _cpu(burst, knobs={"block.read_ahead_kb@loop0": 4096, "loader.workers@job": 2})
    assert d.top.category is Category.WRITEBACK_BURST, d.causes[:3]


def test_a_device_the_job_does_not_read_is_not_what_it_waits_on() -> None:
    host = HostInfo(cpus=8, gpus=0, block_devices=["vdb", "vdc"])

    def two(t: int, j: Jitter) -> dict[str, float]:
        healthy = t < 15
        return {
            "trainer.job.data_wait_frac": j(0.02) if healthy else j(0.5),
            "trainer.job.samples_per_s": j(1000.0) if healthy else j(500.0),
            "io.vdb.read_kbps": j(200000.0),
            "io.vdb.read_iops": j(800.0),
            "io.vdb.avg_req_kb": j(250.0),
            "io.vdb.lat_p99_us": j(900.0),
            # A disk nobody of the job reads from, answering slowly.
            "io.vdc.read_kbps": j(40.0),
            "io.vdc.read_iops": j(1.0),
            "io.vdc.avg_req_kb": j(40.0),
            "io.vdc.lat_p99_us": j(900.0) if healthy else j(40000.0),
            "cpu.util_pct": j(30.0),
        }

    d = diagnose_jittered(40, 5, two, host, knobs={"block.read_ahead_kb@vdb": 4096}, jobs=list(JOB))
    storage = next(c for c in d.causes if c.category is Category.STORAGE_LATENCY)
    assert storage.target != "vdc" or storage.confidence < 0.1, storage


def _busy_cpu(running: float) -> Callable[[int, Jitter], dict[str, float]]:
    def m(t: int, j: Jitter) -> dict[str, float]:
        return {
            "trainer.job.data_wait_frac": j(0.6),
            "trainer.job.samples_per_s": j(700.0),
            "cpu.util_pct": min(100.0, j(99.0)),
            "psi.cpu.some_avg10": j(60.0),
            "sched.runq_lat_p99_us": j(8000.0),
            "sched.job.runq_lat_p99_us": j(6000.0),
            "sched.procs_running": j(running),
        }

    return m


def test_cpu_contention_needs_someone_elses_runnable_work() -> None:
    own = _cpu(_busy_cpu(3.0))  # two loader workers and the main thread: the job's own work
    assert own.top.category is not Category.CPU_CONTENTION, own.causes[:3]
    hogs = _cpu(_busy_cpu(7.0))  # four more runnable tasks beside the job's three
    assert hogs.top.category is Category.CPU_CONTENTION, hogs.causes[:3]


def test_causes_without_their_figures_are_marked_not_judged() -> None:
    d = _cpu(_throttled_reader)  # a CPU trainer: no GPU figures at all
    gpu_side = {
        Category.GPU_POWER_THROTTLE,
        Category.GPU_THERMAL_THROTTLE,
        Category.PCIE_BOTTLENECK,
        Category.COMM_WAIT,
        Category.HOST_OVERHEAD,
    }
    for c in d.causes:
        if c.category in gpu_side:
            assert not c.judged and c.confidence == 0.0 and c.summary.startswith("not judged"), c
    held = {
        Category.READAHEAD_MISMATCH,
        Category.STORAGE_LATENCY,
        Category.WRITEBACK_BURST,
        Category.CPU_CONTENTION,
        Category.DATALOADER_STARVATION,
        Category.NONE,
    }
    assert all(c.judged for c in d.causes if c.category in held)
    assert not next(c for c in d.causes if c.category is Category.NUMA_REMOTE).judged  # no numa figure
    # Without the hook and without GPUs, nothing says whether the loader starves.
    samples = [
        Sample(
            t=float(t),
            m={k: v for k, v in _throttled_reader(t, lambda x: x).items() if not k.startswith("trainer.")},
        )
        for t in range(40)
    ]
    w = Window(samples=samples)
    from agent.diagnosis.engine import diagnose

    blind = diagnose(w, build_report(w, CPU_HOST, knobs={"block.read_ahead_kb@loop0": 128}))
    starve = next(c for c in blind.causes if c.category is Category.DATALOADER_STARVATION)
    assert not starve.judged and starve.confidence == 0.0


def test_a_job_training_on_the_cpu_gets_loader_workers_up_to_its_cores() -> None:
    def starving(t: int, j: Jitter) -> dict[str, float]:
        return {
            "trainer.job.data_wait_frac": j(0.8),
            "trainer.job.samples_per_s": j(1200.0),
            "cpu.util_pct": j(55.0),
            "psi.cpu.some_avg10": j(2.0),
        }

    knobs = {"loader.workers@job": 0, "loader.prefetch_factor@job": 2}
    jobs = [JobInfo(name="job", gpus=[], loader_workers=0)]
    samples = [Sample(t=float(t), m=starving(t, lambda x: x)) for t in range(40)]
    w = Window(samples=samples)
    report = build_report(w, HostInfo(cpus=2, gpus=0), knobs=dict(knobs), jobs=jobs)
    from agent.diagnosis.engine import diagnose

    d = diagnose(w, report)
    assert d.top.category is Category.DATALOADER_STARVATION
    [a] = RuleProposer(load_policies([])).propose(report, d).actions
    assert (a.primitive, a.value) == ("loader.workers", 2)  # both cores: no GPU to keep one free for


def _report_and_diagnosis(
    metrics: Callable[[int, Jitter], dict[str, float]],
    knobs: dict[str, int | float | str],
    jobs: list[JobInfo],
    host: HostInfo,
) -> tuple[HealthReport, Diagnosis]:
    from agent.diagnosis.engine import diagnose

    samples = [Sample(t=float(t), m=metrics(t, lambda x: x)) for t in range(40)]
    w = Window(samples=samples)
    report = build_report(w, host, knobs=dict(knobs), jobs=jobs)
    return report, diagnose(w, report)


def test_a_job_whose_own_loaders_fill_the_cores_is_not_starved_or_oversubscribed() -> None:
    """Two workers and the trainer on two cores, the CPU saturated by them: compute-bound, `none`."""

    def own(t: int, j: Jitter) -> dict[str, float]:
        return {
            "trainer.job.data_wait_frac": j(0.66),
            "trainer.job.samples_per_s": j(1700.0),
            "cpu.util_pct": min(100.0, j(99.5)),
            "psi.cpu.some_avg10": j(66.0),
            "sched.runq_lat_p99_us": j(7500.0),
            "sched.job.runq_lat_p99_us": j(150.0),  # the job's threads run promptly: they own the cores
            "sched.procs_running": j(3.0),
            "psi.io.some_avg10": j(0.5),
        }

    d = _cpu(own)
    assert d.top.category is Category.NONE, d.causes[:3]
    # The same job with one worker and half the CPU idle is starved.

    def half_idle(t: int, j: Jitter) -> dict[str, float]:
        return {
            **own(t, j),
            "cpu.util_pct": j(52.0),
            "psi.cpu.some_avg10": j(2.0),
            "sched.procs_running": j(2.0),
        }

    starved = _cpu(half_idle, knobs={"block.read_ahead_kb@loop0": 4096, "loader.workers@job": 1})
    assert starved.top.category is Category.DATALOADER_STARVATION, starved.causes[:3]


def test_small_requests_are_no_cause_when_io_does_not_explain_the_wait() -> None:
    """128 KB requests with read_ahead_kb 128, but tasks stall on I/O 4 % of the time while the
    trainer waits 78 %: the loaders are short of CPU, not of reads."""

    def cpu_bound(t: int, j: Jitter) -> dict[str, float]:
        m = _throttled_reader(t, j, 128.0)
        m.update(
            {"trainer.job.data_wait_frac": j(0.78), "psi.io.some_avg10": j(3.6), "cpu.util_pct": j(99.0)}
        )
        m["io.loop0.lat_p99_us"] = m["io.vda.lat_p99_us"] = j(900.0)
        return m

    d = _cpu(cpu_bound)
    ra = next(c for c in d.causes if c.category is Category.READAHEAD_MISMATCH)
    assert ra.confidence < 0.1 and d.top.category is not Category.READAHEAD_MISMATCH, d.causes[:3]


def test_reads_slowed_by_a_write_flood_point_at_the_flood() -> None:
    """Healthy reads with read_ahead_kb 128, then a checkpoint floods the same device mid-window."""

    def flood(t: int, j: Jitter) -> dict[str, float]:
        m = _throttled_reader(t, j, 135.0)
        healthy = t < 18
        m["trainer.job.data_wait_frac"] = j(0.02) if healthy else j(0.5)
        m["psi.io.some_avg10"] = j(1.0) if healthy else j(14.0)
        m["mem.dirty_mib"] = j(3.0) if healthy else j(1100.0)
        m["mem.writeback_mib"] = j(0.5) if healthy else j(200.0)
        m["io.loop0.write_kbps"] = 0.0 if healthy else j(1.5e6)
        m["io.loop0.avg_req_kb"] = j(135.0) if healthy else j(224.0)
        return m

    d = _cpu(flood)
    assert d.top.category is Category.WRITEBACK_BURST, d.causes[:3]


def test_larger_requests_take_longer_on_a_healthy_device() -> None:
    from agent.diagnosis.rules_io import class_latency

    (p99_small, _), _ = class_latency("vda", 128.0)
    (p99_large, _), _ = class_latency("vda", 4096.0)
    assert p99_large - p99_small == (4096.0 - 128.0) / 0.5
    (nvme, _), _ = class_latency("nvme0n1", 4096.0)
    assert nvme < p99_large


def test_cgroup_reclaim_seen_from_procfs_alone_gets_the_no_op() -> None:
    """Evicted pages read back at 12,000/s while the host's kswapd and direct reclaim scan nothing."""

    def thrash(t: int, j: Jitter) -> dict[str, float]:
        return {
            "trainer.job.data_wait_frac": j(0.9),
            "trainer.job.samples_per_s": j(770.0),
            "io.loop0.read_kbps": j(49000.0),
            "io.loop0.read_iops": j(380.0),
            "io.loop0.avg_req_kb": j(128.0),
            "mem.refaults_per_s": j(12200.0),
            "mem.pgscan_kswapd_per_s": 0.0,
            "mem.pgscan_direct_per_s": 0.0,
            "mem.available_mib": j(23000.0),
            "psi.io.some_avg10": j(70.0),
            "cpu.util_pct": j(40.0),
        }

    report, d = _report_and_diagnosis(thrash, KNOBS, list(JOB), CPU_HOST)
    assert d.top.category is Category.MEMORY_RECLAIM, d.causes[:3]
    p = RuleProposer(load_policies([])).propose(report, d)
    assert p.actions == [] and p.noop_reason and "cgroup" in p.noop_reason


def test_no_deeper_prefetch_for_a_trainer_that_waits_most_of_the_time() -> None:
    """Buffers ride out slow stretches; a device that cannot keep up on average gets no knob."""

    def slow(t: int, j: Jitter, wait: float) -> dict[str, float]:
        return {
            "trainer.job.data_wait_frac": j(0.02) if t < 15 else j(wait),
            "trainer.job.samples_per_s": j(1000.0) if t < 15 else j(1000.0 * (1 - wait)),
            "io.vdb.avg_req_kb": j(1024.0),
            "io.vdb.read_iops": j(150.0),
            "io.vdb.read_kbps": j(150.0 * 1024),
            "io.vdb.lat_p99_us": j(1500.0) if t < 15 else j(40000.0),
            "io.vdb.lat_p50_us": j(600.0) if t < 15 else j(15000.0),
            "psi.io.some_avg10": j(1.0) if t < 15 else j(60.0),
            "cpu.util_pct": j(20.0),
        }

    host = HostInfo(cpus=8, gpus=0, block_devices=["vdb"])
    knobs = {"block.read_ahead_kb@vdb": 4096, "loader.workers@job": 2, "loader.prefetch_factor@job": 2}
    for wait, acts in ((0.35, True), (0.8, False)):
        report, d = _report_and_diagnosis(lambda t, j, w=wait: slow(t, j, w), knobs, list(JOB), host)
        assert d.top.category is Category.STORAGE_LATENCY, (wait, d.causes[:3])
        p = RuleProposer(load_policies([])).propose(report, d)
        assert bool(p.actions) is acts, (wait, p)


def test_a_window_the_policy_would_leave_alone_is_not_named_small() -> None:
    """1 MiB requests from a 1 MiB window on a busy device: the policy raises windows below 1 MiB only."""

    def big(t: int, j: Jitter) -> dict[str, float]:
        m = _throttled_reader(t, j, 819.0)
        m.update(
            {"trainer.job.data_wait_frac": j(0.32), "psi.io.some_avg10": j(6.6), "cpu.util_pct": j(86.0)}
        )
        return m

    d = _cpu(big, knobs={"block.read_ahead_kb@loop0": 1024, "loader.workers@job": 2})
    ra = next(c for c in d.causes if c.category is Category.READAHEAD_MISMATCH)
    assert d.top.category is not Category.READAHEAD_MISMATCH and ra.confidence < 0.1, d.causes[:3]
    small = _cpu(lambda t, j: _throttled_reader(t, j, 560.0), knobs={"block.read_ahead_kb@loop0": 512})
    assert small.top.category is Category.READAHEAD_MISMATCH, small.causes[:3]
