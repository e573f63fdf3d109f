"""Overhead of idletune's eBPF collectors, next to bcc's own runqlat.

Two workloads, each run bare, with idletune's collectors attached (an agent
process collecting every second), with empty programs on the same tracepoints
(the floor: what attaching alone costs, before a program does any work), with
empty programs on the raw tracepoints of the same events (the floor of a
collector that read kernel structs instead), and with /usr/sbin/runqlat-bpfcc:
a pipe ping-pong (context-switch bound) and random 4 KiB O_DIRECT reads of a
loop device. An untimed bare run of each comes first (on this VM the first run
of a series is several percent faster than the rest, which would count as
overhead of whatever it is compared with). Conditions are interleaved, their
order rotated each round; the median per-round slowdown is printed, with the
agent's RSS while collecting. A last pass, with kernel.bpf_stats_enabled on
(restored after), runs each workload once per tracer and reads the run time of
the tracer's programs from /proc/PID/fdinfo: program time per operation.
Prints figures only: timing on a shared machine is no pass/fail.

    .venv/bin/python bench/overhead.py [--rounds 7] [--seconds 3] [--warmup 1]

`--trainer` measures a realistic workload instead: the testbed's PyTorch CPU trainer (the
`starvation` scenario's fixed phase: two loader workers, CPU-heavy preprocessing, both cores
busy at its own switch rate), its samples/s with no agent, with `idletune serve` in observe mode
on its duty cycle (a healthy host), and with the hot path on without a break (collection.duty
false: what a trigger costs). Conditions interleaved, order rotated each round; the median
per-round slowdown and the spread of the bare runs are printed.

    .venv/bin/python bench/overhead.py --trainer [--rounds 7] [--seconds 20]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make `agent` and `bpf` importable
    sys.path.insert(0, str(ROOT))

from bench.cost import cpu_s  # noqa: E402
from bench.figures import write_figures  # noqa: E402
from bench.workloads import loop_device, spawn  # noqa: E402
from bpf.loader import COLLECTORS  # noqa: E402

RUNQLAT = "/usr/sbin/runqlat-bpfcc"
# idletune: its eBPF collectors, always on (a trigger open); idletune-duty: the daemon itself,
# `idletune serve` in observe mode on its duty cycle (a healthy host: the pressure trigger the
# benchmark itself would open is held off, see agent_config).
CONDITIONS = ("none", "idletune", "idletune-duty", "floor", "floor-raw", "runqlat")
IDLETUNE = [sys.executable, "-c", "from agent.cli.main import main; main()"]
# After `serve` answers: its compile is over, the pressure's usual level known (5 samples) and
# the start-up's trigger past its linger (collection.linger_s, 30 s): the steady state.
DAEMON_SETTLE_S = 40.0
BPF_STATS = Path("/proc/sys/kernel/bpf_stats_enabled")
PINGPONG_CPU = (os.cpu_count() or 1) - 1


def rss_mb(pid: int | str = "self") -> tuple[float, float]:
    """(VmRSS, VmHWM) of a process in MiB."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line
    )
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024


def stop_on_signals() -> threading.Event:
    """An event that SIGTERM or SIGINT sets: how a tracer process is told to detach."""
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    return stop


def run_agent() -> int:
    """The agent side: all collectors, one collect per second, until SIGTERM/SIGINT."""
    from agent.sources.bpf_source import BpfSource

    stop = stop_on_signals()
    src = BpfSource(jobs=lambda: {"bench": [os.getppid()]})
    t0 = time.monotonic()
    st = src.start()
    start_s = time.monotonic() - t0
    print(json.dumps({"ready": st.live, "reason": st.reason}), flush=True)
    rss_max = 0.0
    try:
        while not stop.wait(1.0):
            src.collect()
            rss_max = max(rss_max, rss_mb()[0])
    finally:
        drops = src.drops()
        src.close()
    print(
        json.dumps({"start_s": start_s, "rss_mb": rss_max, "hwm_mb": rss_mb()[1], "drops": drops}), flush=True
    )
    return 0


