"""What the duty cycle costs a context-switch-bound workload, measured inside one run.

At duty level the daemon's hot-path programs (scheduler switches and wakeups, block requests)
are attached `duty_on_s` in every `duty_period_s`. Their effect on a pipe ping-pong, about a
tenth of the always-on slowdown, drowns in this VM's round-to-round spread when separate runs
are compared (bench/overhead.py: the bare runs alone spread by tens of %). Here one run is
split instead: `idletune serve` runs at duty level (observe mode, the pressure trigger held off
as in bench/overhead.py) while the ping-pong, pinned to one CPU, counts its round trips per
50 ms slot; a thread pinned to the other CPU reads the run count of the daemon's eBPF programs
(/proc/PID/fdinfo, kernel.bpf_stats_enabled, which the daemon turns on) every 10 ms. A slot in
which the programs ran about as often as the ping-pong switched was measured attached; one in
which they did not run, detached. Within the same run, then:

- the hot path's share of the time (attached slots, partial ones by their share);
- the slowdown while attached: the attached slots' rate against the detached slots';
- their product: what the duty cycle's hot path costs the workload;
- the daemon's own CPU (share of one core), and the detached slots' rate against bare runs
  before and after (no daemon), beside the two bare runs' own difference: the rest of what
  the daemon costs, and how well separate runs can tell it.

Needs root. Prints figures only: timing on a shared machine is no pass/fail.

    .venv/bin/python bench/duty_split.py [--seconds 30] [--repeats 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import bisect
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make `bench` importable
    sys.path.insert(0, str(ROOT))

from bench.cost import cpu_s  # noqa: E402
from bench.figures import write_figures  # noqa: E402
from bench.overhead import DAEMON_SETTLE_S, IDLETUNE, PINGPONG_CPU, Attached, agent_config, daemon_level  # noqa: E402

POLL_S = 0.01
# A slot whose programs ran at least this share of the fully attached rate was measured
# attached; at most DETACHED, detached. Slots between (an attach or detach inside) are left out
# of the rates and counted by their share in the hot path's time.
ATTACHED, DETACHED = 0.9, 0.02


def prog_fdinfo(pid: int) -> list[Path]:
    """The fdinfo files of the eBPF programs a process holds."""
    out = []
    for fd in Path(f"/proc/{pid}/fdinfo").iterdir():
        try:
            if "prog_tag:" in fd.read_text():
                out.append(fd)
        except OSError:
            continue
    return out


def run_count(files: list[Path]) -> int:
    n = 0
    for f in files:
        try:
            for line in f.read_text().splitlines():
                if line.startswith("run_cnt:"):
                    n += int(line.split()[1])
        except OSError:
            continue
    return n


def pingpong_slots(seconds: float) -> list[tuple[float, int]]:
    out = subprocess.run(
        [sys.executable, "-m", "bench.workloads", "pingpong-slots", str(seconds), str(PINGPONG_CPU)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
        timeout=seconds + 60,
    ).stdout
    return [(float(t), int(n)) for t, n in json.loads(out)]


def rate(slots: list[tuple[float, int]]) -> float:
    """Round trips per second over a whole run."""
    return sum(n for _, n in slots[1:]) / (slots[-1][0] - slots[0][0])


def one_run(daemon_pid: int, seconds: float) -> dict[str, Any]:
    """One ping-pong run beside the daemon, split into attached and detached slots."""
    files = prog_fdinfo(daemon_pid)
    if not files:
        raise RuntimeError("the daemon holds no eBPF programs (is bcc installed, are we root?)")
    readings: list[tuple[float, int]] = []
    stop = threading.Event()

    def poll() -> None:
        if PINGPONG_CPU > 0:
            os.sched_setaffinity(0, set(range(PINGPONG_CPU)))  # this thread only: off the ping-pong's CPU
        while not stop.is_set():
            readings.append((time.monotonic(), run_count(files)))
            time.sleep(POLL_S)

    poller = threading.Thread(target=poll, daemon=True)
    c0 = cpu_s(daemon_pid)
    t0 = time.monotonic()
    poller.start()
    try:
        slots = pingpong_slots(seconds)
    finally:
        stop.set()
        poller.join()
    daemon_cores = (cpu_s(daemon_pid) - c0) / (time.monotonic() - t0)
    if run_count(files) == readings[0][1]:
        raise RuntimeError("the daemon's programs never ran: kernel.bpf_stats_enabled is off?")
    times = [t for t, _ in readings]

    def count_at(t: float) -> float:  # the run count at `t`, interpolated between readings
        i = bisect.bisect_left(times, t)
        if i <= 0:
            return readings[0][1]
        if i >= len(readings):
            return readings[-1][1]
        (ta, a), (tb, b) = readings[i - 1], readings[i]
        return a + (b - a) * (t - ta) / (tb - ta) if tb > ta else b

    per_slot = []  # (seconds, round trips, program runs per round trip)
    for (ta, _), (tb, n) in itertools.pairwise(slots):
        if ta < times[0] or tb > times[-1] or n == 0:
            continue
        per_slot.append((tb - ta, n, (count_at(tb) - count_at(ta)) / n))
    ratios = sorted(r for _, _, r in per_slot)
    full = ratios[int(0.97 * (len(ratios) - 1))]  # the fully attached rate: near the top, not the top
    shares = [(dt, n, min(r / full, 1.0)) for dt, n, r in per_slot]
    att = [(dt, n) for dt, n, s in shares if s >= ATTACHED]
    det = [(dt, n) for dt, n, s in shares if s <= DETACHED]
    if not att or not det:
        raise RuntimeError(
            f"no attached or no detached slots ({len(att)} / {len(det)}): is the daemon at duty level?"
        )
    r_att = sum(n for _, n in att) / sum(dt for dt, _ in att)
    r_det = sum(n for _, n in det) / sum(dt for dt, _ in det)
    total = sum(dt for dt, _, _ in shares)
    hot_share = sum(dt * s for dt, _, s in shares) / total
    attached_slowdown = 1 - r_att / r_det
    return {
        "hot_share_pct": 100 * hot_share,
        "attached_slowdown_pct": 100 * attached_slowdown,
        "hot_cost_pct": 100 * hot_share * attached_slowdown,
        "slots_attached": len(att),
        "slots_detached": len(det),
        "slots_partial": len(shares) - len(att) - len(det),
        "runs_per_round_trip": full,
        "detached_rate": r_det,
        "rate": rate(slots),
        "daemon_core_pct": 100 * daemon_cores,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=30.0, help="each ping-pong run")
    ap.add_argument("--repeats", type=int, default=3, help="runs beside the daemon, each between bare runs")
    ap.add_argument("--settle", type=float, default=DAEMON_SETTLE_S, help="seconds after the daemon starts")
    ap.add_argument("--json", type=Path, help="also write the figures to this file as JSON")
    a = ap.parse_args()
    if os.geteuid() != 0:
        print("bench/duty_split.py needs root (eBPF)", file=sys.stderr)
        return 1
    runs: list[dict[str, Any]] = []
    bare: list[float] = []
    levels: list[str] = []
    with tempfile.TemporaryDirectory(prefix="idletune-bench-") as tmp:
        (Path(tmp) / "state").mkdir(mode=0o755)
        os.environ["IDLETUNE_STATE_DIR"] = str(Path(tmp) / "state")
        config = agent_config(Path(tmp), "agent-duty", hold_off=True)
        pingpong_slots(2.0)  # untimed: the first run of a series is faster on this VM
        for i in range(a.repeats):
            bare.append(rate(pingpong_slots(a.seconds)))
            daemon = Attached([*IDLETUNE, "serve", "--config", str(config)], 15, config)
            try:
                if "http://" not in daemon.first:
                    raise RuntimeError(f"idletune serve did not start: {daemon.first.strip()}")
                time.sleep(a.settle)
                runs.append(one_run(daemon.proc.pid, a.seconds))
                levels.append(daemon_level(config))
            finally:
                daemon.stop()
            print(f"run {i + 1}/{a.repeats} done", file=sys.stderr, flush=True)
        bare.append(rate(pingpong_slots(a.seconds)))
    return report(runs, bare, levels, a)


def report(runs: list[dict[str, Any]], bare: list[float], levels: list[str], a: argparse.Namespace) -> int:
    med = statistics.median
    figures: dict[str, Any] = {"seconds": a.seconds, "repeats": a.repeats, "daemon_levels": levels}
    for key in ("hot_share_pct", "attached_slowdown_pct", "hot_cost_pct", "daemon_core_pct"):
        figures[key] = round(med(r[key] for r in runs), 2)
        figures[key + "_runs"] = [round(r[key], 2) for r in runs]
    # Each daemon run against the mean of the bare runs either side of it.
    rest = [100 * (1 - r["detached_rate"] / ((bare[i] + bare[i + 1]) / 2)) for i, r in enumerate(runs)]
    sides = [100 * abs(bare[i] - bare[i + 1]) / ((bare[i] + bare[i + 1]) / 2) for i in range(len(runs))]
    figures["detached_vs_bare_pct_runs"] = [round(x, 1) for x in rest]
    figures["bare_pair_diff_pct_runs"] = [round(x, 1) for x in sides]
    figures["slots"] = [[r["slots_attached"], r["slots_detached"], r["slots_partial"]] for r in runs]
    print(f"duty cycle on a pipe ping-pong, split inside each run: {a.repeats} runs of {a.seconds:g} s")
    print(f"  the daemon's level when measured: {', '.join(levels)}")
    f = figures
    print(f"  hot path attached: {f['hot_share_pct']:.1f} % of the time (runs: {f['hot_share_pct_runs']})")
    print(
        "  while attached, slower than the detached slots of the same run: "
        f"{f['attached_slowdown_pct']:.1f} % (runs: {f['attached_slowdown_pct_runs']})"
    )
    print(
        f"  the duty cycle's hot path costs the workload: {figures['hot_cost_pct']:.2f} % "
        f"(runs: {figures['hot_cost_pct_runs']})"
    )
    print(
        f"  the daemon's own CPU: {f['daemon_core_pct']:.2f} % of a core (runs: {f['daemon_core_pct_runs']})"
    )
    print(
        f"  detached slots against the bare runs either side: {rest and [round(x, 1) for x in rest]} %; "
        f"the two bare runs differ by {[round(x, 1) for x in sides]} %"
    )
    print(f"  slots (attached, detached, partial): {figures['slots']}")
    write_figures(a.json, "duty-split", figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
