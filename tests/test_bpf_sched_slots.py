"""The sched program's thread entries when slots collide: every thread is still found, none dropped.

Compiles bpf/sched.bpf.c with 16 slots, so a process with 40 threads that sleep
and wake must put most of them in the overflow hash; each thread's run-queue
histogram and blocked time must still be read back, and nothing may be dropped.
Needs root, bcc and tracefs.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from bpf.loader import COLLECTORS, Collector
from bpf.snapshot import read_sched

pytestmark = [
    pytest.mark.root,
    pytest.mark.skipif(
        os.geteuid() != 0
        or importlib.util.find_spec("bcc") is None
        or not Path("/sys/kernel/tracing/events").is_dir(),
        reason="needs root, bcc and tracefs",
    ),
]

THREADS = 40
_WORKLOAD = textwrap.dedent(
    f"""
    import sys, threading, time
    def nap():
        while True:
            time.sleep(0.002)
    for _ in range({THREADS}):
        threading.Thread(target=nap, daemon=True).start()
    print("ready", flush=True)
    sys.stdin.read()
    """
)


def test_threads_beyond_their_slot_go_to_the_overflow_hash() -> None:
    import bcc

    spec = COLLECTORS["sched"]
    bpf = bcc.BPF(src_file=str(spec.path).encode(), cflags=["-DNSLOTS=16"])
    c = Collector("sched", bpf)
    proc = subprocess.Popen(
        [sys.executable, "-c", _WORKLOAD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        time.sleep(0.5)
        tids = [int(t) for t in os.listdir(f"/proc/{proc.pid}/task")]
        rq, off = read_sched(c, tids)
        slots = len(c.table("slots"))
        in_slot = {
            tid for tid in tids if (e := c.lookup("slots", tid % slots)) is not None and int(e.tid) == tid
        }
        drops = c.drops()
    finally:
        proc.kill()
        proc.wait()
        c.close()
    assert slots == 16
    napping = [t for t in tids if t != proc.pid]
    assert len(in_slot) <= 16 and len(set(napping) - in_slot) >= THREADS - 16
    # Every napping thread woke ~250 times: each has its histogram and blocked time.
    for tid in napping:
        assert sum(rq.per_tid_total.get(tid, [])) >= 20, tid
        assert off.blocked_total_ns.get(tid, 0) > 100_000_000, tid
    assert drops == 0
