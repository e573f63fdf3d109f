"""Load on GET /v1/report: many concurrent clients against `idletune serve` on loopback.

Starts the real command on 127.0.0.1 over a bundled incident (no root needed), then
runs N clients, each on its own keep-alive connection, for a bounded time and number
of requests. Each client sends at a fixed rate (--rate per second; 0 sends the next
request as soon as the last answered). Latency runs from the moment a request was
due, not from when it went out, so a stalled server cannot hide its queue from the
figures (coordinated omission). Prints p50, p99, max, errors and requests per second.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script: make `bench` importable
    sys.path.insert(0, str(ROOT))

from bench.figures import write_figures  # noqa: E402

INCIDENT = ROOT / "evals" / "incidents" / "checkpoint-writeback-burst"


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)

    def error(self, what: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(port: int, state_dir: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "IDLETUNE_STATE_DIR": state_dir}
    cmd = [str(ROOT / ".venv/bin/idletune"), "serve", "--incident", str(INCIDENT), "--port", str(port)]
    if not Path(cmd[0]).exists():
        cmd = [sys.executable, "-m", "agent.cli.main", *cmd[1:]]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server exited: {proc.stderr.read().decode() if proc.stderr else ''}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                s.sendall(b"GET /v1/report HTTP/1.1\r\nHost: bench\r\n\r\n")
                if s.recv(12).startswith(b"HTTP/1.1 200"):
                    return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise SystemExit("server did not answer within 60 s")


async def _read_response(reader: asyncio.StreamReader) -> int:
    head = await reader.readuntil(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    await reader.readexactly(length)
    return status


async def client(port: int, path: str, rate: float, until: float, budget: list[int], tally: Tally) -> None:
    request = f"GET {path} HTTP/1.1\r\nHost: bench\r\n\r\n".encode()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError as e:
        tally.error(f"connect: {type(e).__name__}")
        return
    loop = asyncio.get_running_loop()
    # Clients start at random points of their period: real pollers are not in lockstep,
    # and a synchronised burst of every client at once would measure the burst instead.
    due = loop.time() + (random.uniform(0.0, 1.0 / rate) if rate > 0 else 0.0)
    try:
        while budget[0] > 0:
            if rate > 0:
                await asyncio.sleep(max(0.0, due - loop.time()))
            else:
                due = loop.time()
            if loop.time() >= until:
                break
            budget[0] -= 1
            writer.write(request)
            try:
                status = await _read_response(reader)
            except (OSError, asyncio.IncompleteReadError, ValueError) as e:
                tally.error(type(e).__name__)
                return
            if status == 200:
                tally.latencies.append(loop.time() - due)
            else:
                tally.error(f"HTTP {status}")
            if rate > 0:
                due += 1.0 / rate
    finally:
        writer.close()


async def load(port: int, path: str, clients: int, rate: float, duration: float, requests: int) -> Tally:
    tally = Tally()
    budget = [requests]
    loop = asyncio.get_running_loop()
    until = loop.time() + duration
    await asyncio.gather(*(client(port, path, rate, until, budget, tally) for _ in range(clients)))
    return tally


def pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--clients", type=int, default=200)
    ap.add_argument("--rate", type=float, default=5.0, help="requests per second per client; 0: back to back")
    ap.add_argument("--duration", type=float, default=20.0, help="seconds of load at most")
    ap.add_argument("--requests", type=int, default=20000, help="requests in all at most")
    ap.add_argument("--path", default="/v1/report")
    ap.add_argument("--json", type=Path, help="also write the figures to this file as JSON")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as state_dir:
        port = _free_port()
        server = start_server(port, state_dir)
        try:
            t0 = time.monotonic()
            tally = asyncio.run(load(port, args.path, args.clients, args.rate, args.duration, args.requests))
            wall = time.monotonic() - t0
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)
    ok = tally.latencies
    errors = sum(tally.errors.values())
    mode = f"{args.rate:g} req/s per client" if args.rate > 0 else "back to back"
    print(f"GET {args.path}: {args.clients} clients, {mode}, {wall:.1f} s, cpus {os.cpu_count()}")
    print(f"  requests ok   {len(ok)}")
    print(f"  errors        {errors} {dict(tally.errors) if errors else ''}".rstrip())
    print(f"  throughput    {len(ok) / wall:.0f} req/s")
    print(f"  latency p50   {pct(ok, 0.50) * 1000:.2f} ms")
    print(f"  latency p99   {pct(ok, 0.99) * 1000:.2f} ms")
    print(f"  latency max   {max(ok, default=float('nan')) * 1000:.2f} ms")
    write_figures(
        args.json,
        "api",
        {
            "path": args.path,
            "clients": args.clients,
            "rate_per_client": args.rate,
            "requests_ok": len(ok),
            "errors": errors,
            "req_per_s": round(len(ok) / wall, 1),
            "p50_ms": round(pct(ok, 0.50) * 1000, 2),
            "p99_ms": round(pct(ok, 0.99) * 1000, 2),
        },
    )


if __name__ == "__main__":
    main()
