"""Rules for causes on the CPU side of the input pipeline: starvation, oversubscription,
contention, remote NUMA memory.

Every size relation is scaled by the host: loader workers are counted against cores,
run-queue latency is judged against the healthy past. Look-alikes: starvation leaves
CPU idle (too few workers to use it); oversubscription saturates the CPU with the
job's *own* workers; contention saturates it with someone else's work while the job
runs few workers.
"""

from __future__ import annotations

from agent.diagnosis.baseline import mean
from agent.diagnosis.fmt import fmt
from agent.diagnosis.rules_io import writeback_surge
from agent.diagnosis.signals import Finding, Signal, SpanView, best, gather, own_threads, ramp
from core.diagnosis import Evidence

# Loader workers per core from which a host whose trainer computes on its CPU (no GPU in use) counts
# as oversubscribed, and from which fully: see oversubscribed(). Six per core were measured to cost
# nothing; more were never measured, so the cause grows from there.
CPU_ONLY_CROWD = (6.0, 12.0)
# Runnable tasks the recording agent and the jobs' helper threads add on average: -0.03 to 1.25
# beyond the jobs' loader workers and main threads on the matrix's healthy hosts without a hog.
OWN_HELPERS = 1.0
# Others' runnable tasks per core from which they count as contention, and fully. First fit on
# rounds 1-8 of the matrix (2 cores): one hog in another group read 0.2-0.35 per core (the job ran
# as fast with another worker), two or more hogs beside the job 0.7 and up (it ran 16-95 % faster
# with more workers, its share of the CPU growing with its runnable tasks). Below the bound a
# starved loader's next worker wins a share of the busy cores (dataloader_starvation): one worker
# beside a hog in another group read 0.02-0.2 per core in all 12 recordings of it (rounds 8-56) and
# gained +58 to +90 % from a second worker. Refit on rounds 1-130 (every one scored by then, so a
# fit): beside readers of a fast device one hog in another group reads up to 0.75 per core, and up
# to 1.1 in a span (the kernel threads serving the reads run beside the job's own), while two or
# more hogs beside the job read 0.66-3.78 (median 2.15, 256 recordings). One foreign task on two
# cores is 0.5 per core, a job still left a core; from (0.35, 0.75) to (0.5, 0.9) the rules named
# 19 more recordings' cause first and none fewer (+3 and -1 actions, one fewer left alone; procfs
# alone +15 and none fewer; the spec's names alone count no runnable tasks). Anything from 0.45-0.55
# to 0.8-1.0 names 16-22 more and none fewer (`python -m evals.sweep
# agent.diagnosis.rules_cpu.FOREIGN_SHARE 0.35:0.75 0.5:0.9`). The first round recorded after it
# judges it.
FOREIGN_SHARE = (0.5, 0.9)
# The share of its data wait a job with loader workers spends asleep (asleep_share) below which the
# wait is the main thread's own batch handling, not starvation, and from which it fully counts. Fit
# on rounds 1-14 of the matrix: uncapped readers whose loaders keep up (a larger window moved
# nothing) sleep for 0.28-0.57 of their wait, healthy jobs with more workers than cores 0.47-0.83;
# every job starved with one worker for heavy preprocessing 0.96-0.99.
ASLEEP_SHARE = (0.5, 0.8)
# Points of CPU pressure (psi.cpu.some) beyond what the jobs' own threads can make (own_wait_share)
# from which others' work counts as contention, and fully. Fit on rounds 1-14 of the matrix (2 cores,
# 2 loader workers, no healthy stretch): two to six hogs beside the job read +55 to +82 points; every
# other recording -63 to +26 (healthy jobs beside a hog in another group, a memory hog, dirty pages
# or root-disk writes; checkpoint writers; capped readers: the recording agent, the jobs' helper
# threads and the kernel's flushers make the rest).
FOREIGN_PRESSURE = (30.0, 50.0)


def workers_per_core(v: SpanView) -> float | None:
    total = v.lay.total_workers
    return None if total is None else total / max(v.lay.cpus, 1)


