"""What `idletune serve` costs the host once settled: its CPU and memory, and its eBPF programs.

Starts the daemon in observe mode on a scratch state directory and port, lets it
settle (`--warmup`, past the compile at start), then measures over `--seconds`:
the process's CPU as a share of one core (from /proc/PID/stat), its resident
memory (from /proc/PID/status), and what its own /metrics says (the agent's cost
over its budget window by part, and each program's run time and runs). Needs root
for the eBPF collectors. `--tree` measures another checkout of idletune with the
same Python (an older commit, for a before/after). Prints figures only: timing on a
shared machine is no pass/fail.

    .venv/bin/python bench/cost.py [--warmup 20] [--seconds 60] [--tree DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make `bench` importable
    sys.path.insert(0, str(ROOT))

from bench.figures import write_figures  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cpu_s(pid: int) -> float:
    """User and system CPU seconds of a process, all its threads."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def memory_kb(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            out[key] = int(rest.split()[0])
    return out


def scrape(port: int) -> dict[str, list[tuple[dict[str, str], float]]]:
    from prometheus_client.parser import text_string_to_metric_families

    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            out.setdefault(s.name, []).append((dict(s.labels), float(s.value)))
    return out


def wait_up(port: int, proc: subprocess.Popen[bytes], limit_s: float = 120.0) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        if proc.poll() is not None:
            raise SystemExit(f"idletune serve exited with {proc.returncode}")
        try:
            scrape(port)
            return time.monotonic() - t0
        except OSError:
            time.sleep(0.5)
    raise SystemExit("idletune serve did not answer within 120 s")


def measure(tree: Path, warmup: float, seconds: float) -> dict[str, Any]:
    port = free_port()
    with tempfile.TemporaryDirectory(prefix="idletune-cost-") as tmp:
        cfg = Path(tmp) / "config.yaml"
        cfg.write_text(f"mode: observe\nserver:\n  port: {port}\npaths:\n  state_dir: {tmp}/state\n")
        log = open(Path(tmp) / "log", "wb")  # noqa: SIM115 - closed below
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent.cli.main", "serve", "--config", str(cfg)],
            cwd=tree,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONPATH": str(tree)},
        )
        try:
            start_s = wait_up(port, proc)
            time.sleep(warmup)
            c0, t0 = cpu_s(proc.pid), time.monotonic()
            before = scrape(port)
            time.sleep(seconds)
            c1, t1 = cpu_s(proc.pid), time.monotonic()
            after = scrape(port)
            mem = memory_kb(proc.pid)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
            log.close()
    figures: dict[str, Any] = {
        "tree": "." if tree == ROOT else str(tree),
        "start_s": round(start_s, 1),
        "warmup_s": warmup,
        "seconds": seconds,
        "cpu_share_pct": round(100 * (c1 - c0) / (t1 - t0), 3),
        "rss_mib": round(mem["VmRSS"] / 1024, 1),
        "rss_anon_mib": round(mem["RssAnon"] / 1024, 1),
        "rss_file_mib": round(mem["RssFile"] / 1024, 1),
        "peak_rss_mib": round(mem["VmHWM"] / 1024, 1),
    }
    parts = {lab.get("part", ""): v for lab, v in after.get("idletune_agent_cost_cores", [])}
    if parts:
        figures["own_metrics_cost_pct"] = {k: round(100 * v, 3) for k, v in parts.items()}
    programs: dict[str, dict[str, float]] = {}
    run0 = {lab["program"]: v for lab, v in before.get("idletune_bpf_run_seconds_total", [])}
    ev0 = {lab["program"]: v for lab, v in before.get("idletune_bpf_events_total", [])}
    evs = {lab["program"]: v for lab, v in after.get("idletune_bpf_events_total", [])}
    for lab, run in after.get("idletune_bpf_run_seconds_total", []):
        name = lab["program"]
        d_run, d_ev = run - run0.get(name, 0.0), evs.get(name, 0.0) - ev0.get(name, 0.0)
        if d_ev > 0:
            programs[name] = {
                "share_pct": round(100 * d_run / (t1 - t0), 4),
                "events_per_s": round(d_ev / (t1 - t0), 1),
                "ns_per_event": round(1e9 * d_run / d_ev, 1),
            }
    if programs:
        figures["programs"] = dict(sorted(programs.items(), key=lambda kv: -kv[1]["share_pct"]))
        figures["bpf_share_pct"] = round(sum(p["share_pct"] for p in programs.values()), 3)
    return figures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warmup", type=float, default=20.0, help="seconds after the API answers")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--tree", type=Path, default=ROOT, help="the idletune checkout to run")
    ap.add_argument("--json", type=Path, help="also write the figures to this file as JSON")
    args = ap.parse_args()
    if os.geteuid() != 0:
        print("run as root: the eBPF collectors need it", file=sys.stderr)
        return 2
    f = measure(args.tree.resolve(), args.warmup, args.seconds)
    print(f"idletune serve ({f['tree']}), observe mode")
    print(f"  measured over {f['seconds']:g} s, after {f['warmup_s']:g} s settling")
    print(f"  process CPU: {f['cpu_share_pct']:.2f} % of one core")
    print(
        f"  RSS: {f['rss_mib']:.0f} MiB (anonymous {f['rss_anon_mib']:.0f}, files {f['rss_file_mib']:.0f}); "
        f"peak {f['peak_rss_mib']:.0f} MiB"
    )
    if "own_metrics_cost_pct" in f:
        own = f["own_metrics_cost_pct"]
        parts = ", ".join(f"{k} {v:.2f} %" for k, v in own.items())
        print(f"  its own /metrics, over its budget window: {parts}")
    if "programs" in f:
        print(f"  eBPF programs: {f['bpf_share_pct']:.2f} % of one core in all")
        for name, p in f["programs"].items():
            print(
                f"    {name:44} {p['share_pct']:7.3f} %  {p['events_per_s']:>10.0f} ev/s  "
                f"{p['ns_per_event']:>7.0f} ns/ev"
            )
    write_figures(args.json, "cost", f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