def floor_source(raw: bool = False) -> str:
    """Programs that return at once, one on every tracepoint idletune's collectors attach to.

    With `raw`, on the raw tracepoints of the same events (what bcc's runqlat attaches to):
    no trace record is filled, the program gets the kernel's own arguments.
    """
    tps = {tp for spec in COLLECTORS.values() for tp in spec.tracepoints}
    tps |= {tp for spec in COLLECTORS.values() for f in spec.optional for tp in f.tracepoints}
    events = Path("/sys/kernel/tracing/events")
    present = sorted((tp.category, tp.event) for tp in tps if (events / tp.category / tp.event).is_dir())
    if raw:
        return "\n".join(f"RAW_TRACEPOINT_PROBE({event}) {{ return 0; }}" for _, event in present)
    return "\n".join(f"TRACEPOINT_PROBE({cat}, {event}) {{ return 0; }}" for cat, event in present)


def run_floor(raw: bool) -> int:
    """Attach the floor programs until SIGTERM/SIGINT."""
    from bcc import BPF

    stop = stop_on_signals()
    bpf = BPF(text=floor_source(raw))
    print(json.dumps({"ready": True}), flush=True)
    stop.wait()
    bpf.cleanup()
    print(json.dumps({}), flush=True)
    return 0


def program_ns(pid: int) -> int:
    """Run time in ns summed over the BPF programs a process holds (kernel.bpf_stats_enabled)."""
    ns = 0
    for fd in Path(f"/proc/{pid}/fdinfo").iterdir():
        try:
            fields = dict(line.split(":", 1) for line in fd.read_text().splitlines() if ":" in line)
        except OSError:
            continue
        if "run_time_ns" in fields and "prog_tag" in fields:
            ns += int(fields["run_time_ns"])
    return ns


class Attached:
    """A tracer process that is attached once it has printed its first line."""

    def __init__(self, argv: list[str], stop_signal: int, config: Path | None = None) -> None:
        self.config = config  # the daemon's config file, for a tracer that is `idletune serve`
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        self.stop_signal = stop_signal
        assert self.proc.stdout is not None
        self.first = self.proc.stdout.readline()

    def stop(self) -> str:
        self.proc.send_signal(self.stop_signal)
        try:
            out, _ = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, _ = self.proc.communicate()
        return out


def run_workload(args: tuple[str, ...], seconds: float) -> float:
    """Operations per second of one workload run."""
    p = spawn(*args)
    out, _ = p.communicate(timeout=seconds + 60)
    if p.returncode != 0:
        raise RuntimeError(f"workload {args} failed ({p.returncode})")
    return int(out.strip()) / seconds


def attach(cond: str) -> Attached | None:
    """Start the tracer of a condition; None for the bare run."""
    me = [sys.executable, str(Path(__file__).resolve())]
    if cond == "none":
        return None
    if cond == "runqlat":
        return Attached([RUNQLAT], signal.SIGINT)
    if cond == "idletune-duty":
        config = agent_config(Path(os.environ["IDLETUNE_STATE_DIR"]).parent, "agent-duty", hold_off=True)
        daemon = Attached([*IDLETUNE, "serve", "--config", str(config)], signal.SIGTERM, config)
        if "http://" not in daemon.first:
            daemon.stop()
            raise RuntimeError(f"idletune serve did not start: {daemon.first.strip()}")
        time.sleep(DAEMON_SETTLE_S)
        return daemon
    tracer = Attached([*me, "--agent" if cond == "idletune" else f"--{cond}"], signal.SIGTERM)
    if not json.loads(tracer.first or "{}").get("ready"):
        tracer.stop()
        raise RuntimeError(f"{cond} tracer did not start: {tracer.first.strip()}")
    return tracer


def program_time(
    workloads: dict[str, tuple[str, ...]], tracers: list[str], seconds: float
) -> dict[str, dict[str, float]]:
    """Each tracer's program run time per operation of each workload, kernel.bpf_stats_enabled on."""
    out: dict[str, dict[str, float]] = {w: {} for w in workloads}
    before = BPF_STATS.read_text()
    BPF_STATS.write_text("1")
    try:
        for cond in tracers:
            tracer = attach(cond)
            assert tracer is not None
            try:
                for w, args in workloads.items():
                    ns0 = program_ns(tracer.proc.pid)
                    ops = run_workload(args, seconds) * seconds
                    ns1 = program_ns(tracer.proc.pid)
                    out[w][cond] = round((ns1 - ns0) / max(ops, 1), 1)
            finally:
                tracer.stop()
    finally:
        BPF_STATS.write_text(before)
    return out


def print_program_time(prog_ns: dict[str, dict[str, float]]) -> None:
    if not any(prog_ns.values()):
        return
    print("\nprogram run time per operation (kernel.bpf_stats_enabled; pingpong: per round trip)")
    for w, by in prog_ns.items():
        print(f"  {w:9s} " + "   ".join(f"{c} {ns:,.0f} ns" for c, ns in by.items()))