def _workers_evidence(v: SpanView, score: float, lo: float, rule: str) -> Signal:
    total = v.lay.total_workers
    if total is None or score <= 0.0:
        return Signal(score)
    return Signal(
        score,
        [
            Evidence(
                metric="loader.workers",
                observed=float(total),
                baseline=float(v.lay.cpus),
                threshold=lo * v.lay.cpus,
                rule=rule,
                t_start=None,
            )
        ],
    )


def oversubscribed(v: SpanView) -> Signal:
    """Loader workers beyond the cores left once each GPU's training process has one (the share the
    policy gives the loaders). One and a half workers per core is a full host, not an oversubscribed
    one: measured on a 2-core host, lowering 3 workers to 2 lifted samples/s by 12-17 %
    (real-healthy-ra512-uncapped-w3's setup) and by 12-13 % (`python -m evals.workers
    healthy-w3-p1-memhog 3,2`), under the 20 % that makes a cause. Twice as many as cores is
    oversubscribed.

    Where no GPU trains (the trainer computes on the same cores), the CPU a crowd of workers takes
    from the trainer is CPU the trainer's steps would have needed anyway: the work per sample is
    the same however it is split, and only the switching costs. Measured on a 2-core host with a
    CPU trainer (`python -m evals.workers healthy-w6-p1 6,3,2`): 6 workers against 3 and 2 cost
    nothing (-5 %, -3 %, within the runs' spread); `... healthy-w6-p1 12,3`: 12 against 3, -1 %.
    There the cause is counted from CPU_ONLY_CROWD."""
    total = v.lay.total_workers
    if total is None:
        return Signal.zero()
    cpus = max(v.lay.cpus, 1)
    gpus = v.lay.gpus_in_use
    demand = (total + gpus) / cpus
    lo, hi = (1.5, 2.0) if gpus else CPU_ONLY_CROWD
    return _workers_evidence(v, ramp(demand, lo, hi), lo, f"{total} loader workers for {cpus} cores")


def cpu_pressure(v: SpanView) -> tuple[Signal, Signal, Signal, Signal]:
    """(CPU saturated, run-queue latency up, CPU pressure up, context switches up)."""
    return v.memo(("cpu_pressure", ""), lambda: _cpu_pressure(v))


def _cpu_pressure(v: SpanView) -> tuple[Signal, Signal, Signal, Signal]:
    sat = v.absolute("cpu.util_pct", 80.0, 95.0, "host CPU busy share")
    runq = best(
        [v.up("sched.runq_lat_p99_us", (3.0, 12.0), (200.0, 1500.0), "host run-queue latency p99")]
        + [
            v.up(n, (3.0, 12.0), (200.0, 1500.0), f"run-queue latency p99 of {j}")
            for j, n in v.job_names("sched.<job>.runq_lat_p99_us")
        ]
    )
    psi = v.up("psi.cpu.some_avg10", (2.0, 6.0), (8.0, 30.0), "CPU pressure", prior=0.0)
    ctx = v.up("sched.ctx_switches_per_s", (1.5, 4.0), None, "context switches")
    return sat, runq, psi, ctx


def job_delayed(v: SpanView) -> float | None:
    """0..1: the jobs' own threads wait for a CPU (their run-queue latency rose); None unmeasured."""
    signals = [
        v.up(n, (3.0, 12.0), (200.0, 1500.0), f"run-queue latency p99 of {j}")
        for j, n in v.job_names("sched.<job>.runq_lat_p99_us")
    ]
    return best(signals).score if signals else None


