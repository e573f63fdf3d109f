"""Rules for causes on the GPU side: power and thermal throttling, PCIe, collectives, host overhead.

These share "GPUs did less while the input was ready". Throttles are told apart by the
NVML clock-event reason bits and by what runs hot: power sits at its limit, heat shows
in the temperature. A saturated PCIe link shows as host-to-device traffic near the link's
capacity. What is left is either collectives (several GPUs, the trainer's main thread
waiting, no host-side anomaly) or host overhead (the main thread busy on the CPU and
still not launching work fast enough).
"""

from __future__ import annotations

from agent.diagnosis.fmt import fmt
from agent.diagnosis.signals import Finding, Signal, SpanView, best, gather, ramp
from core.diagnosis import Evidence

# NVML clocks event reasons (nvmlClocksEventReason*).
SW_POWER_CAP = 0x4
HW_SLOWDOWN = 0x8
SW_THERMAL = 0x20
HW_THERMAL = 0x40
HW_POWER_BRAKE = 0x80
POWER_BITS = SW_POWER_CAP | HW_POWER_BRAKE
THERMAL_BITS = SW_THERMAL | HW_THERMAL

# Usable host-to-device bandwidth of an x16 link per PCIe generation, KB/s (NVML reports
# KB/s); about 80% of the raw rate once protocol overhead is paid.
_GEN_KBPS = {3: 12.6e6, 4: 25.2e6, 5: 50.4e6}
# GPU families by the PCIe generation they ship with; unknown models are assumed Gen4,
# the common case, so a Gen3 link saturates "early" rather than never.
_MODEL_GEN = (
    ("B200", 5),
    ("B100", 5),
    ("H200", 5),
    ("H100", 5),
    ("GH200", 5),
    ("H20", 5),
    ("RTX 50", 5),
    ("V100", 3),
    ("T4", 3),
    ("P100", 3),
    ("P40", 3),
)


def link_capacity_kbps(model: str | None) -> float:
    if model:
        up = model.upper()
        for prefix, gen in _MODEL_GEN:
            if prefix in up:
                return _GEN_KBPS[gen]
    return _GEN_KBPS[4]


def _bits_frac(v: SpanView, gpu: int, mask: int) -> float:
    vals = v.frame.at(f"gpu.{gpu}.clock_event_reasons", v.span.idx)
    if not vals:
        return 0.0
    return sum(1 for x in vals if int(x) & mask) / len(vals)


def _bits_signal(v: SpanView, gpu: int, frac: float, what: str) -> Signal:
    if frac <= 0.0:
        return Signal.zero()
    name = f"gpu.{gpu}.clock_event_reasons"
    base = v.frame.at(name, v.lost.ref)
    ev = Evidence(
        metric=name,
        observed=float(int(max(v.frame.at(name, v.span.idx)))),
        baseline=float(int(max(base))) if base else None,
        threshold=None,
        rule=f"{what} reason bits set during the lost work",
        t_start=v.span.t_start,
    )
    return Signal(ramp(frac, 0.1, 0.6), [ev])


def _clock_down(v: SpanView, gpu: int) -> Signal:
    clk, mx = f"gpu.{gpu}.sm_clock_mhz", f"gpu.{gpu}.sm_clock_max_mhz"
    if not (v.frame.has(clk) and v.frame.has(mx)):
        return Signal.zero()
    maxv = v.level(mx)
    sig = v.down(clk, (0.95, 0.8), (0.96 * maxv, 0.8 * maxv), f"SM clock of GPU {gpu}", prior=maxv)
    if v.chronic or sig.score > 0:
        return sig
    # Healthy past throttled too: judge the clock against its maximum instead.
    return v.absolute(clk, 0.96 * maxv, 0.8 * maxv, f"SM clock of GPU {gpu} against its maximum", prior=maxv)


def _hot(v: SpanView, gpu: int) -> Signal:
    name = f"gpu.{gpu}.temp_c"
    return best(
        [
            v.absolute(name, 80.0, 90.0, f"temperature of GPU {gpu}"),
            v.up(name, (1.15, 1.4), (75.0, 87.0), f"temperature of GPU {gpu}"),
        ]
    )


def _power_near_limit(v: SpanView, gpu: int) -> Signal:
    pw, lim = f"gpu.{gpu}.power_w", f"gpu.{gpu}.power_limit_w"
    if not (v.frame.has(pw) and v.frame.has(lim)):
        return Signal.zero()
    limit = v.level(lim)
    return v.absolute(pw, 0.85 * limit, 0.97 * limit, f"power of GPU {gpu} against its limit")


def gpu_power_throttle(v: SpanView) -> Finding:
    found = Finding.none_found("no GPU ran clocked down against its power limit")
    for g in v.lay.gpus:
        hot = _hot(v, g)
        near = _power_near_limit(v, g)
        power_frac = _bits_frac(v, g, POWER_BITS)
        # HW slowdown alone is ambiguous; with the GPU cool and at its power limit it is power.
        slow_frac = _bits_frac(v, g, HW_SLOWDOWN) * (1.0 - hot.score) * near.score
        bits = _bits_signal(v, g, max(power_frac, slow_frac), "power-cap")
        clock = _clock_down(v, g)
        lowered = v.down(f"gpu.{g}.power_limit_w", (0.95, 0.7), None, f"power limit of GPU {g}")
        thermal = ramp(_bits_frac(v, g, THERMAL_BITS), 0.1, 0.6)
        score = 0.4 * bits.score + 0.25 * near.score + 0.25 * clock.score + 0.1 * lowered.score
        score *= ramp(max(bits.score, near.score * clock.score), 0.1, 0.4) * (1.0 - 0.7 * thermal)
        if score > found.score:
            found = Finding(
                score,
                f"GPU {g} runs clocked down against its power limit",
                gather(bits, near, clock, lowered),
                target=str(g),
            )
    return found