def ctx_switches() -> int:
    for line in Path("/proc/stat").read_text().splitlines():
        if line.startswith("ctxt "):
            return int(line.split()[1])
    return 0


# agent-full (the hot path on without a break, what a trigger costs) with --full: the ping-pong
# workloads already measure the always-on collectors, and each condition here takes minutes.
TRAINER_CONDITIONS = ("none", "agent-duty")
DAEMON_LEVELS: list[tuple[str, str]] = []  # (condition, the daemon's level when measured)
REASONS: list[tuple[str, str]] = []  # (condition, why the daemon was at that level)


def daemon_level(config: Path) -> str:
    """The running daemon's collection level, from its /v1/report ("?" when it does not answer)."""
    return daemon_collection(config).get("level", "?")


def daemon_collection(config: Path) -> dict[str, str]:
    """The running daemon's collection level and why, from its /v1/report ({} when it does not answer)."""
    import re
    import urllib.request

    m = re.search(r"port: (\d+)", config.read_text())
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{m.group(1) if m else 0}/v1/report", timeout=5) as r:
            c = json.loads(r.read()).get("collection") or {}
            return {"level": str(c.get("level", "?")), "reason": str(c.get("reason", ""))}
    except (OSError, ValueError):
        return {}


def spread_pct(bare: list[float]) -> float:
    """How much the bare runs vary from round to round: max - min, as a share of their median.
    Slowdowns smaller than this are not told apart by this many rounds."""
    return 100 * (max(bare) - min(bare)) / statistics.median(bare)


def slowdowns(vals: list[float], bare: list[float]) -> tuple[list[float], str]:
    """Each round's slowdown against that round's bare run, in %, and the line that says so."""
    slow = [(1 - v / b) * 100 for v, b in zip(vals, bare, strict=True)]
    per_round = ", ".join(f"{x:.1f}" for x in slow)
    return slow, f"   slowdown median {statistics.median(slow):5.1f} %  (per round: {per_round})"