def dataloader_starvation(v: SpanView) -> Finding:
    ex = v.data_wait_excess()
    # Without trainer figures the GPUs idling is the only sign of waiting, and a weak one.
    data = v.data_side() if ex is not None else 0.5 * ramp(v.util_drop(), 0.05, 0.3)
    if data <= 0.0:
        return Finding.none_found("the trainer did not wait for data")
    wait = best(
        v.up(n, (1.5, 3.0), (0.08, 0.25), f"data-wait share of {j}", prior=0.03)
        for j, n in v.job_names("trainer.<job>.data_wait_frac")
    )
    cpu = v.level("cpu.util_pct") if v.frame.has("cpu.util_pct") else float("nan")
    idle = ramp(cpu, 92.0, 70.0) if cpu == cpu else 0.5
    # What matters is CPU the job could have: a host kept busy by others while the job's
    # threads still run promptly (its run-queue latency stayed low) withholds none of it. Unless
    # the job's own threads (its workers, and its main threads while awake: own_demand) are enough
    # to fill every core: then the busy CPU may well be the job's own, and another worker would
    # find no idle core.
    delayed = job_delayed(v)
    fills = own_fill_cores(v)
    if delayed is not None and not fills:
        idle = max(idle, 1.0 - ramp(delayed, 0.1, 0.4))
    # Nor does a little of others' work, less than contention counts (FOREIGN_SHARE), that keeps
    # the cores busy beside a job with cores' worth of room for its own threads: a fair scheduler
    # splits the cores among runnable tasks, so another worker wins a share from it, however long
    # the job's threads sometimes wait for a core (their run-queue latency p99 swings from normal
    # to far above it between repeats of one such host).
    share = foreign_share(v)
    if share is not None and not fills:
        idle = max(idle, 1.0 - ramp(share, *FOREIGN_SHARE))
    wr = workers_per_core(v)
    few = _workers_evidence(
        v,
        ramp(wr, 0.3, 0.05) if wr is not None else 0.0,
        0.3,
        f"{v.lay.total_workers} loader workers for {v.lay.cpus} cores",
    )
    few_score = few.score if wr is not None else 0.4
    off = best(
        v.up(n, (1.2, 1.8), (0.4, 0.7), f"main thread of {j} off-CPU", prior=0.3)
        for j, n in v.job_names("sched.<job>.offcpu_frac")
    )
    # Starvation leaves CPU idle; a saturated CPU points at contention or oversubscription, or,
    # when the job's own threads fill the cores, at a job bound by its CPU: more workers would
    # find no core to run on.
    floor = 0.1 if fills else 0.3
    score = data * (0.4 + 0.35 * few_score + 0.25 * off.score) * (floor + (1.0 - floor) * idle)
    asleep = asleep_share(v)
    if asleep is not None:
        score *= ramp(asleep, *ASLEEP_SHARE)
    return Finding(
        score,
        "the trainer waits for batches while the CPU has idle share: "
        + (
            f"too few loader workers ({v.lay.total_workers} for {v.lay.cpus} cores)"
            if few.score >= 0.5
            else "the loader workers cannot prepare batches fast enough"
        ),
        gather(wait, few, off),
        target=_busiest_job(v),
        weight=wait.weight,
    )


def asleep_share(v: SpanView) -> float | None:
    """The share of its data wait the busiest job's main thread spent asleep (its off-CPU share over
    its data-wait share), where the job has loader workers and both are measured; else None.

    A trainer with loader workers that waits for them sleeps on their queue. Data wait spent on a
    CPU is the main thread's own batch handling (receiving, unpickling, collating, pinning), which
    more workers do not shorten. Without workers the main thread loads the data itself, on its CPU,
    and this says nothing."""
    job = _busiest_job(v)
    if job is None or not v.lay.total_workers:
        return None
    wait, off = v.level(f"trainer.{job}.data_wait_frac"), v.level(f"sched.{job}.offcpu_frac")
    if wait != wait or off != off or wait <= 0.0:
        return None
    return min(1.0, off / wait)


def loader_oversubscription(v: SpanView) -> Finding:
    over = oversubscribed(v)
    if over.score <= 0.0:
        return Finding.none_found("loader workers do not outnumber the cores")
    sat, runq, psi, ctx = cpu_pressure(v)
    pressure = 0.35 * sat.score + 0.35 * runq.score + 0.15 * psi.score + 0.15 * ctx.score
    score = over.score * (0.2 + 0.8 * pressure)
    return Finding(
        score,
        f"{v.lay.total_workers} loader workers crowd {v.lay.cpus} cores and delay the trainer's own threads",
        gather(over, runq, sat, psi, ctx),
        target=_busiest_job(v),
        weight=runq.weight if runq.score else 1.0,
    )


