"""idletune's eBPF collectors against an independent bpftrace over the same tracepoints and seconds.

Needs root, bcc, bpftrace, tracefs and losetup. Block latency p50/p99 on a loop
device under O_DIRECT reads, and host run-queue p99 under pipe ping-pong, must
fall within one log2 bucket of bpftrace's `hist()`.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.sources.bpf_source import BpfSource
from bench.workloads import loop_device, spawn
from bpf.hist import Log2Hist, percentile, slot_of
from core.vocabulary import is_known

pytestmark = [
    pytest.mark.root,
    pytest.mark.slow,
    pytest.mark.skipif(
        os.geteuid() != 0
        or importlib.util.find_spec("bcc") is None
        or not Path("/sys/kernel/tracing/events").is_dir()
        or shutil.which("bpftrace") is None
        or shutil.which("losetup") is None,
        reason="needs root, bcc, bpftrace, tracefs and losetup",
    ),
]

WORK_S = 4.0

# The same measurements, written independently in bpftrace.
BPFTRACE = """
tracepoint:block:block_rq_issue /args->dev == DEV/ { @issue[args->sector] = nsecs; }
tracepoint:block:block_rq_complete /args->dev == DEV && @issue[args->sector]/ {
  @blk = hist(nsecs - @issue[args->sector]);
  delete(@issue[args->sector]);
}
tracepoint:sched:sched_wakeup, tracepoint:sched:sched_wakeup_new { @qs[args->pid] = nsecs; }
tracepoint:sched:sched_switch {
  if ((args->prev_state & 0xff) == 0 && args->prev_pid != 0) { @qs[args->prev_pid] = nsecs; }
  $t = @qs[args->next_pid];
  if ($t) { @rq = hist(nsecs - $t); delete(@qs[args->next_pid]); }
}
END { clear(@issue); clear(@qs); }
"""


def kernel_dev(dev_path: str) -> int:
    st = os.stat(dev_path)
    return (os.major(st.st_rdev) << 20) | os.minor(st.st_rdev)


@contextlib.contextmanager
def bpftrace(dev: int) -> Iterator[dict[str, Log2Hist]]:
    """Run the bpftrace script; on exit the dict holds its histograms (slot -> count)."""
    out: dict[str, Log2Hist] = {}
    proc = subprocess.Popen(
        ["bpftrace", "-f", "json", "-e", BPFTRACE.replace("DEV", str(dev))],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()  # {"type": "attached_probes", ...} once attached
        assert "attached_probes" in first, first
        yield out
        proc.send_signal(signal.SIGINT)
        text, _ = proc.communicate(timeout=30)
        for line in text.splitlines():
            if not line.strip():
                continue
            msg = json.loads(line)
            if msg.get("type") == "hist":
                for name, buckets in msg["data"].items():
                    hist = out.setdefault(name.lstrip("@"), {})
                    for b in buckets:
                        s = slot_of(b.get("min", 0))
                        hist[s] = hist.get(s, 0) + int(b["count"])
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def workloads(*commands: tuple[str, ...]) -> Iterator[list[subprocess.Popen[str]]]:
    procs = [spawn(*c) for c in commands]
    try:
        yield procs
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
            p.wait()


def assert_within_one_bucket(what: str, ours_us: float | None, theirs: Log2Hist, q: float) -> None:
    b = percentile(theirs, q)
    assert ours_us is not None and b is not None, f"{what}: no events (idletune {ours_us}, bpftrace {b})"
    a = ours_us * 1000.0
    assert abs(slot_of(a) - slot_of(b)) <= 1, f"{what} p{q * 100:g}: idletune {a:.0f} ns, bpftrace {b:.0f} ns"


def test_block_and_runq_latency_agree_with_bpftrace(tmp_path: Path) -> None:
    src = BpfSource(collectors=["block", "sched"])
    try:
        st = src.start()
        assert st.live, st.reason
        with loop_device(tmp_path, 128) as loop:
            name = Path(loop).name
            with bpftrace(kernel_dev(loop)) as theirs:
                src.collect()  # discard what the collectors saw before bpftrace was attached
                with workloads(("dio", loop, str(WORK_S)), ("pingpong", str(WORK_S))) as procs:
                    for p in procs:
                        p.wait(timeout=WORK_S + 30)
                        assert p.returncode == 0
                m = src.collect()
        n_blk = sum(theirs["blk"].values())
        assert n_blk > 1000
        # Both saw the same requests (bpftrace ran a little longer on each side).
        assert m[f"io.{name}.read_iops"] * WORK_S == pytest.approx(n_blk, rel=0.15)
        assert_within_one_bucket("block latency", m.get(f"io.{name}.lat_p50_us"), theirs["blk"], 0.50)
        assert_within_one_bucket("block latency", m.get(f"io.{name}.lat_p99_us"), theirs["blk"], 0.99)
        assert sum(theirs["rq"].values()) > 10000
        assert_within_one_bucket("run-queue latency", m.get("sched.runq_lat_p99_us"), theirs["rq"], 0.99)
    finally:
        src.close()


def test_source_emits_vocabulary_and_closes(tmp_path: Path) -> None:
    # Long enough to outlast the compile at start; killed when the test is done.
    with workloads(("pingpong", "120")) as procs:
        job_pid = procs[0].pid
        src = BpfSource(jobs=lambda: {"pp": [job_pid]})
        try:
            st = src.start()
            assert st.live, st.reason
            assert all(s.live for s in src.collector_status().values()), src.collector_status()
            with loop_device(tmp_path, 32) as loop:
                name = Path(loop).name
                time.sleep(0.5)
                src.collect()
                with workloads(("dio", loop, "1.5")) as dio:
                    dio[0].wait(timeout=30)
                m = src.collect()
        finally:
            src.close()
            src.close()
    assert all(is_known(k) for k in m), [k for k in m if not is_known(k)]
    for k in (
        f"io.{name}.lat_p50_us",
        f"io.{name}.lat_p99_us",
        f"io.{name}.read_iops",
        f"io.{name}.read_kbps",
        f"io.{name}.avg_req_kb",
        "sched.runq_lat_p99_us",
        "sched.pp.runq_lat_p99_us",
        "sched.pp.offcpu_frac",
        "sched.ctx_switches_per_s",
        "sched.migrations_per_s",
        "mem.direct_reclaim_ms_per_s",
        "mem.kswapd_wakeups_per_s",
        "mem.dirty_throttle_ms_per_s",
        "mem.pagecache_miss_per_s",
    ):
        assert k in m, k
    assert m[f"io.{name}.read_iops"] > 1000
    assert m[f"io.{name}.avg_req_kb"] == pytest.approx(4.0)
    assert 0.0 <= m["sched.pp.offcpu_frac"] <= 1.0
    assert m["sched.ctx_switches_per_s"] > 10000
    assert src.collect() == {}
    assert all(v == 0 for v in src.drops().values())
    assert not any(s.live for s in src.collector_status().values())