def agent_config(dir: Path, cond: str, *, hold_off: bool = False) -> Path:
    """The daemon's config for a condition: observe mode (it changes nothing), its own port.

    `hold_off`: the pressure trigger out of reach. A microbenchmark started beside a settled
    daemon is itself a rise in pressure, which rightly opens a trigger; held off, the daemon
    stays at duty level and the figure is what the duty cycle costs a host that looks healthy."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    duty = "true" if cond == "agent-duty" else "false"
    path = dir / f"{cond}.yaml"
    rise = ", psi_rise: 1000000" if hold_off else ""
    path.write_text(f"mode: observe\nserver: {{port: {port}}}\ncollection: {{duty: {duty}{rise}}}\n")
    return path


def run_trainer_bench(rounds: int, seconds: float, settle_s: float, full: bool = False) -> dict[str, Any]:
    """samples/s of the testbed trainer with no agent, the daemon on its duty cycle (and, with
    `full`, with its hot path on without a break)."""
    conditions = (*TRAINER_CONDITIONS, "agent-full") if full else TRAINER_CONDITIONS
    from evals.testbed import runner as tb

    med: Callable[[list[float]], float] = statistics.median
    rates: dict[str, list[float]] = {c: [] for c in conditions}
    agents: list[tuple[str, float, float]] = []  # condition, agent CPU in cores, RSS MiB
    with tempfile.TemporaryDirectory(prefix="idletune-bench-") as tmp:
        state = Path(tmp) / "state"
        state.mkdir(mode=0o755)
        # The trainer's hook and the daemon meet at this state dir's socket, as on a real host.
        os.environ["IDLETUNE_STATE_DIR"] = str(state)
        sc = tb.scenario("starvation")
        with tb.session(sc) as bed:
            bed.setup()
            phase = sc.phase("fix")
            bed.apply(phase)
            bed.start_trainer(phase, lifetime_s=rounds * len(conditions) * (seconds + settle_s + 30) + 120)
            bed.kpi(seconds)  # warm-up: the first window of a fresh trainer runs fast
            for r in range(rounds):
                k = r % len(conditions)
                order = conditions[k:] + conditions[:k]
                for cond in order:
                    agent = None
                    if cond != "none":
                        argv = [*IDLETUNE, "serve", "--config"]
                        config = agent_config(Path(tmp), cond)
                        agent = Attached([*argv, str(config)], signal.SIGTERM)
                        time.sleep(settle_s)  # past the compile: the steady state is measured
                    try:
                        t0, cpu0 = time.monotonic(), cpu_s(agent.proc.pid) if agent else 0.0
                        rates[cond].append(bed.kpi(seconds).samples_per_s)
                        if agent is not None:
                            c = daemon_collection(config)
                            DAEMON_LEVELS.append((cond, c.get("level", "?")))
                            REASONS.append((cond, c.get("reason", "")))
                            dt = time.monotonic() - t0
                            rss = rss_mb(agent.proc.pid)[0]
                            cpu = (cpu_s(agent.proc.pid) - cpu0) / dt
                            agents.append((cond, cpu, rss))
                    finally:
                        if agent is not None:
                            agent.stop()
                print(f"round {r + 1}/{rounds} done", file=sys.stderr, flush=True)
    base = rates["none"]
    spread = spread_pct(base)
    print(f"testbed trainer (starvation, fixed: 2 workers), {rounds} rounds, {seconds:g} s windows")
    print(f"  bare runs spread {spread:.1f} % (max - min, of the median)")
    out: dict[str, Any] = {"rounds": rounds, "seconds": seconds, "bare_spread_pct": round(spread, 1)}
    for cond in conditions:
        vals = rates[cond]
        line = f"  {cond:10s} median {med(vals):>8,.1f} samples/s"
        if cond != "none":
            slow, text = slowdowns(vals, base)
            line += text
            cpu = med([c for k, c, _ in agents if k == cond])
            rss = max(m for k, _, m in agents if k == cond)
            line += f"\n  {'':10s} agent CPU {100 * cpu:.2f} % of a core (median), RSS max {rss:.0f} MiB"
            levels = [lv for k, lv in DAEMON_LEVELS if k == cond]
            line += f"; its level when measured: {', '.join(levels)}"
            out[cond] = {
                "levels": levels,
                "reasons": [why for k, why in REASONS if k == cond],
                "slowdown_pct": round(med(slow), 2),
                "per_round_pct": [round(x, 2) for x in slow],
                "agent_cpu_pct": round(100 * cpu, 2),
                "agent_rss_mib": round(rss),
            }
        print(line)
        out.setdefault("rates", {})[cond] = [round(v, 1) for v in vals]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trainer", action="store_true", help="the testbed's PyTorch trainer instead")
    ap.add_argument("--full", action="store_true", help="--trainer: also with the hot path always on")
    ap.add_argument(
        "--settle", type=float, default=DAEMON_SETTLE_S, help="--trainer: seconds after the agent starts"
    )
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=1, help="untimed bare runs of each workload first")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--agent", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--floor", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--floor-raw", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--json", type=Path, help="also write the figures to this file as JSON")
    a = ap.parse_args()
    if a.agent:
        return run_agent()
    if a.floor or a.floor_raw:
        return run_floor(a.floor_raw)
    if os.geteuid() != 0:
        print("bench/overhead.py needs root (eBPF, losetup)", file=sys.stderr)
        return 1
    if a.trainer:
        figures = run_trainer_bench(a.rounds, a.seconds, a.settle, a.full)
        write_figures(a.json, "overhead-trainer", figures)
        return 0
    have_runqlat = Path(RUNQLAT).exists()
    conditions = [c for c in CONDITIONS if c != "runqlat" or have_runqlat]
    rates: dict[str, dict[str, list[float]]] = {w: {c: [] for c in conditions} for w in ("pingpong", "dio")}
    agent_reports: list[dict[str, object]] = []
    base_switches: list[float] = []

    prog_ns: dict[str, dict[str, float]] = {}

    with tempfile.TemporaryDirectory(prefix="idletune-bench-") as tmp, loop_device(Path(tmp), 256) as loop:
        (Path(tmp) / "state").mkdir(mode=0o755)
        os.environ["IDLETUNE_STATE_DIR"] = str(Path(tmp) / "state")  # the daemon's, not the host's
        workloads: dict[str, tuple[str, ...]] = {
            # Both sides on one CPU: the rate then measures the switch path, not placement luck.
            "pingpong": ("pingpong", str(a.seconds), str(PINGPONG_CPU)),
            "dio": ("dio", loop, str(a.seconds)),
        }
        for _ in range(a.warmup):
            for args in workloads.values():
                run_workload(args, a.seconds)
        for r in range(a.rounds):
            order = conditions[r % len(conditions) :] + conditions[: r % len(conditions)]
            for cond in order:
                tracer = attach(cond)
                try:
                    for w, args in workloads.items():
                        c0 = ctx_switches()
                        rates[w][cond].append(run_workload(args, a.seconds))
                        if w == "pingpong" and cond == "none":
                            base_switches.append((ctx_switches() - c0) / a.seconds)
                finally:
                    if tracer is not None and tracer.config is not None:
                        DAEMON_LEVELS.append((cond, daemon_level(tracer.config)))
                    if tracer is not None:
                        out = tracer.stop()
                        if cond == "idletune":
                            agent_reports.append(json.loads(out.strip().splitlines()[-1]))
            print(f"round {r + 1}/{a.rounds} done", file=sys.stderr, flush=True)
        prog_ns = program_time(workloads, [c for c in conditions if c in ("idletune", "runqlat")], a.seconds)

    figures = report(rates, conditions, agent_reports, base_switches, a.rounds, a.seconds)
    if DAEMON_LEVELS:
        figures["daemon_levels"] = [lv for _, lv in DAEMON_LEVELS]
        print(f"idletune-duty: the daemon's level when measured: {', '.join(figures['daemon_levels'])}")
    figures["program_ns_per_op"] = prog_ns
    print_program_time(prog_ns)
    write_figures(a.json, "overhead", figures)
    return 0


def report(
    rates: dict[str, dict[str, list[float]]],
    conditions: list[str],
    agents: list[dict[str, object]],
    base_switches: list[float],
    rounds: int,
    seconds: float,
) -> dict[str, Any]:
    """Print the figures; return them for the JSON record."""
    med: Callable[[list[float]], float] = statistics.median
    figures: dict[str, Any] = {"rounds": rounds, "seconds": seconds, "workloads": []}
    print(f"idletune collector overhead: {rounds} rounds, {seconds:g} s per run, {os.cpu_count()} CPUs")
    print(
        f"ping-pong bare (pinned to CPU {PINGPONG_CPU}): {med(base_switches):,.0f} context switches/s (host)"
    )
    units = {"pingpong": "round trips/s, 2 switches each", "dio": "4 KiB O_DIRECT reads/s, loop device"}
    for w, by_cond in rates.items():
        print(f"\n{w} ({units[w]})")
        base = by_cond["none"]
        spread = spread_pct(base)
        print(f"  bare runs spread {spread:.1f} % (max - min, of the median)")
        by_slowdown: dict[str, float] = {}
        for cond in conditions:
            vals = by_cond[cond]
            line = f"  {cond:9s} median {med(vals):>11,.0f}"
            if cond != "none":
                slow, text = slowdowns(vals, base)
                line += text
                by_slowdown[cond] = med(slow)
            print(line)
        figures["workloads"].append(
            {
                "name": w,
                "idletune_pct": round(by_slowdown.get("idletune", float("nan")), 2),
                "runqlat_pct": round(by_slowdown.get("runqlat", float("nan")), 2),
                "idletune_duty_pct": round(by_slowdown.get("idletune-duty", float("nan")), 2),
                "floor_pct": round(by_slowdown.get("floor", float("nan")), 2),
                "floor_raw_pct": round(by_slowdown.get("floor-raw", float("nan")), 2),
                # How much the bare workload itself varies from round to round: slowdowns
                # smaller than this are not told apart by this many rounds.
                "bare_spread_pct": round(spread, 1),
                "rates": {c: [round(v, 1) for v in by_cond[c]] for c in conditions},
            }
        )
    if agents:
        rss = [float(str(x["rss_mb"])) for x in agents]
        hwm = [float(str(x["hwm_mb"])) for x in agents]
        start = [float(str(x["start_s"])) for x in agents]
        drops = [x["drops"] for x in agents]
        print(f"\nagent RSS while collecting: max {max(rss):.0f} MiB (median {med(rss):.0f})")
        print(f"agent peak RSS, compile included: {max(hwm):.0f} MiB")
        n = len(COLLECTORS)
        print(f"agent start (compile + attach, {n} collectors): median {med(start):.1f} s")
        print(f"agent drops per run: {drops}")
        figures["rss_mib"] = max(rss)
        figures["peak_rss_mib"] = max(hwm)
    figures["bare_switches_per_s"] = round(med(base_switches))
    return figures


if __name__ == "__main__":
    sys.exit(main())