def cpu_contention(v: SpanView) -> Finding:
    sat, runq, psi, ctx = cpu_pressure(v)
    if max(runq.score, psi.score) <= 0.0:
        # A busy CPU that still schedules the trainer promptly is not a cause.
        return Finding.none_found("the CPU may be busy but run-queue latency and CPU pressure stayed normal")
    share = foreign_share(v)
    foreign = Signal.zero()
    if share is None and own_fill_cores(v) and not v.lost.ref:
        # A job whose own threads can keep every core busy saturates the CPU, backs up its run queue
        # and raises CPU pressure by itself. Whether someone else's work takes a share shows in a
        # count of runnable tasks beside the job's own, as a rise over a healthy stretch, or as CPU
        # pressure the job's threads cannot make (foreign_pressure); without any of them (a recorder
        # of the spec's names alone, a chronic window) the window cannot tell contention from a job
        # bound by its own CPU.
        foreign = foreign_pressure(v)
        if foreign.score <= 0.0:
            return Finding.not_judged(
                f"the job's own threads ({v.lay.total_workers} loader workers and its main thread) can keep "
                f"all {v.lay.cpus} cores busy, and the window counts no runnable tasks beside them, holds "
                "no healthy stretch to compare with, and shows no more CPU pressure than they can make: "
                "whose work fills the CPU cannot be told"
            )
    rise = v.up("cpu.util_pct", (1.2, 1.8), (80.0, 95.0), "host CPU busy share")
    over = oversubscribed(v)
    score = 0.25 * sat.score + 0.3 * runq.score + 0.3 * psi.score + 0.15 * rise.score
    score *= (
        ramp(max(runq.score, psi.score), 0.1, 0.4) * (1.0 - 0.85 * over.score) * (0.4 + 0.6 * v.data_side())
    )
    score *= 1.0 - 0.75 * _busy_with_writeback(v)
    # Contention means the job's own threads wait for a CPU. Where their run-queue latency is
    # measured and stays low, the backed-up queue is other tasks waiting on each other (or on
    # a job that holds its cores), and the job's lost work has another cause.
    delayed = job_delayed(v)
    if delayed is not None:
        score *= ramp(delayed, 0.1, 0.4)
    # Someone else's work: where runnable tasks are counted, more of them than the jobs' own
    # threads (their loader workers and main threads) compete for the cores. The recording agent
    # and a job's helper threads (pin-memory, the hook) make up to about one runnable task of their
    # own on average (OWN_HELPERS). What is left is others' share of the cores: contention from
    # FOREIGN_SHARE[0], fully at FOREIGN_SHARE[1].
    if share is not None:
        score *= ramp(share, *FOREIGN_SHARE)
    elif foreign.evidence:
        score *= foreign.score
    return Finding(
        score,
        "other work takes the CPU: the run queue backs up and the trainer's loaders wait for cores",
        gather(foreign, runq, psi, sat, rise, ctx),
        weight=max(runq.weight, psi.weight),
    )


def own_demand(v: SpanView) -> float | None:
    """The cores the jobs' own threads could keep busy: every loader worker, and each main thread
    for the share of time it was not asleep (its off-CPU share, where measured; else all of it);
    None when the workers are not known."""
    total = v.lay.total_workers
    if total is None:
        return None
    offs = [v.level(f"sched.{j}.offcpu_frac") for j in v.lay.jobs]
    return total + (sum(1.0 - off if off == off else 1.0 for off in offs) if offs else 1.0)


def own_wait_share(v: SpanView) -> float | None:
    """The largest share of time (0..1) the jobs' own threads alone could keep a task waiting for a
    CPU, which is what CPU pressure (`psi.cpu.some`) measures: workers taken as always runnable,
    each main thread runnable for the share of time it was not asleep (its off-CPU share; all of
    it where not measured), the main threads independent of each other. Workers that outnumber the
    cores keep one waiting all the time (1.0); workers that fill them, only while a main thread is
    awake. None when the workers are not known."""
    total = v.lay.total_workers
    if total is None:
        return None
    awake = [
        1.0 - off if off == off else 1.0 for off in (v.level(f"sched.{j}.offcpu_frac") for j in v.lay.jobs)
    ]
    # dist[k]: the chance that k main threads are runnable at once.
    dist = [1.0]
    for a in awake or [1.0]:
        dist = [
            (dist[k] if k < len(dist) else 0.0) * (1.0 - a) + (dist[k - 1] * a if k else 0.0)
            for k in range(len(dist) + 1)
        ]
    return sum(p for k, p in enumerate(dist) if total + k > max(v.lay.cpus, 1))