def gpu_thermal_throttle(v: SpanView) -> Finding:
    found = Finding.none_found("no GPU ran clocked down for heat")
    for g in v.lay.gpus:
        hot = _hot(v, g)
        frac = max(_bits_frac(v, g, THERMAL_BITS), _bits_frac(v, g, HW_SLOWDOWN) * hot.score)
        bits = _bits_signal(v, g, frac, "thermal")
        clock = _clock_down(v, g)
        score = 0.4 * bits.score + 0.3 * hot.score + 0.3 * clock.score
        score *= ramp(max(bits.score, hot.score * clock.score), 0.1, 0.4)
        if score > found.score:
            found = Finding(
                score,
                f"GPU {g} runs clocked down for heat",
                gather(bits, hot, clock),
                target=str(g),
                weight=hot.weight,
            )
    return found


def pcie_bottleneck(v: SpanView) -> Finding:
    cap = link_capacity_kbps(v.lay.gpu_model)
    found = Finding.none_found("host-to-device traffic stayed well below the PCIe link's capacity")
    compute = v.compute_side()
    drop = ramp(v.util_drop(), 0.05, 0.3)
    for g, rx in v.gpu_names("gpu.<i>.pcie_rx_kbps"):
        # Capacity by model is a guess (a Gen5 GPU may sit in a Gen4 slot): traffic near a
        # Gen4 link is already unusual for training input and counts too.
        gen4 = v.absolute(rx, 0.6 * _GEN_KBPS[4], 0.9 * _GEN_KBPS[4], f"PCIe traffic into GPU {g}")
        near = v.absolute(
            rx, 0.45 * cap, 0.8 * cap, f"PCIe traffic into GPU {g} against the usable capacity of its link"
        )
        near = best([near, gen4])
        rise = v.up(rx, (2.0, 5.0), (0.2 * cap, 0.4 * cap), f"PCIe traffic into GPU {g}")
        lead = max(near.score, rise.score)
        score = (0.55 * max(near.score, 0.8 * rise.score) + 0.25 * compute + 0.2 * drop) * ramp(
            lead, 0.15, 0.45
        )
        if score > found.score:
            found = Finding(
                score,
                f"host-to-device copies fill the PCIe link of GPU {g} ({fmt(v.level(rx))} KB/s)",
                gather(near, rise),
                target=str(g),
                weight=rise.weight if rise.score else 1.0,
            )
    return found


def _compute_loss(v: SpanView) -> Signal:
    """GPUs idle while the input was ready: utilization or step time got worse, data wait did not."""
    util = best(
        v.down(n, (0.9, 0.6), (85.0, 60.0), f"utilization of GPU {g}", prior=90.0)
        for g, n in v.gpu_names("gpu.<i>.util_pct")
    )
    step = best(
        v.up(n, (1.15, 1.6), None, f"step time of {j}") for j, n in v.job_names("trainer.<job>.step_time_ms")
    )
    lost = max(util.score, step.score)
    return Signal(lost * v.compute_side(), gather(util, step))


def _main_thread_busy(v: SpanView) -> Signal:
    return best(
        best(
            [
                v.down(n, (0.6, 0.25), (0.2, 0.08), f"main thread of {j} off-CPU", prior=0.3),
                v.absolute(n, 0.12, 0.03, f"main thread of {j} off-CPU", prior=0.3),
            ]
        )
        for j, n in v.job_names("sched.<job>.offcpu_frac")
    )


def comm_wait(v: SpanView) -> Finding:
    lost = _compute_loss(v)
    if lost.score <= 0.0:
        return Finding.none_found("GPUs did not idle with input ready")
    # Collectives need peers; one GPU can only wait on other hosts, which is rarer.
    multi = 1.0 if v.lay.gpus_in_use >= 2 else 0.1
    power = best(v.down(n, (0.9, 0.6), None, f"power of GPU {g}") for g, n in v.gpu_names("gpu.<i>.power_w"))
    busy = _main_thread_busy(v)
    has_sched = bool(v.job_names("sched.<job>.offcpu_frac"))
    waiting = (1.0 - busy.score) if has_sched else 0.5
    # The main thread's state is the sharpest split from host overhead, so it scales, not adds.
    score = lost.score * (0.3 + 0.5 * multi + 0.2 * power.score) * (0.4 + 0.6 * multi) * (0.2 + 0.8 * waiting)
    return Finding(
        score,
        f"the {v.lay.gpus_in_use} GPUs idle together with input ready and the host calm: "
        "collectives across GPUs dominate the step",
        gather(lost, power),
        weight=lost.weight,
    )


def host_overhead(v: SpanView) -> Finding:
    lost = _compute_loss(v)
    if lost.score <= 0.0:
        return Finding.none_found("GPUs did not idle with input ready")
    busy = _main_thread_busy(v)
    has_sched = bool(v.job_names("sched.<job>.offcpu_frac"))
    busy_score = busy.score if has_sched else 0.4
    single = 1.0 if v.lay.gpus_in_use <= 1 else 0.5
    sat = v.absolute("cpu.util_pct", 85.0, 97.0, "host CPU busy share")
    score = lost.score * (0.5 + 0.25 * single + 0.25 * (1.0 - sat.score)) * (0.2 + 0.8 * busy_score)
    return Finding(
        score,
        "the trainer's own CPU-side code cannot launch GPU work fast enough: "
        "its main thread is busy on the CPU",
        gather(busy, lost),
        target=v.lay.jobs[0] if v.lay.jobs else None,
        weight=busy.weight if busy.score else 1.0,
    )