def foreign_pressure(v: SpanView) -> Signal:
    """CPU pressure beyond what the jobs' own threads can make (own_wait_share): someone else's
    runnable tasks. Counted from FOREIGN_PRESSURE[0] points above that bound, fully from
    FOREIGN_PRESSURE[1]. Zero where the pressure or the bound is not known, or the jobs' workers
    alone can keep a task waiting all the time."""
    bound = own_wait_share(v)
    pressure = v.pressure("psi.cpu.some_avg10")
    if bound is None or bound >= 1.0 or pressure != pressure:
        return Signal.zero()
    excess = pressure - 100.0 * bound
    score = ramp(excess, *FOREIGN_PRESSURE)
    if score <= 0.0:
        return Signal.zero()
    return Signal(
        score,
        [
            Evidence(
                metric="psi.cpu.some_avg10",
                observed=pressure,
                baseline=100.0 * bound,
                threshold=100.0 * bound + FOREIGN_PRESSURE[0],
                rule=f"CPU pressure beyond the {fmt(100.0 * bound)}% the job's own threads can make",
                t_start=None,
            )
        ],
    )


def own_fill_cores(v: SpanView) -> bool:
    """The jobs' own threads can keep every core busy (own_demand); False when the workers are not
    known."""
    demand = own_demand(v)
    return demand is not None and demand >= v.lay.cpus


def others_running(v: SpanView) -> float | None:
    """Runnable tasks beyond the jobs' own threads, on average over the span; None when runnable
    tasks or the workers are not known. The count is a snapshot of whole tasks each interval, so
    its mean, not its median, is what the span held: a median of integers jumps a whole task."""
    own = own_threads(v)
    running = v.frame.at("sched.procs_running", v.span.idx)
    if not running or own is None:
        return None
    return mean(running) - own


def foreign_share(v: SpanView) -> float | None:
    """Others' runnable tasks per core: those beside the jobs' own threads (others_running) less the
    recording agent's and the jobs' helper threads' own (OWN_HELPERS); None when not counted."""
    others = others_running(v)
    return None if others is None else (others - OWN_HELPERS) / max(v.lay.cpus, 1)


def _busy_with_writeback(v: SpanView) -> float:
    """0..1: the CPU is busy writing a flood of dirty pages while tasks stall on I/O.

    Filling the page cache (the writer's copies) and flushing it (flusher threads, and
    whatever stacked driver sits below: loop, dm-crypt, compression) costs CPU, most
    visibly on a small host. When a dirty-page surge comes with tasks stalled on I/O,
    the busy CPU is the burst's own work, and the burst is the cause that explains both.
    """
    dirty, wb, _ = writeback_surge(v)
    surge = max(dirty.score, wb.score)
    if surge <= 0.0:
        return 0.0
    io = v.up("psi.io.some_avg10", (3.0, 10.0), (10.0, 40.0), "I/O pressure", prior=1.0)
    return surge * io.score


def numa_remote(v: SpanView) -> Finding:
    remote = v.up(
        "numa.remote_frac", (2.5, 6.0), (0.12, 0.35), "share of memory accesses to a remote node", prior=0.05
    )
    if remote.score <= 0.0:
        return Finding.none_found("memory accesses stayed on the local NUMA node")
    # On a single-node host a remote share is a measuring artefact more likely than a cause.
    nodes = 1.0 if v.lay.numa_nodes >= 2 else 0.4
    score = remote.score * nodes * (0.8 + 0.2 * max(v.data_side(), v.util_drop()))
    x = v.level("numa.remote_frac")
    return Finding(
        score,
        f"loaders or the trainer run far from their memory: {fmt(x * 100)}% of accesses go to a remote node",
        gather(remote),
        weight=remote.weight,
    )


def _busiest_job(v: SpanView) -> str | None:
    jobs = v.job_names("trainer.<job>.data_wait_frac")
    if not jobs:
        return v.lay.jobs[0] if v.lay.jobs else None
    return max(jobs, key=lambda jn: v.level(jn[1]) if v.level(jn[1]) == v.level(jn[1]) else -1.0)[0]
