"""The real-incident matrix: testbed scenarios recorded under varied conditions, each labelled by a
measured counterfactual.

    python -m evals.matrix list
    python -m evals.matrix record [--only GLOB] [--repeats 2] [--out evals/incidents]

For each condition and repeat: set the scenario up with the condition's device limits, readahead,
loader workers, preprocessing cost, data layout and background noise; start the agent's live
sources (as `idletune record` does); start the job, in its fault, or healthy with the fault
switched on mid-window; record the window; then, on the same setup, measure the job's samples/s
with the fault and with the scenario's fix. A fix that raises samples/s by 20 % or more makes the
scenario's cause the truth; otherwise the truth is `none` (nothing the catalogue holds helps).
Written as the spec's v1 incident `real-<condition>-<n>`, tagged `real`, `matrix`, the scenario
and the condition's tags, with the measured figures in its header comment.

Needs root, eBPF, PyTorch and a quiet host: a busy one records its own noise as the fault's.
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from agent.live import LiveHost
from agent.recorder import Recording, record, write_incident
from core.hostfs import HostFS
from core.sample import Sample, SourceStatus
from core.window import Window
from evals.testbed import runner as tb
from evals.testbed.scenarios import SCENARIOS, Scenario

MOVE = 0.20  # a fix that raises samples/s by this share acts on the cause
FIX_WINDOW_S = 10.0
Onset = Literal["start", "mid"]


@dataclass(frozen=True)
class Condition:
    name: str
    scenario: str
    tags: tuple[str, ...]
    fault: dict[str, Any] = field(default_factory=dict)  # Phase fields of the fault phase
    fix: dict[str, Any] = field(default_factory=dict)  # Phase fields of the fix phase
    setup: dict[str, Any] = field(default_factory=dict)  # Scenario fields (limits, layout, noise)
    onset: Onset = "start"
    interval_s: float = 1.0

    def built(self) -> Scenario:
        base = SCENARIOS[self.scenario]
        return dataclasses.replace(
            base,
            fault=dataclasses.replace(base.fault, **self.fault),
            fix=dataclasses.replace(base.fix, **self.fix),
            **self.setup,
        )

    @property
    def duration_s(self) -> float:
        return 40.0 if self.interval_s <= 1.0 else 30 * self.interval_s


_NOISE = {
    "dirty": "dirty pages from staging the data set still flushing",
    "rootwrites": "unrelated writes to the root disk",
    "hog-elsewhere": "a CPU hog in another group",
    "memhog": "a memory hog elsewhere",
}


def title_of(cond: Condition) -> str:
    """What the recording's setup is, in words: the scenario's title spelt for the condition."""
    sc = cond.built()
    f = sc.fault
    plural = "s" if f.workers != 1 else ""
    workers = f"{f.workers} loader worker{plural}" if f.workers else "no loader workers"
    if sc.name == "readahead":
        limit = (
            f"capped at {sc.read_iops} read IOPS"
            if sc.read_iops
            else f"capped at {sc.read_bps // (1 << 20)} MiB/s"
            if sc.read_bps
            else "with no cap"
        )
        where = "a raw device" if sc.raw else "a file system on a device"
        text = f"Shards streamed from {where} {limit}, read_ahead_kb {f.read_ahead_kb}, {workers}"
        if sc.preprocess:
            text += f", preprocessing x{sc.preprocess}"
    elif sc.name == "starvation":
        text = f"{workers.capitalize()} for CPU-heavy preprocessing (x{sc.preprocess}) on a 2-core host"
    elif sc.name == "contention":
        text = f"{f.hogs} CPU hogs beside the job take the cores its {workers} need"
    elif sc.name == "reclaim":
        text = (
            f"The job under a memory cgroup {f.mem_headroom_mb} MiB above its own use: too small for "
            "its data set's page cache"
        )
    else:
        text = sc.title
    noise = [_NOISE.get(n, n) for n in sc.noise]
    return text + (f"; beside it {' and '.join(noise)}" if noise else "") + f" [{cond.name}]"


def fix_note_of(cond: Condition) -> str:
    """What the condition's fix changes, in words (the scenario's note, where the condition keeps it)."""
    sc, base = cond.built(), SCENARIOS[cond.scenario]
    f, x = sc.fault, sc.fix
    if sc.name == "readahead" and x.read_ahead_kb != base.fix.read_ahead_kb:
        return f"read_ahead_kb {x.read_ahead_kb} on the data device, loader workers restarted"
    if sc.name == "starvation" and (f.workers, x.workers) != (base.fault.workers, base.fix.workers):
        return f"{x.workers} loader workers instead of {f.workers}"
    return sc.fix_note


def _c(name: str, scenario: str, tags: str, **kw: Any) -> Condition:
    return Condition(name=name, scenario=scenario, tags=tuple(tags.split()), **kw)


# Device limits, readahead, workers, preprocessing, layout, onset, interval and noise vary around each
# scenario; a healthy job beside noise must come out `none`.
CONDITIONS: tuple[Condition, ...] = (
    _c("ra128-iops200", "readahead", "iops-200 ra-128 fs workers-2"),
    _c(
        "ra64-iops100",
        "readahead",
        "iops-100 ra-64 fs workers-2",
        fault={"read_ahead_kb": 64},
        setup={"read_iops": 100},
    ),
    _c(
        "ra256-iops40-w3",
        "readahead",
        "iops-40 ra-256 fs workers-3",
        fault={"read_ahead_kb": 256, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 40},
    ),
    _c(
        "ra32-iops300-w1",
        "readahead",
        "iops-300 ra-32 fs workers-1",
        fault={"read_ahead_kb": 32, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 300},
    ),
    _c("ra128-iops30", "readahead", "iops-30 ra-128 fs workers-2", setup={"read_iops": 30}),
    _c("ra512-iops200", "readahead", "iops-200 ra-512 fs workers-2", fault={"read_ahead_kb": 512}),
    _c("ra128-iops200-raw", "readahead", "iops-200 ra-128 raw workers-2", setup={"raw": True}),
    _c(
        "ra64-iops100-raw",
        "readahead",
        "iops-100 ra-64 raw workers-2",
        fault={"read_ahead_kb": 64},
        setup={"raw": True, "read_iops": 100},
    ),
    _c("ra128-iops200-mid", "readahead", "iops-200 ra-128 fs workers-2", onset="mid"),
    _c("ra128-iops200-i2", "readahead", "iops-200 ra-128 fs workers-2", interval_s=2.0),
    _c(
        "ra128-iops200-dirty",
        "readahead",
        "iops-200 ra-128 fs workers-2 noise-dirty",
        setup={"noise": ("dirty",)},
    ),
    _c(
        "ra128-bps16",
        "readahead",
        "bps-16m ra-128 fs workers-2",
        setup={"read_iops": None, "read_bps": 16 * 1024 * 1024},
    ),
    _c(
        "ra128-fast-cpu",
        "readahead",
        "uncapped ra-128 fs workers-2 preprocess-3",
        setup={"read_iops": None, "preprocess": 3},
    ),
    _c("starve-w0-p2", "starvation", "workers-0 preprocess-2"),
    _c("starve-w0-p1", "starvation", "workers-0 preprocess-1", setup={"preprocess": 1}),
    _c("starve-w1-p3", "starvation", "workers-1 preprocess-3", fault={"workers": 1}, setup={"preprocess": 3}),
    _c("starve-w0-p2-i2", "starvation", "workers-0 preprocess-2", interval_s=2.0),
    _c(
        "starve-w0-p2-hog",
        "starvation",
        "workers-0 preprocess-2 noise-hog-elsewhere",
        setup={"noise": ("hog-elsewhere",)},
    ),
    _c(
        "cont-h2",
        "contention",
        "hogs-2 workers-2 preprocess-2",
        fault={"hogs": 2},
        fix={"hogs": 2},
    ),
    _c(
        "cont-h4",
        "contention",
        "hogs-4 workers-2 preprocess-2",
        fault={"hogs": 4},
        fix={"hogs": 4},
    ),
    _c("cont-h6", "contention", "hogs-6 workers-2 preprocess-2"),
    _c(
        "cont-h4-mid",
        "contention",
        "hogs-4 workers-2 preprocess-2",
        fault={"hogs": 4},
        fix={"hogs": 4},
        onset="mid",
    ),
    _c(
        "cont-h4-i2",
        "contention",
        "hogs-4 workers-2 preprocess-2",
        fault={"hogs": 4},
        fix={"hogs": 4},
        interval_s=2.0,
    ),
    _c("wb-ckpt", "writeback", "writer fs"),
    _c("wb-ckpt-mid", "writeback", "writer fs", onset="mid"),
    _c("wb-ckpt-i2", "writeback", "writer fs", interval_s=2.0),
    _c("recl-256", "reclaim", "memcg-headroom-256"),
    _c("recl-192", "reclaim", "memcg-headroom-192", fault={"mem_headroom_mb": 192}),
    _c("recl-256-mid", "reclaim", "memcg-headroom-256", onset="mid"),
    _c(
        "healthy-ra4096-dirty",
        "readahead",
        "healthy iops-200 ra-4096 fs noise-dirty",
        fault={"read_ahead_kb": 4096},
        fix={"read_ahead_kb": 16384},
        setup={"noise": ("dirty",)},
    ),
    _c(
        "healthy-ra4096-rootwrites",
        "readahead",
        "healthy iops-200 ra-4096 fs noise-rootwrites",
        fault={"read_ahead_kb": 4096},
        fix={"read_ahead_kb": 16384},
        setup={"noise": ("rootwrites",)},
    ),
    _c(
        "healthy-w2-hog",
        "starvation",
        "healthy workers-2 preprocess-2 noise-hog-elsewhere",
        fault={"workers": 2},
        fix={"workers": 3},
        setup={"noise": ("hog-elsewhere",)},
    ),
    _c(
        "healthy-w2-memhog",
        "starvation",
        "healthy workers-2 preprocess-2 noise-memhog",
        fault={"workers": 2},
        fix={"workers": 3},
        setup={"noise": ("memhog",)},
    ),
    # The second held-out round (evals/split.py): settings none of the above has.
    _c(
        "ra96-iops150-w3-mid",
        "readahead",
        "iops-150 ra-96 fs workers-3",
        fault={"read_ahead_kb": 96, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 150},
        onset="mid",
    ),
    _c(
        "ra128-bps24",
        "readahead",
        "bps-24m ra-128 fs workers-2",
        setup={"read_iops": None, "read_bps": 24 * 1024 * 1024},
    ),
    _c(
        "ra256-iops60-raw-i2",
        "readahead",
        "iops-60 ra-256 raw workers-2",
        fault={"read_ahead_kb": 256},
        setup={"raw": True, "read_iops": 60},
        interval_s=2.0,
    ),
    _c("starve-w0-p3-i2", "starvation", "workers-0 preprocess-3", setup={"preprocess": 3}, interval_s=2.0),
    _c(
        "cont-h3-mid",
        "contention",
        "hogs-3 workers-2 preprocess-2",
        fault={"hogs": 3},
        fix={"hogs": 3},
        onset="mid",
    ),
    _c("wb-ckpt-mid-i2", "writeback", "writer fs", onset="mid", interval_s=2.0),
    _c("recl-224-mid", "reclaim", "memcg-headroom-224", fault={"mem_headroom_mb": 224}, onset="mid"),
    _c(
        "healthy-ra1024-uncapped-rootwrites",
        "readahead",
        "healthy uncapped ra-1024 fs workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 1024},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("rootwrites",)},
    ),
    _c(
        "healthy-w2-p1-dirty",
        "starvation",
        "healthy workers-2 preprocess-1 noise-dirty",
        fault={"workers": 2},
        fix={"workers": 3},
        setup={"preprocess": 1, "noise": ("dirty",)},
    ),
    # The third held-out round (evals/split.py).
    _c(
        "ra64-bps32",
        "readahead",
        "bps-32m ra-64 fs workers-2",
        fault={"read_ahead_kb": 64},
        setup={"read_iops": None, "read_bps": 32 * 1024 * 1024},
    ),
    _c(
        "ra192-iops80-w1",
        "readahead",
        "iops-80 ra-192 fs workers-1",
        fault={"read_ahead_kb": 192, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 80},
    ),
    _c(
        "healthy-ra512-uncapped-w3",
        "readahead",
        "healthy uncapped ra-512 fs workers-3",
        fault={"read_ahead_kb": 512, "workers": 3},
        fix={"read_ahead_kb": 4096, "workers": 3},
        setup={"read_iops": None},
    ),
    _c("recl-160", "reclaim", "memcg-headroom-160", fault={"mem_headroom_mb": 160}),
    # The fourth held-out round (evals/split.py).
    _c("wb-ckpt-w3", "writeback", "writer fs workers-3", fault={"workers": 3}, fix={"workers": 3}),
    _c(
        "wb-ckpt-ra512-mid",
        "writeback",
        "writer fs ra-512",
        fault={"read_ahead_kb": 512},
        fix={"read_ahead_kb": 512},
        onset="mid",
    ),
    _c(
        "ra48-iops250-raw-mid",
        "readahead",
        "iops-250 ra-48 raw workers-2",
        fault={"read_ahead_kb": 48},
        setup={"raw": True, "read_iops": 250},
        onset="mid",
    ),
    _c(
        "ra160-iops120-w1-i2",
        "readahead",
        "iops-120 ra-160 fs workers-1",
        fault={"read_ahead_kb": 160, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 120},
        interval_s=2.0,
    ),
    _c("starve-w1-p2-mid", "starvation", "workers-1 preprocess-2", fault={"workers": 1}, onset="mid"),
    _c(
        "cont-h5-i2",
        "contention",
        "hogs-5 workers-2 preprocess-2",
        fault={"hogs": 5},
        fix={"hogs": 5},
        interval_s=2.0,
    ),
    _c("recl-208-i2", "reclaim", "memcg-headroom-208", fault={"mem_headroom_mb": 208}, interval_s=2.0),
    _c(
        "healthy-ra2048-iops400",
        "readahead",
        "healthy iops-400 ra-2048 fs workers-2",
        fault={"read_ahead_kb": 2048},
        fix={"read_ahead_kb": 8192},
        setup={"read_iops": 400},
    ),
    _c(
        "healthy-w3-p1-memhog",
        "starvation",
        "healthy workers-3 preprocess-1 noise-memhog",
        fault={"workers": 3},
        fix={"workers": 4},
        setup={"preprocess": 1, "noise": ("memhog",)},
    ),
    # The fifth held-out round (evals/split.py).
    _c(
        "healthy-w6-p1",
        "starvation",
        "healthy workers-6 preprocess-1",
        fault={"workers": 6},
        fix={"workers": 8},
        setup={"preprocess": 1},
    ),
    _c(
        "healthy-w3-p2-hog",
        "starvation",
        "healthy workers-3 preprocess-2 noise-hog-elsewhere",
        fault={"workers": 3},
        fix={"workers": 4},
        setup={"noise": ("hog-elsewhere",)},
    ),
    _c(
        "ra80-iops180-dirty-mid",
        "readahead",
        "iops-180 ra-80 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 80},
        setup={"read_iops": 180, "noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "starve-w0-p1-rootwrites",
        "starvation",
        "workers-0 preprocess-1 noise-rootwrites",
        setup={"preprocess": 1, "noise": ("rootwrites",)},
    ),
    _c(
        "cont-h3-w3-i2",
        "contention",
        "hogs-3 workers-3 preprocess-2",
        fault={"hogs": 3, "workers": 3},
        fix={"hogs": 3},
        interval_s=2.0,
    ),
    _c("recl-240", "reclaim", "memcg-headroom-240", fault={"mem_headroom_mb": 240}),
    _c("wb-ckpt-p1", "writeback", "writer fs preprocess-1", setup={"preprocess": 1}),
    _c(
        "healthy-ra256-uncapped-memhog",
        "readahead",
        "healthy uncapped ra-256 fs workers-2 noise-memhog",
        fault={"read_ahead_kb": 256},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("memhog",)},
    ),
    # The sixth held-out round (evals/split.py).
    _c(
        "ra112-iops160-w3-mid",
        "readahead",
        "iops-160 ra-112 fs workers-3",
        fault={"read_ahead_kb": 112, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 160},
        onset="mid",
    ),
    _c(
        "ra128-bps20-raw",
        "readahead",
        "bps-20m ra-128 raw workers-2",
        setup={"raw": True, "read_iops": None, "read_bps": 20 * 1024 * 1024},
    ),
    _c(
        "starve-w0-p2-memhog",
        "starvation",
        "workers-0 preprocess-2 noise-memhog",
        setup={"noise": ("memhog",)},
    ),
    _c(
        "cont-h4-w1",
        "contention",
        "hogs-4 workers-1 preprocess-2",
        fault={"hogs": 4, "workers": 1},
        fix={"hogs": 4},
    ),
    _c(
        "wb-ckpt-ra256-i2",
        "writeback",
        "writer fs ra-256",
        fault={"read_ahead_kb": 256},
        fix={"read_ahead_kb": 256},
        interval_s=2.0,
    ),
    _c("recl-176-mid", "reclaim", "memcg-headroom-176", fault={"mem_headroom_mb": 176}, onset="mid"),
    _c(
        "healthy-w4-p2",
        "starvation",
        "healthy workers-4 preprocess-2",
        fault={"workers": 4},
        fix={"workers": 6},
    ),
    _c(
        "healthy-ra384-uncapped-dirty",
        "readahead",
        "healthy uncapped ra-384 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 384},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("dirty",)},
    ),
    # The seventh held-out round (evals/split.py).
    _c(
        "ra96-iops220",
        "readahead",
        "iops-220 ra-96 fs workers-2",
        fault={"read_ahead_kb": 96},
        setup={"read_iops": 220},
    ),
    _c(
        "ra160-iops90-raw-mid",
        "readahead",
        "iops-90 ra-160 raw workers-2",
        fault={"read_ahead_kb": 160},
        setup={"raw": True, "read_iops": 90},
        onset="mid",
    ),
    _c(
        "ra128-bps28-w3",
        "readahead",
        "bps-28m ra-128 fs workers-3",
        fault={"workers": 3},
        fix={"workers": 3},
        setup={"read_iops": None, "read_bps": 28 * 1024 * 1024},
    ),
    _c(
        "starve-w1-p3-rootwrites",
        "starvation",
        "workers-1 preprocess-3 noise-rootwrites",
        fault={"workers": 1},
        setup={"preprocess": 3, "noise": ("rootwrites",)},
    ),
    _c(
        "cont-h3-p1",
        "contention",
        "hogs-3 workers-2 preprocess-1",
        fault={"hogs": 3},
        fix={"hogs": 3},
        setup={"preprocess": 1},
    ),
    _c("wb-ckpt-w1", "writeback", "writer fs workers-1", fault={"workers": 1}, fix={"workers": 1}),
    _c("recl-184", "reclaim", "memcg-headroom-184", fault={"mem_headroom_mb": 184}),
    _c(
        "healthy-w5-p1-dirty",
        "starvation",
        "healthy workers-5 preprocess-1 noise-dirty",
        fault={"workers": 5},
        fix={"workers": 7},
        setup={"preprocess": 1, "noise": ("dirty",)},
    ),
    _c(
        "healthy-ra192-uncapped-rootwrites",
        "readahead",
        "healthy uncapped ra-192 fs workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 192},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("rootwrites",)},
    ),
    # The eighth held-out round (evals/split.py).
    _c(
        "ra64-iops150-w1",
        "readahead",
        "iops-150 ra-64 fs workers-1",
        fault={"read_ahead_kb": 64, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 150},
    ),
    _c(
        "ra128-bps24-raw-i2",
        "readahead",
        "bps-24m ra-128 raw workers-2",
        setup={"raw": True, "read_iops": None, "read_bps": 24 * 1024 * 1024},
        interval_s=2.0,
    ),
    _c(
        "starve-w1-p2-hog",
        "starvation",
        "workers-1 preprocess-2 noise-hog-elsewhere",
        fault={"workers": 1},
        setup={"noise": ("hog-elsewhere",)},
    ),
    _c(
        "cont-h2-w3",
        "contention",
        "hogs-2 workers-3 preprocess-2",
        fault={"hogs": 2, "workers": 3},
        fix={"hogs": 2},
    ),
    _c(
        "wb-ckpt-ra192",
        "writeback",
        "writer fs ra-192",
        fault={"read_ahead_kb": 192},
        fix={"read_ahead_kb": 192},
    ),
    _c("recl-200-mid", "reclaim", "memcg-headroom-200", fault={"mem_headroom_mb": 200}, onset="mid"),
    _c(
        "healthy-w3-p1-hog",
        "starvation",
        "healthy workers-3 preprocess-1 noise-hog-elsewhere",
        fault={"workers": 3},
        fix={"workers": 4},
        setup={"preprocess": 1, "noise": ("hog-elsewhere",)},
    ),
    _c(
        "healthy-ra768-uncapped-dirty",
        "readahead",
        "healthy uncapped ra-768 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 768},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("dirty",)},
    ),
    # The ninth held-out round (evals/split.py).
    _c(
        "ra96-iops120-w3",
        "readahead",
        "iops-120 ra-96 fs workers-3",
        fault={"read_ahead_kb": 96, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 120},
    ),
    _c(
        "ra32-iops400-raw",
        "readahead",
        "iops-400 ra-32 raw workers-2",
        fault={"read_ahead_kb": 32},
        setup={"raw": True, "read_iops": 400},
    ),
    _c(
        "starve-w0-p1-hog",
        "starvation",
        "workers-0 preprocess-1 noise-hog-elsewhere",
        setup={"preprocess": 1, "noise": ("hog-elsewhere",)},
    ),
    _c(
        "cont-h3-w1-mid",
        "contention",
        "hogs-3 workers-1 preprocess-2",
        fault={"hogs": 3, "workers": 1},
        fix={"hogs": 3},
        onset="mid",
    ),
    _c(
        "wb-ckpt-ra320",
        "writeback",
        "writer fs ra-320",
        fault={"read_ahead_kb": 320},
        fix={"read_ahead_kb": 320},
    ),
    _c("recl-232", "reclaim", "memcg-headroom-232", fault={"mem_headroom_mb": 232}),
    _c(
        "healthy-w2-p1-hog",
        "starvation",
        "healthy workers-2 preprocess-1 noise-hog-elsewhere",
        fault={"workers": 2},
        fix={"workers": 3},
        setup={"preprocess": 1, "noise": ("hog-elsewhere",)},
    ),
    _c(
        "healthy-ra640-uncapped-rootwrites-w3",
        "readahead",
        "healthy uncapped ra-640 fs workers-3 noise-rootwrites",
        fault={"read_ahead_kb": 640, "workers": 3},
        fix={"read_ahead_kb": 4096, "workers": 3},
        setup={"read_iops": None, "noise": ("rootwrites",)},
    ),
    # The tenth held-out round (evals/split.py).
    _c(
        "ra160-iops180-rootwrites",
        "readahead",
        "iops-180 ra-160 fs workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 160},
        setup={"read_iops": 180, "noise": ("rootwrites",)},
    ),
    _c(
        "ra128-bps32-raw-mid",
        "readahead",
        "bps-32m ra-128 raw workers-2",
        setup={"raw": True, "read_iops": None, "read_bps": 32 * 1024 * 1024},
        onset="mid",
    ),
    _c(
        "starve-w0-p3-memhog",
        "starvation",
        "workers-0 preprocess-3 noise-memhog",
        setup={"preprocess": 3, "noise": ("memhog",)},
    ),
    _c(
        "cont-h2-mid",
        "contention",
        "hogs-2 workers-2 preprocess-2",
        fault={"hogs": 2},
        fix={"hogs": 2},
        onset="mid",
    ),
    _c(
        "wb-ckpt-w3-mid",
        "writeback",
        "writer fs workers-3",
        fault={"workers": 3},
        fix={"workers": 3},
        onset="mid",
    ),
    _c("recl-216-i2", "reclaim", "memcg-headroom-216", fault={"mem_headroom_mb": 216}, interval_s=2.0),
    _c(
        "healthy-w4-p1-hog",
        "starvation",
        "healthy workers-4 preprocess-1 noise-hog-elsewhere",
        fault={"workers": 4},
        fix={"workers": 5},
        setup={"preprocess": 1, "noise": ("hog-elsewhere",)},
    ),
    _c(
        "healthy-ra256-uncapped-w1",
        "readahead",
        "healthy uncapped ra-256 fs workers-1",
        fault={"read_ahead_kb": 256, "workers": 1},
        fix={"read_ahead_kb": 4096, "workers": 1},
        setup={"read_iops": None},
    ),
    # The eleventh held-out round (evals/split.py).
    _c(
        "ra224-iops140-w1-mid",
        "readahead",
        "iops-140 ra-224 fs workers-1",
        fault={"read_ahead_kb": 224, "workers": 1},
        fix={"read_ahead_kb": 4096, "workers": 1},
        setup={"read_iops": 140},
        onset="mid",
    ),
    _c(
        "ra128-bps40-i2",
        "readahead",
        "bps-40m ra-128 fs workers-2",
        setup={"read_iops": None, "read_bps": 40 * 1024 * 1024},
        interval_s=2.0,
    ),
    _c(
        "starve-w1-p3-memhog",
        "starvation",
        "workers-1 preprocess-3 noise-memhog",
        fault={"workers": 1},
        setup={"preprocess": 3, "noise": ("memhog",)},
    ),
    _c(
        "cont-h3-w2-rootwrites",
        "contention",
        "hogs-3 workers-2 preprocess-2 noise-rootwrites",
        fault={"hogs": 3},
        fix={"hogs": 3},
        setup={"noise": ("rootwrites",)},
    ),
    _c(
        "wb-ckpt-ra128-i2",
        "writeback",
        "writer fs ra-128",
        fault={"read_ahead_kb": 128},
        fix={"read_ahead_kb": 128},
        interval_s=2.0,
    ),
    _c("recl-248-mid", "reclaim", "memcg-headroom-248", fault={"mem_headroom_mb": 248}, onset="mid"),
    _c(
        "healthy-w3-memhog-i2",
        "starvation",
        "healthy workers-3 preprocess-2 noise-memhog",
        fault={"workers": 3},
        fix={"workers": 4},
        setup={"noise": ("memhog",)},
        interval_s=2.0,
    ),
    _c(
        "healthy-ra320-uncapped-dirty-w3",
        "readahead",
        "healthy uncapped ra-320 fs workers-3 noise-dirty",
        fault={"read_ahead_kb": 320, "workers": 3},
        fix={"read_ahead_kb": 4096, "workers": 3},
        setup={"read_iops": None, "noise": ("dirty",)},
    ),
    # The twelfth held-out round (evals/split.py).
    _c(
        "ra176-iops110-raw-i2",
        "readahead",
        "iops-110 ra-176 raw workers-2",
        fault={"read_ahead_kb": 176},
        setup={"raw": True, "read_iops": 110},
        interval_s=2.0,
    ),
    _c(
        "ra96-bps28-mid",
        "readahead",
        "bps-28m ra-96 fs workers-2",
        fault={"read_ahead_kb": 96},
        setup={"read_iops": None, "read_bps": 28 * 1024 * 1024},
        onset="mid",
    ),
    _c(
        "starve-w1-p2-dirty",
        "starvation",
        "workers-1 preprocess-2 noise-dirty",
        fault={"workers": 1},
        setup={"noise": ("dirty",)},
    ),
    _c(
        "cont-h4-w3-mid",
        "contention",
        "hogs-4 workers-3 preprocess-2",
        fault={"hogs": 4, "workers": 3},
        fix={"hogs": 4},
        onset="mid",
    ),
    _c(
        "wb-ckpt-ra64-mid",
        "writeback",
        "writer fs ra-64",
        fault={"read_ahead_kb": 64},
        fix={"read_ahead_kb": 64},
        onset="mid",
    ),
    _c("recl-168-i2", "reclaim", "memcg-headroom-168", fault={"mem_headroom_mb": 168}, interval_s=2.0),
    _c(
        "healthy-w2-p1-rootwrites-i2",
        "starvation",
        "healthy workers-2 preprocess-1 noise-rootwrites",
        fault={"workers": 2},
        fix={"workers": 3},
        setup={"preprocess": 1, "noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "healthy-ra1536-uncapped-memhog",
        "readahead",
        "healthy uncapped ra-1536 fs workers-2 noise-memhog",
        fault={"read_ahead_kb": 1536},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("memhog",)},
    ),
    # The thirteenth held-out round (evals/split.py).
    _c(
        "ra144-iops130-w3-i2",
        "readahead",
        "iops-130 ra-144 fs workers-3",
        fault={"read_ahead_kb": 144, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 130},
        interval_s=2.0,
    ),
    _c(
        "ra112-bps36-raw",
        "readahead",
        "bps-36m ra-112 raw workers-2",
        fault={"read_ahead_kb": 112},
        setup={"raw": True, "read_iops": None, "read_bps": 36 * 1024 * 1024},
    ),
    _c(
        "starve-w0-p2-rootwrites-i2",
        "starvation",
        "workers-0 preprocess-2 noise-rootwrites",
        fault={"workers": 0},
        setup={"noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "cont-h5-w2-dirty",
        "contention",
        "hogs-5 workers-2 preprocess-2 noise-dirty",
        fault={"hogs": 5},
        fix={"hogs": 5},
        setup={"noise": ("dirty",)},
    ),
    _c(
        "wb-ckpt-w1-mid-i2",
        "writeback",
        "writer fs workers-1",
        fault={"workers": 1},
        fix={"workers": 1},
        onset="mid",
        interval_s=2.0,
    ),
    _c(
        "recl-228-mid-i2",
        "reclaim",
        "memcg-headroom-228",
        fault={"mem_headroom_mb": 228},
        onset="mid",
        interval_s=2.0,
    ),
    _c(
        "healthy-w3-p2-rootwrites",
        "starvation",
        "healthy workers-3 preprocess-2 noise-rootwrites",
        fault={"workers": 3},
        fix={"workers": 4},
        setup={"noise": ("rootwrites",)},
    ),
    _c(
        "healthy-ra896-uncapped-hog",
        "readahead",
        "healthy uncapped ra-896 fs workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 896},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("hog-elsewhere",)},
    ),
    # The fourteenth held-out round (evals/split.py).
    _c(
        "ra208-iops170-dirty-i2",
        "readahead",
        "iops-170 ra-208 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 208},
        setup={"read_iops": 170, "noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "ra128-bps44-w3",
        "readahead",
        "bps-44m ra-128 fs workers-3",
        fault={"workers": 3},
        fix={"workers": 3},
        setup={"read_iops": None, "read_bps": 44 * 1024 * 1024},
    ),
    _c(
        "starve-w0-p3-rootwrites-mid",
        "starvation",
        "workers-0 preprocess-3 noise-rootwrites",
        fault={"workers": 0},
        setup={"preprocess": 3, "noise": ("rootwrites",)},
        onset="mid",
    ),
    _c(
        "cont-h3-w3-memhog-i2",
        "contention",
        "hogs-3 workers-3 preprocess-2 noise-memhog",
        fault={"hogs": 3, "workers": 3},
        fix={"hogs": 3},
        setup={"noise": ("memhog",)},
        interval_s=2.0,
    ),
    _c(
        "wb-ckpt-ra384-i2",
        "writeback",
        "writer fs ra-384",
        fault={"read_ahead_kb": 384},
        fix={"read_ahead_kb": 384},
        interval_s=2.0,
    ),
    _c(
        "recl-196-dirty",
        "reclaim",
        "memcg-headroom-196 noise-dirty",
        fault={"mem_headroom_mb": 196},
        setup={"noise": ("dirty",)},
    ),
    _c(
        "healthy-w4-p1-memhog-i2",
        "starvation",
        "healthy workers-4 preprocess-1 noise-memhog",
        fault={"workers": 4},
        fix={"workers": 5},
        setup={"preprocess": 1, "noise": ("memhog",)},
        interval_s=2.0,
    ),
    _c(
        "healthy-ra3072-uncapped-rootwrites",
        "readahead",
        "healthy uncapped ra-3072 fs workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 3072},
        fix={"read_ahead_kb": 8192},
        setup={"read_iops": None, "noise": ("rootwrites",)},
    ),
    # The fifteenth held-out round (evals/split.py).
    _c(
        "ra96-iops250-raw-rootwrites",
        "readahead",
        "iops-250 ra-96 raw workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 96},
        setup={"raw": True, "read_iops": 250, "noise": ("rootwrites",)},
    ),
    _c(
        "ra192-bps48-raw",
        "readahead",
        "bps-48m ra-192 raw workers-2",
        fault={"read_ahead_kb": 192},
        setup={"raw": True, "read_iops": None, "read_bps": 48 * 1024 * 1024},
    ),
    _c(
        "starve-w1-p2-memhog-i2",
        "starvation",
        "workers-1 preprocess-2 noise-memhog",
        fault={"workers": 1},
        setup={"noise": ("memhog",)},
        interval_s=2.0,
    ),
    _c(
        "cont-h3-w2-memhog",
        "contention",
        "hogs-3 workers-2 preprocess-2 noise-memhog",
        fault={"hogs": 3},
        fix={"hogs": 3},
        setup={"noise": ("memhog",)},
    ),
    _c(
        "cont-h2-w2-dirty-i2",
        "contention",
        "hogs-2 workers-2 preprocess-2 noise-dirty",
        fault={"hogs": 2},
        fix={"hogs": 2},
        setup={"noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "wb-ckpt-ra224-mid-i2",
        "writeback",
        "writer fs ra-224",
        fault={"read_ahead_kb": 224},
        fix={"read_ahead_kb": 224},
        onset="mid",
        interval_s=2.0,
    ),
    _c(
        "recl-204-rootwrites-i2",
        "reclaim",
        "memcg-headroom-204 noise-rootwrites",
        fault={"mem_headroom_mb": 204},
        setup={"noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "healthy-w2-p3-hog",
        "starvation",
        "healthy workers-2 preprocess-3 noise-hog-elsewhere",
        fault={"workers": 2},
        fix={"workers": 3},
        setup={"preprocess": 3, "noise": ("hog-elsewhere",)},
    ),
    # The sixteenth held-out round (evals/split.py).
    _c(
        "ra128-iops160-w3",
        "readahead",
        "iops-160 ra-128 fs workers-3",
        fault={"workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 160},
    ),
    _c(
        "ra80-iops120-dirty",
        "readahead",
        "iops-120 ra-80 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 80},
        setup={"read_iops": 120, "noise": ("dirty",)},
    ),
    _c(
        "ra256-bps56-rootwrites",
        "readahead",
        "bps-56m ra-256 fs workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 256},
        setup={"read_iops": None, "read_bps": 56 * 1024 * 1024, "noise": ("rootwrites",)},
    ),
    _c(
        "cont-h4-w2-rootwrites-i2",
        "contention",
        "hogs-4 workers-2 preprocess-2 noise-rootwrites",
        fault={"hogs": 4},
        fix={"hogs": 4},
        setup={"noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "starve-w0-p2-dirty-mid",
        "starvation",
        "workers-0 preprocess-2 noise-dirty",
        fault={"workers": 0},
        setup={"noise": ("dirty",)},
        onset="mid",
    ),
    _c("wb-ckpt-p1-i2", "writeback", "writer fs preprocess-1", setup={"preprocess": 1}, interval_s=2.0),
    _c(
        "recl-212-memhog",
        "reclaim",
        "memcg-headroom-212 noise-memhog",
        fault={"mem_headroom_mb": 212},
        setup={"noise": ("memhog",)},
    ),
    _c(
        "healthy-w3-p3-dirty",
        "starvation",
        "healthy workers-3 preprocess-3 noise-dirty",
        fault={"workers": 3},
        fix={"workers": 4},
        setup={"preprocess": 3, "noise": ("dirty",)},
    ),
    # The seventeenth held-out round (evals/split.py).
    _c(
        "ra48-iops200-w1-mid",
        "readahead",
        "iops-200 ra-48 fs workers-1",
        fault={"read_ahead_kb": 48, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 200},
        onset="mid",
    ),
    _c(
        "ra64-iops90-hog",
        "readahead",
        "iops-90 ra-64 fs workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 64},
        setup={"read_iops": 90, "noise": ("hog-elsewhere",)},
    ),
    _c(
        "ra224-bps64-w3-i2",
        "readahead",
        "bps-64m ra-224 fs workers-3",
        fault={"read_ahead_kb": 224, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": None, "read_bps": 64 * 1024 * 1024},
        interval_s=2.0,
    ),
    _c(
        "starve-w1-p3-dirty-i2",
        "starvation",
        "workers-1 preprocess-3 noise-dirty",
        fault={"workers": 1},
        setup={"preprocess": 3, "noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "cont-h3-w1-dirty",
        "contention",
        "hogs-3 workers-1 preprocess-2 noise-dirty",
        fault={"hogs": 3, "workers": 1},
        fix={"hogs": 3},
        setup={"noise": ("dirty",)},
    ),
    _c(
        "wb-ckpt-w3-i2",
        "writeback",
        "writer fs workers-3",
        fault={"workers": 3},
        fix={"workers": 3},
        interval_s=2.0,
    ),
    _c(
        "recl-220-hog",
        "reclaim",
        "memcg-headroom-220 noise-hog-elsewhere",
        fault={"mem_headroom_mb": 220},
        setup={"noise": ("hog-elsewhere",)},
    ),
    _c(
        "healthy-w4-p3-rootwrites",
        "starvation",
        "healthy workers-4 preprocess-3 noise-rootwrites",
        fault={"workers": 4},
        fix={"workers": 6},
        setup={"preprocess": 3, "noise": ("rootwrites",)},
    ),
    # The eighteenth held-out round (evals/split.py).
    _c(
        "ra96-iops180-w3-i2",
        "readahead",
        "iops-180 ra-96 fs workers-3",
        fault={"read_ahead_kb": 96, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 180},
        interval_s=2.0,
    ),
    _c(
        "ra144-iops100-raw-memhog",
        "readahead",
        "iops-100 ra-144 raw workers-2 noise-memhog",
        fault={"read_ahead_kb": 144},
        setup={"raw": True, "read_iops": 100, "noise": ("memhog",)},
    ),
    _c(
        "ra160-bps40-dirty",
        "readahead",
        "bps-40m ra-160 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 160},
        setup={"read_iops": None, "read_bps": 40 * 1024 * 1024, "noise": ("dirty",)},
    ),
    _c(
        "starve-w1-p2-rootwrites-mid",
        "starvation",
        "workers-1 preprocess-2 noise-rootwrites",
        fault={"workers": 1},
        setup={"noise": ("rootwrites",)},
        onset="mid",
    ),
    _c(
        "cont-h5-w3",
        "contention",
        "hogs-5 workers-3 preprocess-2",
        fault={"hogs": 5, "workers": 3},
        fix={"hogs": 5},
    ),
    _c(
        "wb-ckpt-w1-i2",
        "writeback",
        "writer fs workers-1",
        fault={"workers": 1},
        fix={"workers": 1},
        interval_s=2.0,
    ),
    _c(
        "recl-188-mid-i2",
        "reclaim",
        "memcg-headroom-188",
        fault={"mem_headroom_mb": 188},
        onset="mid",
        interval_s=2.0,
    ),
    _c(
        "healthy-ra1280-uncapped-memhog-w3",
        "readahead",
        "healthy uncapped ra-1280 fs workers-3 noise-memhog",
        fault={"read_ahead_kb": 1280, "workers": 3},
        fix={"read_ahead_kb": 4096, "workers": 3},
        setup={"read_iops": None, "noise": ("memhog",)},
    ),
    # The nineteenth held-out round (evals/split.py).
    _c(
        "ra72-iops160-w1",
        "readahead",
        "iops-160 ra-72 fs workers-1",
        fault={"read_ahead_kb": 72, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 160},
    ),
    _c(
        "ra192-bps52-mid",
        "readahead",
        "bps-52m ra-192 fs workers-2",
        fault={"read_ahead_kb": 192},
        setup={"read_iops": None, "read_bps": 52 * 1024 * 1024},
        onset="mid",
    ),
    _c(
        "ra120-iops110-raw-rootwrites-i2",
        "readahead",
        "iops-110 ra-120 raw workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 120},
        setup={"raw": True, "read_iops": 110, "noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "starve-w0-p1-dirty-i2",
        "starvation",
        "workers-0 preprocess-1 noise-dirty",
        fault={"workers": 0},
        setup={"preprocess": 1, "noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "cont-h3-w1-memhog-i2",
        "contention",
        "hogs-3 workers-1 preprocess-2 noise-memhog",
        fault={"hogs": 3, "workers": 1},
        fix={"hogs": 3},
        setup={"noise": ("memhog",)},
        interval_s=2.0,
    ),
    _c(
        "wb-ckpt-ra448",
        "writeback",
        "writer fs ra-448",
        fault={"read_ahead_kb": 448},
        fix={"read_ahead_kb": 448},
    ),
    _c(
        "recl-180-mid-rootwrites",
        "reclaim",
        "memcg-headroom-180 noise-rootwrites",
        fault={"mem_headroom_mb": 180},
        setup={"noise": ("rootwrites",)},
        onset="mid",
    ),
    _c(
        "healthy-ra2560-uncapped-dirty",
        "readahead",
        "healthy uncapped ra-2560 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 2560},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("dirty",)},
    ),
    # The twentieth held-out round (evals/split.py).
    _c(
        "ra40-iops260-raw-w3",
        "readahead",
        "iops-260 ra-40 raw workers-3",
        fault={"read_ahead_kb": 40, "workers": 3},
        fix={"workers": 3},
        setup={"raw": True, "read_iops": 260},
    ),
    _c(
        "ra320-iops70-mid-i2",
        "readahead",
        "iops-70 ra-320 fs workers-2",
        fault={"read_ahead_kb": 320},
        setup={"read_iops": 70},
        onset="mid",
        interval_s=2.0,
    ),
    _c(
        "ra144-bps30-raw-w1",
        "readahead",
        "bps-30m ra-144 raw workers-1",
        fault={"read_ahead_kb": 144, "workers": 1},
        fix={"workers": 1},
        setup={"raw": True, "read_iops": None, "read_bps": 30 * 1024 * 1024},
    ),
    _c(
        "starve-w1-p3-hog-mid",
        "starvation",
        "workers-1 preprocess-3 noise-hog-elsewhere",
        fault={"workers": 1},
        setup={"preprocess": 3, "noise": ("hog-elsewhere",)},
        onset="mid",
    ),
    _c(
        "cont-h4-w2-rootwrites-mid",
        "contention",
        "hogs-4 workers-2 preprocess-2 noise-rootwrites",
        fault={"hogs": 4},
        fix={"hogs": 4},
        setup={"noise": ("rootwrites",)},
        onset="mid",
    ),
    _c(
        "wb-ckpt-w2-memhog-i2",
        "writeback",
        "writer fs workers-2 noise-memhog",
        setup={"noise": ("memhog",)},
        interval_s=2.0,
    ),
    _c(
        "recl-196-hog-i2",
        "reclaim",
        "memcg-headroom-196 noise-hog-elsewhere",
        fault={"mem_headroom_mb": 196},
        setup={"noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    _c(
        "healthy-ra768-uncapped-rootwrites",
        "readahead",
        "healthy uncapped ra-768 fs workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 768},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("rootwrites",)},
    ),
    # The twenty-first held-out round (evals/split.py).
    _c(
        "ra1024-bps40",
        "readahead",
        "bps-40m ra-1024 fs workers-2",
        fault={"read_ahead_kb": 1024},
        setup={"read_iops": None, "read_bps": 40 * 1024 * 1024},
    ),
    _c(
        "ra768-iops60",
        "readahead",
        "iops-60 ra-768 fs workers-2",
        fault={"read_ahead_kb": 768},
        setup={"read_iops": 60},
    ),
    _c(
        "ra640-iops90-w1-i2",
        "readahead",
        "iops-90 ra-640 fs workers-1",
        fault={"read_ahead_kb": 640, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 90},
        interval_s=2.0,
    ),
    _c(
        "starve-w1-p2-dirty-mid",
        "starvation",
        "workers-1 preprocess-2 noise-dirty",
        fault={"workers": 1},
        setup={"noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "cont-h2-w1-i2",
        "contention",
        "hogs-2 workers-1 preprocess-2",
        fault={"hogs": 2, "workers": 1},
        fix={"hogs": 2},
        interval_s=2.0,
    ),
    _c(
        "wb-ckpt-w1-rootwrites",
        "writeback",
        "writer fs workers-1 noise-rootwrites",
        fault={"workers": 1},
        fix={"workers": 1},
        setup={"noise": ("rootwrites",)},
    ),
    _c(
        "recl-212-mid-dirty",
        "reclaim",
        "memcg-headroom-212 noise-dirty",
        fault={"mem_headroom_mb": 212},
        setup={"noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "healthy-ra896-uncapped-memhog-i2",
        "readahead",
        "healthy uncapped ra-896 fs workers-2 noise-memhog",
        fault={"read_ahead_kb": 896},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("memhog",)},
        interval_s=2.0,
    ),
    # The twenty-second held-out round (evals/split.py).
    _c(
        "ra896-iops80-raw",
        "readahead",
        "iops-80 ra-896 raw workers-2",
        fault={"read_ahead_kb": 896},
        setup={"raw": True, "read_iops": 80},
    ),
    _c(
        "ra576-bps48",
        "readahead",
        "bps-48m ra-576 fs workers-2",
        fault={"read_ahead_kb": 576},
        setup={"read_iops": None, "read_bps": 48 * 1024 * 1024},
    ),
    _c(
        "ra96-iops140-w1-dirty",
        "readahead",
        "iops-140 ra-96 fs workers-1 noise-dirty",
        fault={"read_ahead_kb": 96, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 140, "noise": ("dirty",)},
    ),
    _c(
        "starve-w0-p2-memhog-i2",
        "starvation",
        "workers-0 preprocess-2 noise-memhog",
        setup={"noise": ("memhog",)},
        interval_s=2.0,
    ),
    _c(
        "cont-h5-w1-mid",
        "contention",
        "hogs-5 workers-1 preprocess-2",
        fault={"hogs": 5, "workers": 1},
        fix={"hogs": 5},
        onset="mid",
    ),
    _c(
        "wb-ckpt-ra96-i2",
        "writeback",
        "writer fs ra-96",
        fault={"read_ahead_kb": 96},
        fix={"read_ahead_kb": 96},
        interval_s=2.0,
    ),
    _c(
        "recl-204-rootwrites",
        "reclaim",
        "memcg-headroom-204 noise-rootwrites",
        fault={"mem_headroom_mb": 204},
        setup={"noise": ("rootwrites",)},
    ),
    _c(
        "healthy-ra1792-uncapped-rootwrites-i2",
        "readahead",
        "healthy uncapped ra-1792 fs workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 1792},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    # The twenty-third held-out round (evals/split.py).
    _c(
        "ra704-iops70",
        "readahead",
        "iops-70 ra-704 fs workers-2",
        fault={"read_ahead_kb": 704},
        setup={"read_iops": 70},
    ),
    _c(
        "ra832-bps56-raw",
        "readahead",
        "bps-56m ra-832 raw workers-2",
        fault={"read_ahead_kb": 832},
        setup={"raw": True, "read_iops": None, "read_bps": 56 * 1024 * 1024},
    ),
    _c(
        "ra176-iops120-w3-rootwrites",
        "readahead",
        "iops-120 ra-176 fs workers-3 noise-rootwrites",
        fault={"read_ahead_kb": 176, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 120, "noise": ("rootwrites",)},
    ),
    _c(
        "starve-w1-p2-memhog-mid",
        "starvation",
        "workers-1 preprocess-2 noise-memhog",
        fault={"workers": 1},
        setup={"noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "cont-h3-w2-dirty",
        "contention",
        "hogs-3 workers-2 preprocess-2 noise-dirty",
        fault={"hogs": 3},
        fix={"hogs": 3},
        setup={"noise": ("dirty",)},
    ),
    _c(
        "wb-ckpt-w3-memhog-mid",
        "writeback",
        "writer fs workers-3 noise-memhog",
        fault={"workers": 3},
        fix={"workers": 3},
        setup={"noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "recl-188-hog",
        "reclaim",
        "memcg-headroom-188 noise-hog-elsewhere",
        fault={"mem_headroom_mb": 188},
        setup={"noise": ("hog-elsewhere",)},
    ),
    _c(
        "healthy-ra1152-uncapped-dirty-w3",
        "readahead",
        "healthy uncapped ra-1152 fs workers-3 noise-dirty",
        fault={"read_ahead_kb": 1152, "workers": 3},
        fix={"read_ahead_kb": 4096, "workers": 3},
        setup={"read_iops": None, "noise": ("dirty",)},
    ),
    # The twenty-fourth held-out round (evals/split.py).
    _c(
        "ra960-bps64",
        "readahead",
        "bps-64m ra-960 fs workers-2",
        fault={"read_ahead_kb": 960},
        setup={"read_iops": None, "read_bps": 64 * 1024 * 1024},
    ),
    _c(
        "ra608-iops100-raw-w3",
        "readahead",
        "iops-100 ra-608 raw workers-3",
        fault={"read_ahead_kb": 608, "workers": 3},
        fix={"workers": 3},
        setup={"raw": True, "read_iops": 100},
    ),
    _c(
        "ra672-bps36-w1-i2",
        "readahead",
        "bps-36m ra-672 fs workers-1",
        fault={"read_ahead_kb": 672, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": None, "read_bps": 36 * 1024 * 1024},
        interval_s=2.0,
    ),
    _c(
        "ra80-iops160-raw-memhog",
        "readahead",
        "iops-160 ra-80 raw workers-2 noise-memhog",
        fault={"read_ahead_kb": 80},
        setup={"raw": True, "read_iops": 160, "noise": ("memhog",)},
    ),
    _c(
        "starve-w0-p1-rootwrites-i2",
        "starvation",
        "workers-0 preprocess-1 noise-rootwrites",
        setup={"preprocess": 1, "noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "cont-h4-w1-memhog",
        "contention",
        "hogs-4 workers-1 preprocess-2 noise-memhog",
        fault={"hogs": 4, "workers": 1},
        fix={"hogs": 4},
        setup={"noise": ("memhog",)},
    ),
    _c(
        "wb-ckpt-ra1024-w1",
        "writeback",
        "writer fs ra-1024 workers-1",
        fault={"read_ahead_kb": 1024, "workers": 1},
        fix={"read_ahead_kb": 1024, "workers": 1},
    ),
    _c(
        "healthy-ra1408-uncapped-hog",
        "readahead",
        "healthy uncapped ra-1408 fs workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 1408},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("hog-elsewhere",)},
    ),
    # The twenty-fifth held-out round (evals/split.py).
    _c(
        "ra736-iops110-w1",
        "readahead",
        "iops-110 ra-736 fs workers-1",
        fault={"read_ahead_kb": 736, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 110},
    ),
    _c(
        "ra544-bps44-raw",
        "readahead",
        "bps-44m ra-544 raw workers-2",
        fault={"read_ahead_kb": 544},
        setup={"raw": True, "read_iops": None, "read_bps": 44 * 1024 * 1024},
    ),
    _c(
        "ra192-bps40-w3",
        "readahead",
        "bps-40m ra-192 fs workers-3",
        fault={"read_ahead_kb": 192, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": None, "read_bps": 40 * 1024 * 1024},
    ),
    _c(
        "ra112-iops140-raw-hog",
        "readahead",
        "iops-140 ra-112 raw workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 112},
        setup={"raw": True, "read_iops": 140, "noise": ("hog-elsewhere",)},
    ),
    _c(
        "starve-w0-p3-dirty-mid",
        "starvation",
        "workers-0 preprocess-3 noise-dirty",
        setup={"preprocess": 3, "noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "cont-h2-w2-memhog-i2",
        "contention",
        "hogs-2 workers-2 preprocess-2 noise-memhog",
        fault={"hogs": 2},
        fix={"hogs": 2},
        setup={"noise": ("memhog",)},
        interval_s=2.0,
    ),
    _c(
        "recl-200-mid-hog",
        "reclaim",
        "memcg-headroom-200 noise-hog-elsewhere",
        fault={"mem_headroom_mb": 200},
        setup={"noise": ("hog-elsewhere",)},
        onset="mid",
    ),
    _c(
        "healthy-ra2304-uncapped-memhog",
        "readahead",
        "healthy uncapped ra-2304 fs workers-2 noise-memhog",
        fault={"read_ahead_kb": 2304},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("memhog",)},
    ),
    # The twenty-sixth held-out round (evals/split.py).
    _c(
        "ra656-iops90-raw",
        "readahead",
        "iops-90 ra-656 raw workers-2",
        fault={"read_ahead_kb": 656},
        setup={"raw": True, "read_iops": 90},
    ),
    _c(
        "ra800-iops70-w3",
        "readahead",
        "iops-70 ra-800 fs workers-3",
        fault={"read_ahead_kb": 800, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 70},
    ),
    _c(
        "ra720-bps48-w1",
        "readahead",
        "bps-48m ra-720 fs workers-1",
        fault={"read_ahead_kb": 720, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": None, "read_bps": 48 * 1024 * 1024},
    ),
    _c(
        "ra176-iops150-w1-mid",
        "readahead",
        "iops-150 ra-176 fs workers-1",
        fault={"read_ahead_kb": 176, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 150},
        onset="mid",
    ),
    _c(
        "starve-w1-p3-hog-i2",
        "starvation",
        "workers-1 preprocess-3 noise-hog-elsewhere",
        fault={"workers": 1},
        setup={"preprocess": 3, "noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    _c(
        "cont-h3-w1-dirty-i2",
        "contention",
        "hogs-3 workers-1 preprocess-2 noise-dirty",
        fault={"hogs": 3, "workers": 1},
        fix={"hogs": 3},
        setup={"noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "wb-ckpt-ra640-w3",
        "writeback",
        "writer fs ra-640 workers-3",
        fault={"read_ahead_kb": 640, "workers": 3},
        fix={"read_ahead_kb": 640, "workers": 3},
    ),
    _c(
        "healthy-ra704-uncapped-rootwrites-w2",
        "readahead",
        "healthy uncapped ra-704 fs workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 704},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("rootwrites",)},
    ),
    # The twenty-seventh held-out round (evals/split.py).
    _c(
        "ra848-iops60-raw",
        "readahead",
        "iops-60 ra-848 raw workers-2",
        fault={"read_ahead_kb": 848},
        setup={"raw": True, "read_iops": 60},
    ),
    _c(
        "ra592-bps40-w3",
        "readahead",
        "bps-40m ra-592 fs workers-3",
        fault={"read_ahead_kb": 592, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": None, "read_bps": 40 * 1024 * 1024},
    ),
    _c(
        "ra704-iops120-mid",
        "readahead",
        "iops-120 ra-704 fs workers-2",
        fault={"read_ahead_kb": 704},
        setup={"read_iops": 120},
        onset="mid",
    ),
    _c(
        "ra160-bps32-w1",
        "readahead",
        "bps-32m ra-160 fs workers-1",
        fault={"read_ahead_kb": 160, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": None, "read_bps": 32 * 1024 * 1024},
    ),
    _c(
        "starve-w0-p1-memhog-mid",
        "starvation",
        "workers-0 preprocess-1 noise-memhog",
        setup={"preprocess": 1, "noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "cont-h2-w1-rootwrites-mid",
        "contention",
        "hogs-2 workers-1 preprocess-2 noise-rootwrites",
        fault={"hogs": 2, "workers": 1},
        fix={"hogs": 2},
        setup={"noise": ("rootwrites",)},
        onset="mid",
    ),
    _c(
        "recl-160-dirty-i2",
        "reclaim",
        "memcg-headroom-160 noise-dirty",
        fault={"mem_headroom_mb": 160},
        setup={"noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "healthy-ra896-uncapped-hog-w3",
        "readahead",
        "healthy uncapped ra-896 fs workers-3 noise-hog-elsewhere",
        fault={"read_ahead_kb": 896, "workers": 3},
        fix={"read_ahead_kb": 4096, "workers": 3},
        setup={"read_iops": None, "noise": ("hog-elsewhere",)},
    ),
    # The twenty-eighth held-out round (evals/split.py).
    _c(
        "ra912-iops80-w3",
        "readahead",
        "iops-80 ra-912 fs workers-3",
        fault={"read_ahead_kb": 912, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 80},
    ),
    _c(
        "ra400-iops130-w1-dirty",
        "readahead",
        "iops-130 ra-400 fs workers-1 noise-dirty",
        fault={"read_ahead_kb": 400, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 130, "noise": ("dirty",)},
    ),
    _c(
        "ra544-bps36-raw-w1",
        "readahead",
        "bps-36m ra-544 raw workers-1",
        fault={"read_ahead_kb": 544, "workers": 1},
        fix={"workers": 1},
        setup={"raw": True, "read_iops": None, "read_bps": 36 * 1024 * 1024},
    ),
    _c(
        "ra208-bps24-mid",
        "readahead",
        "bps-24m ra-208 fs workers-2",
        fault={"read_ahead_kb": 208},
        setup={"read_iops": None, "read_bps": 24 * 1024 * 1024},
        onset="mid",
    ),
    _c(
        "starve-w1-p3-rootwrites-i2",
        "starvation",
        "workers-1 preprocess-3 noise-rootwrites",
        fault={"workers": 1},
        setup={"preprocess": 3, "noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "cont-h3-w2-memhog-mid",
        "contention",
        "hogs-3 workers-2 preprocess-2 noise-memhog",
        fault={"hogs": 3},
        fix={"hogs": 3},
        setup={"noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "recl-236-hog",
        "reclaim",
        "memcg-headroom-236 noise-hog-elsewhere",
        fault={"mem_headroom_mb": 236},
        setup={"noise": ("hog-elsewhere",)},
    ),
    _c(
        "healthy-ra448-uncapped-memhog-w1",
        "readahead",
        "healthy uncapped ra-448 fs workers-1 noise-memhog",
        fault={"read_ahead_kb": 448, "workers": 1},
        fix={"read_ahead_kb": 4096, "workers": 1},
        setup={"read_iops": None, "noise": ("memhog",)},
    ),
    # The twenty-ninth held-out round (evals/split.py).
    _c(
        "ra864-iops70-raw",
        "readahead",
        "iops-70 ra-864 raw workers-2",
        fault={"read_ahead_kb": 864},
        setup={"raw": True, "read_iops": 70},
    ),
    _c(
        "ra816-iops100-w1",
        "readahead",
        "iops-100 ra-816 fs workers-1",
        fault={"read_ahead_kb": 816, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 100},
    ),
    _c(
        "ra288-iops190-rootwrites",
        "readahead",
        "iops-190 ra-288 fs workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 288},
        setup={"read_iops": 190, "noise": ("rootwrites",)},
    ),
    _c(
        "ra640-bps44-w3",
        "readahead",
        "bps-44m ra-640 fs workers-3",
        fault={"read_ahead_kb": 640, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": None, "read_bps": 44 * 1024 * 1024},
    ),
    _c(
        "starve-w0-p3-hog-i2",
        "starvation",
        "workers-0 preprocess-3 noise-hog-elsewhere",
        setup={"preprocess": 3, "noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    _c(
        "cont-h4-w2-dirty-mid",
        "contention",
        "hogs-4 workers-2 preprocess-2 noise-dirty",
        fault={"hogs": 4},
        fix={"hogs": 4},
        setup={"noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "wb-ckpt-ra768-mid-i2",
        "writeback",
        "writer fs ra-768",
        fault={"read_ahead_kb": 768},
        fix={"read_ahead_kb": 768},
        onset="mid",
        interval_s=2.0,
    ),
    _c(
        "healthy-ra576-uncapped-dirty-w3",
        "readahead",
        "healthy uncapped ra-576 fs workers-3 noise-dirty",
        fault={"read_ahead_kb": 576, "workers": 3},
        fix={"read_ahead_kb": 4096, "workers": 3},
        setup={"read_iops": None, "noise": ("dirty",)},
    ),
    # The thirtieth held-out round (evals/split.py).
    _c(
        "ra832-iops90-raw",
        "readahead",
        "iops-90 ra-832 raw workers-2",
        fault={"read_ahead_kb": 832},
        setup={"raw": True, "read_iops": 90},
    ),
    _c(
        "ra880-iops60-w1",
        "readahead",
        "iops-60 ra-880 fs workers-1",
        fault={"read_ahead_kb": 880, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 60},
    ),
    _c(
        "ra352-iops150-raw-memhog",
        "readahead",
        "iops-150 ra-352 raw workers-2 noise-memhog",
        fault={"read_ahead_kb": 352},
        setup={"raw": True, "read_iops": 150, "noise": ("memhog",)},
    ),
    _c(
        "ra256-bps32-w3",
        "readahead",
        "bps-32m ra-256 fs workers-3",
        fault={"read_ahead_kb": 256, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": None, "read_bps": 32 * 1024 * 1024},
    ),
    _c(
        "starve-w1-p2-rootwrites-i2",
        "starvation",
        "workers-1 preprocess-2 noise-rootwrites",
        fault={"workers": 1},
        setup={"preprocess": 2, "noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "cont-h5-w2-memhog",
        "contention",
        "hogs-5 workers-2 preprocess-2 noise-memhog",
        fault={"hogs": 5},
        fix={"hogs": 5},
        setup={"noise": ("memhog",)},
    ),
    _c(
        "recl-244-dirty-mid",
        "reclaim",
        "memcg-headroom-244 noise-dirty",
        fault={"mem_headroom_mb": 244},
        setup={"noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "healthy-ra1664-uncapped-rootwrites-w3",
        "readahead",
        "healthy uncapped ra-1664 fs workers-3 noise-rootwrites",
        fault={"read_ahead_kb": 1664, "workers": 3},
        fix={"read_ahead_kb": 4096, "workers": 3},
        setup={"read_iops": None, "noise": ("rootwrites",)},
    ),
    # The thirty-first held-out round (evals/split.py).
    _c(
        "ra840-iops80-w1",
        "readahead",
        "iops-80 ra-840 fs workers-1",
        fault={"read_ahead_kb": 840, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 80},
    ),
    _c(
        "ra928-iops100-raw",
        "readahead",
        "iops-100 ra-928 raw workers-2",
        fault={"read_ahead_kb": 928},
        setup={"raw": True, "read_iops": 100},
    ),
    _c(
        "ra480-iops110-rootwrites-i2",
        "readahead",
        "iops-110 ra-480 fs workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 480},
        setup={"read_iops": 110, "noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "ra320-bps28-raw-w3",
        "readahead",
        "bps-28m ra-320 raw workers-3",
        fault={"read_ahead_kb": 320, "workers": 3},
        fix={"workers": 3},
        setup={"raw": True, "read_iops": None, "read_bps": 28 * 1024 * 1024},
    ),
    _c(
        "starve-w0-p2-hog-mid",
        "starvation",
        "workers-0 preprocess-2 noise-hog-elsewhere",
        setup={"noise": ("hog-elsewhere",)},
        onset="mid",
    ),
    _c(
        "cont-h2-w3-memhog-mid",
        "contention",
        "hogs-2 workers-3 preprocess-2 noise-memhog",
        fault={"hogs": 2, "workers": 3},
        fix={"hogs": 2},
        setup={"noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "wb-ckpt-ra896-rootwrites",
        "writeback",
        "writer fs ra-896 noise-rootwrites",
        fault={"read_ahead_kb": 896},
        fix={"read_ahead_kb": 896},
        setup={"noise": ("rootwrites",)},
    ),
    _c(
        "healthy-ra2816-uncapped-memhog",
        "readahead",
        "healthy uncapped ra-2816 fs workers-2 noise-memhog",
        fault={"read_ahead_kb": 2816},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("memhog",)},
    ),
    # The thirty-second held-out round (evals/split.py).
    _c(
        "ra224-iops140-raw-w1",
        "readahead",
        "iops-140 ra-224 raw workers-1",
        fault={"read_ahead_kb": 224, "workers": 1},
        fix={"workers": 1},
        setup={"raw": True, "read_iops": 140},
    ),
    _c(
        "ra96-iops280-w3-mid",
        "readahead",
        "iops-280 ra-96 fs workers-3",
        fault={"read_ahead_kb": 96, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 280},
        onset="mid",
    ),
    _c(
        "ra384-bps48-dirty",
        "readahead",
        "bps-48m ra-384 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 384},
        setup={"read_iops": None, "read_bps": 48 * 1024 * 1024, "noise": ("dirty",)},
    ),
    _c(
        "ra40-iops60-hog-i2",
        "readahead",
        "iops-60 ra-40 fs workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 40},
        setup={"read_iops": 60, "noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    _c(
        "starve-w1-p3-memhog-mid",
        "starvation",
        "workers-1 preprocess-3 noise-memhog",
        fault={"workers": 1},
        setup={"preprocess": 3, "noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "cont-h3-w1-rootwrites",
        "contention",
        "hogs-3 workers-1 preprocess-2 noise-rootwrites",
        fault={"hogs": 3, "workers": 1},
        fix={"hogs": 3},
        setup={"noise": ("rootwrites",)},
    ),
    _c(
        "recl-228-hog-i2",
        "reclaim",
        "memcg-headroom-228 noise-hog-elsewhere",
        fault={"mem_headroom_mb": 228},
        setup={"noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    _c(
        "healthy-ra352-uncapped-dirty",
        "readahead",
        "healthy uncapped ra-352 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 352},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("dirty",)},
    ),
    # The thirty-third held-out round (evals/split.py).
    _c(
        "ra160-iops240-raw-w3-i2",
        "readahead",
        "iops-240 ra-160 raw workers-3",
        fault={"read_ahead_kb": 160, "workers": 3},
        fix={"workers": 3},
        setup={"raw": True, "read_iops": 240},
        interval_s=2.0,
    ),
    _c(
        "ra56-iops120-rootwrites-mid",
        "readahead",
        "iops-120 ra-56 fs workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 56},
        setup={"read_iops": 120, "noise": ("rootwrites",)},
        onset="mid",
    ),
    _c(
        "ra448-iops50-w1-memhog",
        "readahead",
        "iops-50 ra-448 fs workers-1 noise-memhog",
        fault={"read_ahead_kb": 448, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 50, "noise": ("memhog",)},
    ),
    _c(
        "ra272-bps20-raw",
        "readahead",
        "bps-20m ra-272 raw workers-2",
        fault={"read_ahead_kb": 272},
        setup={"raw": True, "read_iops": None, "read_bps": 20 * 1024 * 1024},
    ),
    _c(
        "starve-w0-p4-dirty",
        "starvation",
        "workers-0 preprocess-4 noise-dirty",
        setup={"preprocess": 4, "noise": ("dirty",)},
    ),
    _c(
        "cont-h4-w3-i2",
        "contention",
        "hogs-4 workers-3 preprocess-2",
        fault={"hogs": 4, "workers": 3},
        fix={"hogs": 4},
        interval_s=2.0,
    ),
    _c(
        "wb-ckpt-ra256-memhog",
        "writeback",
        "writer fs ra-256 noise-memhog",
        fault={"read_ahead_kb": 256},
        fix={"read_ahead_kb": 256},
        setup={"noise": ("memhog",)},
    ),
    _c(
        "healthy-ra224-uncapped-hog",
        "readahead",
        "healthy uncapped ra-224 fs workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 224},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("hog-elsewhere",)},
    ),
    # The thirty-fourth held-out round (evals/split.py).
    _c(
        "ra200-iops130-raw-w1-mid",
        "readahead",
        "iops-130 ra-200 raw workers-1",
        fault={"read_ahead_kb": 200, "workers": 1},
        fix={"workers": 1},
        setup={"raw": True, "read_iops": 130},
        onset="mid",
    ),
    _c(
        "ra88-iops210-dirty-i2",
        "readahead",
        "iops-210 ra-88 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 88},
        setup={"read_iops": 210, "noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "ra416-iops60-w3-hog",
        "readahead",
        "iops-60 ra-416 fs workers-3 noise-hog-elsewhere",
        fault={"read_ahead_kb": 416, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 60, "noise": ("hog-elsewhere",)},
    ),
    _c(
        "ra304-bps36-w1",
        "readahead",
        "bps-36m ra-304 fs workers-1",
        fault={"read_ahead_kb": 304, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": None, "read_bps": 36 * 1024 * 1024},
    ),
    _c(
        "starve-w1-p4-rootwrites",
        "starvation",
        "workers-1 preprocess-4 noise-rootwrites",
        fault={"workers": 1},
        setup={"preprocess": 4, "noise": ("rootwrites",)},
    ),
    _c(
        "cont-h5-w1-dirty-i2",
        "contention",
        "hogs-5 workers-1 preprocess-2 noise-dirty",
        fault={"hogs": 5, "workers": 1},
        fix={"hogs": 5},
        setup={"noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "recl-208-memhog-mid",
        "reclaim",
        "memcg-headroom-208 noise-memhog",
        fault={"mem_headroom_mb": 208},
        setup={"noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "healthy-ra480-uncapped-rootwrites",
        "readahead",
        "healthy uncapped ra-480 fs workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 480},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("rootwrites",)},
    ),
    # The thirty-fifth held-out round (evals/split.py).
    _c(
        "ra240-iops90-raw-i2",
        "readahead",
        "iops-90 ra-240 raw workers-2",
        fault={"read_ahead_kb": 240},
        setup={"raw": True, "read_iops": 90},
        interval_s=2.0,
    ),
    _c(
        "ra72-iops190-w3-memhog",
        "readahead",
        "iops-190 ra-72 fs workers-3 noise-memhog",
        fault={"read_ahead_kb": 72, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 190, "noise": ("memhog",)},
    ),
    _c(
        "ra176-bps26-dirty",
        "readahead",
        "bps-26m ra-176 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 176},
        setup={"read_iops": None, "read_bps": 26 * 1024 * 1024, "noise": ("dirty",)},
    ),
    _c(
        "starve-w0-p2-memhog-mid",
        "starvation",
        "workers-0 preprocess-2 noise-memhog",
        setup={"noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "cont-h3-w2-rootwrites-mid",
        "contention",
        "hogs-3 workers-2 preprocess-2 noise-rootwrites",
        fault={"hogs": 3},
        fix={"hogs": 3},
        setup={"noise": ("rootwrites",)},
        onset="mid",
    ),
    _c(
        "recl-232-dirty-i2",
        "reclaim",
        "memcg-headroom-232 noise-dirty",
        fault={"mem_headroom_mb": 232},
        setup={"noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "wb-ckpt-ra160-w1-i2",
        "writeback",
        "writer fs ra-160 workers-1",
        fault={"read_ahead_kb": 160, "workers": 1},
        fix={"read_ahead_kb": 160, "workers": 1},
        interval_s=2.0,
    ),
    _c(
        "healthy-ra288-uncapped-memhog-w3",
        "readahead",
        "healthy uncapped ra-288 fs workers-3 noise-memhog",
        fault={"read_ahead_kb": 288, "workers": 3},
        fix={"read_ahead_kb": 4096, "workers": 3},
        setup={"read_iops": None, "noise": ("memhog",)},
    ),
    # The thirty-sixth held-out round (evals/split.py).
    _c(
        "ra136-iops110-w1-i2",
        "readahead",
        "iops-110 ra-136 fs workers-1",
        fault={"read_ahead_kb": 136, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 110},
        interval_s=2.0,
    ),
    _c(
        "ra448-iops45-raw-hog",
        "readahead",
        "iops-45 ra-448 raw workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 448},
        setup={"raw": True, "read_iops": 45, "noise": ("hog-elsewhere",)},
    ),
    _c(
        "ra96-bps44-raw-mid",
        "readahead",
        "bps-44m ra-96 raw workers-2",
        fault={"read_ahead_kb": 96},
        setup={"raw": True, "read_iops": None, "read_bps": 44 * 1024 * 1024},
        onset="mid",
    ),
    _c(
        "starve-w0-p3-dirty-i2",
        "starvation",
        "workers-0 preprocess-3 noise-dirty",
        setup={"preprocess": 3, "noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "cont-h6-w1-memhog",
        "contention",
        "hogs-6 workers-1 preprocess-2 noise-memhog",
        fault={"hogs": 6, "workers": 1},
        fix={"hogs": 6},
        setup={"noise": ("memhog",)},
    ),
    _c(
        "recl-196-rootwrites",
        "reclaim",
        "memcg-headroom-196 noise-rootwrites",
        fault={"mem_headroom_mb": 196},
        setup={"noise": ("rootwrites",)},
    ),
    _c(
        "wb-ckpt-ra384-hog",
        "writeback",
        "writer fs ra-384 noise-hog-elsewhere",
        fault={"read_ahead_kb": 384},
        fix={"read_ahead_kb": 384},
        setup={"noise": ("hog-elsewhere",)},
    ),
    _c(
        "healthy-ra160-uncapped-dirty-w2",
        "readahead",
        "healthy uncapped ra-160 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 160},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("dirty",)},
    ),
    # The thirty-seventh held-out round (evals/split.py).
    _c(
        "ra200-iops75-dirty-mid",
        "readahead",
        "iops-75 ra-200 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 200},
        setup={"read_iops": 75, "noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "ra480-iops35-w1-i2",
        "readahead",
        "iops-35 ra-480 fs workers-1",
        fault={"read_ahead_kb": 480, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 35},
        interval_s=2.0,
    ),
    _c(
        "ra352-bps48-w3-memhog",
        "readahead",
        "bps-48m ra-352 fs workers-3 noise-memhog",
        fault={"read_ahead_kb": 352, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": None, "read_bps": 48 * 1024 * 1024, "noise": ("memhog",)},
    ),
    _c(
        "starve-w1-p4-memhog-i2",
        "starvation",
        "workers-1 preprocess-4 noise-memhog",
        fault={"workers": 1},
        setup={"preprocess": 4, "noise": ("memhog",)},
        interval_s=2.0,
    ),
    _c(
        "cont-h5-w3-rootwrites-mid",
        "contention",
        "hogs-5 workers-3 preprocess-2 noise-rootwrites",
        fault={"hogs": 5, "workers": 3},
        fix={"hogs": 5},
        setup={"noise": ("rootwrites",)},
        onset="mid",
    ),
    _c(
        "recl-244-hog-i2",
        "reclaim",
        "memcg-headroom-244 noise-hog-elsewhere",
        fault={"mem_headroom_mb": 244},
        setup={"noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    _c(
        "wb-ckpt-ra96-rootwrites",
        "writeback",
        "writer fs ra-96 noise-rootwrites",
        fault={"read_ahead_kb": 96},
        fix={"read_ahead_kb": 96},
        setup={"noise": ("rootwrites",)},
    ),
    _c(
        "healthy-ra448-uncapped-hog",
        "readahead",
        "healthy uncapped ra-448 fs workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 448},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("hog-elsewhere",)},
    ),
    # The thirty-eighth held-out round (evals/split.py).
    _c(
        "ra112-iops130-raw-mid",
        "readahead",
        "iops-130 ra-112 raw workers-2",
        fault={"read_ahead_kb": 112},
        setup={"raw": True, "read_iops": 130},
        onset="mid",
    ),
    _c(
        "ra416-iops50-w3-rootwrites",
        "readahead",
        "iops-50 ra-416 fs workers-3 noise-rootwrites",
        fault={"read_ahead_kb": 416, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 50, "noise": ("rootwrites",)},
    ),
    _c(
        "ra240-bps30-raw-i2",
        "readahead",
        "bps-30m ra-240 raw workers-2",
        fault={"read_ahead_kb": 240},
        setup={"raw": True, "read_iops": None, "read_bps": 30 * 1024 * 1024},
        interval_s=2.0,
    ),
    _c(
        "starve-w0-p3-hog-mid",
        "starvation",
        "workers-0 preprocess-3 noise-hog-elsewhere",
        setup={"preprocess": 3, "noise": ("hog-elsewhere",)},
        onset="mid",
    ),
    _c(
        "cont-h4-w1-dirty-i2",
        "contention",
        "hogs-4 workers-1 preprocess-2 noise-dirty",
        fault={"hogs": 4, "workers": 1},
        fix={"hogs": 4},
        setup={"noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "recl-212-dirty-mid",
        "reclaim",
        "memcg-headroom-212 noise-dirty",
        fault={"mem_headroom_mb": 212},
        setup={"noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "wb-ckpt-ra288-memhog-i2",
        "writeback",
        "writer fs ra-288 noise-memhog",
        fault={"read_ahead_kb": 288},
        fix={"read_ahead_kb": 288},
        setup={"noise": ("memhog",)},
        interval_s=2.0,
    ),
    _c(
        "healthy-ra320-uncapped-rootwrites-w1",
        "readahead",
        "healthy uncapped ra-320 fs workers-1 noise-rootwrites",
        fault={"read_ahead_kb": 320, "workers": 1},
        fix={"read_ahead_kb": 4096, "workers": 1},
        setup={"read_iops": None, "noise": ("rootwrites",)},
    ),
    # The thirty-ninth held-out round (evals/split.py).
    _c(
        "ra176-iops160-w1",
        "readahead",
        "iops-160 ra-176 fs workers-1",
        fault={"read_ahead_kb": 176, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 160},
    ),
    _c(
        "ra464-iops40-raw-rootwrites",
        "readahead",
        "iops-40 ra-464 raw workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 464},
        setup={"raw": True, "read_iops": 40, "noise": ("rootwrites",)},
    ),
    _c(
        "ra144-bps40-memhog-mid",
        "readahead",
        "bps-40m ra-144 fs workers-2 noise-memhog",
        fault={"read_ahead_kb": 144},
        setup={"read_iops": None, "read_bps": 40 * 1024 * 1024, "noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "starve-w1-p3-rootwrites-mid",
        "starvation",
        "workers-1 preprocess-3 noise-rootwrites",
        fault={"workers": 1},
        setup={"preprocess": 3, "noise": ("rootwrites",)},
        onset="mid",
    ),
    _c(
        "cont-h2-w1-memhog-i2",
        "contention",
        "hogs-2 workers-1 preprocess-2 noise-memhog",
        fault={"hogs": 2, "workers": 1},
        fix={"hogs": 2},
        setup={"noise": ("memhog",)},
        interval_s=2.0,
    ),
    _c(
        "recl-228-rootwrites-i2",
        "reclaim",
        "memcg-headroom-228 noise-rootwrites",
        fault={"mem_headroom_mb": 228},
        setup={"noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "wb-ckpt-ra224-w3",
        "writeback",
        "writer fs ra-224 workers-3",
        fault={"read_ahead_kb": 224, "workers": 3},
        fix={"read_ahead_kb": 224, "workers": 3},
    ),
    _c(
        "healthy-ra256-uncapped-memhog-w2",
        "readahead",
        "healthy uncapped ra-256 fs workers-2 noise-memhog",
        fault={"read_ahead_kb": 256},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("memhog",)},
    ),
    # The fortieth held-out round (evals/split.py).
    _c(
        "ra208-iops70-raw-w3",
        "readahead",
        "iops-70 ra-208 raw workers-3",
        fault={"read_ahead_kb": 208, "workers": 3},
        fix={"workers": 3},
        setup={"raw": True, "read_iops": 70},
    ),
    _c(
        "ra384-iops110-memhog-i2",
        "readahead",
        "iops-110 ra-384 fs workers-2 noise-memhog",
        fault={"read_ahead_kb": 384},
        setup={"read_iops": 110, "noise": ("memhog",)},
        interval_s=2.0,
    ),
    _c(
        "ra96-bps28-rootwrites-w1",
        "readahead",
        "bps-28m ra-96 fs workers-1 noise-rootwrites",
        fault={"read_ahead_kb": 96, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": None, "read_bps": 28 * 1024 * 1024, "noise": ("rootwrites",)},
    ),
    _c(
        "starve-w1-p2-hog-i2",
        "starvation",
        "workers-1 preprocess-2 noise-hog-elsewhere",
        fault={"workers": 1},
        setup={"preprocess": 2, "noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    _c(
        "cont-h3-w3-dirty-mid",
        "contention",
        "hogs-3 workers-3 preprocess-2 noise-dirty",
        fault={"hogs": 3, "workers": 3},
        fix={"hogs": 3},
        setup={"noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "recl-236-hog-mid",
        "reclaim",
        "memcg-headroom-236 noise-hog-elsewhere",
        fault={"mem_headroom_mb": 236},
        setup={"noise": ("hog-elsewhere",)},
        onset="mid",
    ),
    _c(
        "wb-ckpt-ra352-w1-i2",
        "writeback",
        "writer fs ra-352 workers-1",
        fault={"read_ahead_kb": 352, "workers": 1},
        fix={"read_ahead_kb": 352, "workers": 1},
        interval_s=2.0,
    ),
    _c(
        "healthy-ra384-uncapped-hog-w3",
        "readahead",
        "healthy uncapped ra-384 fs workers-3 noise-hog-elsewhere",
        fault={"read_ahead_kb": 384, "workers": 3},
        fix={"read_ahead_kb": 4096, "workers": 3},
        setup={"read_iops": None, "noise": ("hog-elsewhere",)},
    ),
    # The forty-first held-out round (evals/split.py).
    _c(
        "ra272-iops190-rootwrites-w1",
        "readahead",
        "iops-190 ra-272 fs workers-1 noise-rootwrites",
        fault={"read_ahead_kb": 272, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 190, "noise": ("rootwrites",)},
    ),
    _c(
        "ra56-iops260-raw-mid",
        "readahead",
        "iops-260 ra-56 raw workers-2",
        fault={"read_ahead_kb": 56},
        setup={"raw": True, "read_iops": 260},
        onset="mid",
    ),
    _c(
        "ra336-bps44-raw-memhog-i2",
        "readahead",
        "bps-44m ra-336 raw workers-2 noise-memhog",
        fault={"read_ahead_kb": 336},
        setup={"raw": True, "read_iops": None, "read_bps": 44 * 1024 * 1024, "noise": ("memhog",)},
        interval_s=2.0,
    ),
    _c(
        "starve-w0-p3-rootwrites-i2",
        "starvation",
        "workers-0 preprocess-3 noise-rootwrites",
        setup={"preprocess": 3, "noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "cont-h6-w3-memhog",
        "contention",
        "hogs-6 workers-3 preprocess-2 noise-memhog",
        fault={"hogs": 6, "workers": 3},
        fix={"hogs": 6},
        setup={"noise": ("memhog",)},
    ),
    _c(
        "recl-204-rootwrites-mid",
        "reclaim",
        "memcg-headroom-204 noise-rootwrites",
        fault={"mem_headroom_mb": 204},
        setup={"noise": ("rootwrites",)},
        onset="mid",
    ),
    _c(
        "wb-ckpt-ra160-hog-mid",
        "writeback",
        "writer fs ra-160 noise-hog-elsewhere",
        fault={"read_ahead_kb": 160},
        fix={"read_ahead_kb": 160},
        setup={"noise": ("hog-elsewhere",)},
        onset="mid",
    ),
    _c(
        "healthy-ra192-uncapped-rootwrites-w2",
        "readahead",
        "healthy uncapped ra-192 fs workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 192},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("rootwrites",)},
    ),
    # The forty-second held-out round (evals/split.py).
    _c(
        "ra80-iops150-w3-memhog",
        "readahead",
        "iops-150 ra-80 fs workers-3 noise-memhog",
        fault={"read_ahead_kb": 80, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 150, "noise": ("memhog",)},
    ),
    _c(
        "ra496-iops35-raw-i2",
        "readahead",
        "iops-35 ra-496 raw workers-2",
        fault={"read_ahead_kb": 496},
        setup={"raw": True, "read_iops": 35},
        interval_s=2.0,
    ),
    _c(
        "ra200-bps50-dirty-mid",
        "readahead",
        "bps-50m ra-200 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 200},
        setup={"read_iops": None, "read_bps": 50 * 1024 * 1024, "noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "starve-w0-p2-dirty-i2",
        "starvation",
        "workers-0 preprocess-2 noise-dirty",
        setup={"preprocess": 2, "noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "cont-h5-w1-rootwrites-i2",
        "contention",
        "hogs-5 workers-1 preprocess-2 noise-rootwrites",
        fault={"hogs": 5, "workers": 1},
        fix={"hogs": 5},
        setup={"noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "recl-220-dirty-i2",
        "reclaim",
        "memcg-headroom-220 noise-dirty",
        fault={"mem_headroom_mb": 220},
        setup={"noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "wb-ckpt-ra416-rootwrites-mid",
        "writeback",
        "writer fs ra-416 noise-rootwrites",
        fault={"read_ahead_kb": 416},
        fix={"read_ahead_kb": 416},
        setup={"noise": ("rootwrites",)},
        onset="mid",
    ),
    _c(
        "healthy-ra416-uncapped-memhog-w1",
        "readahead",
        "healthy uncapped ra-416 fs workers-1 noise-memhog",
        fault={"read_ahead_kb": 416, "workers": 1},
        fix={"read_ahead_kb": 4096, "workers": 1},
        setup={"read_iops": None, "noise": ("memhog",)},
    ),
    # The forty-third held-out round (evals/split.py).
    _c(
        "ra120-iops90-hog-w1",
        "readahead",
        "iops-90 ra-120 fs workers-1 noise-hog-elsewhere",
        fault={"read_ahead_kb": 120, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 90, "noise": ("hog-elsewhere",)},
    ),
    _c(
        "ra448-iops45-rootwrites-mid",
        "readahead",
        "iops-45 ra-448 fs workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 448},
        setup={"read_iops": 45, "noise": ("rootwrites",)},
        onset="mid",
    ),
    _c(
        "ra288-bps36-raw-i2",
        "readahead",
        "bps-36m ra-288 raw workers-2",
        fault={"read_ahead_kb": 288},
        setup={"raw": True, "read_iops": None, "read_bps": 36 * 1024 * 1024},
        interval_s=2.0,
    ),
    _c(
        "starve-w1-p3-memhog-i2",
        "starvation",
        "workers-1 preprocess-3 noise-memhog",
        fault={"workers": 1},
        setup={"preprocess": 3, "noise": ("memhog",)},
        interval_s=2.0,
    ),
    _c(
        "cont-h5-w2-dirty-mid",
        "contention",
        "hogs-5 workers-2 preprocess-2 noise-dirty",
        fault={"hogs": 5},
        fix={"hogs": 5},
        setup={"noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "recl-244-memhog-i2",
        "reclaim",
        "memcg-headroom-244 noise-memhog",
        fault={"mem_headroom_mb": 244},
        setup={"noise": ("memhog",)},
        interval_s=2.0,
    ),
    _c(
        "wb-ckpt-ra480-dirty-i2",
        "writeback",
        "writer fs ra-480 noise-dirty",
        fault={"read_ahead_kb": 480},
        fix={"read_ahead_kb": 480},
        setup={"noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "healthy-ra464-uncapped-dirty-w3",
        "readahead",
        "healthy uncapped ra-464 fs workers-3 noise-dirty",
        fault={"read_ahead_kb": 464, "workers": 3},
        fix={"read_ahead_kb": 4096, "workers": 3},
        setup={"read_iops": None, "noise": ("dirty",)},
    ),
    # The forty-fourth held-out round (evals/split.py).
    _c(
        "ra176-iops240-raw-w3-i2",
        "readahead",
        "iops-240 ra-176 raw workers-3",
        fault={"read_ahead_kb": 176, "workers": 3},
        fix={"workers": 3},
        setup={"raw": True, "read_iops": 240},
        interval_s=2.0,
    ),
    _c(
        "ra368-iops60-memhog-mid",
        "readahead",
        "iops-60 ra-368 fs workers-2 noise-memhog",
        fault={"read_ahead_kb": 368},
        setup={"read_iops": 60, "noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "ra240-bps60-rootwrites-w3",
        "readahead",
        "bps-60m ra-240 fs workers-3 noise-rootwrites",
        fault={"read_ahead_kb": 240, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": None, "read_bps": 60 * 1024 * 1024, "noise": ("rootwrites",)},
    ),
    _c(
        "starve-w0-p4-hog-mid",
        "starvation",
        "workers-0 preprocess-4 noise-hog-elsewhere",
        setup={"preprocess": 4, "noise": ("hog-elsewhere",)},
        onset="mid",
    ),
    _c(
        "cont-h3-w1-memhog-mid",
        "contention",
        "hogs-3 workers-1 preprocess-2 noise-memhog",
        fault={"hogs": 3, "workers": 1},
        fix={"hogs": 3},
        setup={"noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "recl-252-hog-mid",
        "reclaim",
        "memcg-headroom-252 noise-hog-elsewhere",
        fault={"mem_headroom_mb": 252},
        setup={"noise": ("hog-elsewhere",)},
        onset="mid",
    ),
    _c(
        "wb-ckpt-ra64-memhog-w3",
        "writeback",
        "writer fs ra-64 workers-3 noise-memhog",
        fault={"read_ahead_kb": 64, "workers": 3},
        fix={"read_ahead_kb": 64, "workers": 3},
        setup={"noise": ("memhog",)},
    ),
    _c(
        "healthy-ra320-uncapped-rootwrites-w3-i2",
        "readahead",
        "healthy uncapped ra-320 fs workers-3 noise-rootwrites",
        fault={"read_ahead_kb": 320, "workers": 3},
        fix={"read_ahead_kb": 4096, "workers": 3},
        setup={"read_iops": None, "noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    # The forty-fifth held-out round (evals/split.py).
    _c(
        "ra104-iops130-dirty-w1",
        "readahead",
        "iops-130 ra-104 fs workers-1 noise-dirty",
        fault={"read_ahead_kb": 104, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 130, "noise": ("dirty",)},
    ),
    _c(
        "ra432-iops80-raw-i2",
        "readahead",
        "iops-80 ra-432 raw workers-2",
        fault={"read_ahead_kb": 432},
        setup={"raw": True, "read_iops": 80},
        interval_s=2.0,
    ),
    _c(
        "ra152-bps32-memhog-w3",
        "readahead",
        "bps-32m ra-152 fs workers-3 noise-memhog",
        fault={"read_ahead_kb": 152, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": None, "read_bps": 32 * 1024 * 1024, "noise": ("memhog",)},
    ),
    _c(
        "starve-w1-p2-rootwrites-mid-i2",
        "starvation",
        "workers-1 preprocess-2 noise-rootwrites",
        fault={"workers": 1},
        setup={"preprocess": 2, "noise": ("rootwrites",)},
        onset="mid",
        interval_s=2.0,
    ),
    _c(
        "cont-h4-w3-memhog-i2",
        "contention",
        "hogs-4 workers-3 preprocess-2 noise-memhog",
        fault={"hogs": 4, "workers": 3},
        fix={"hogs": 4},
        setup={"noise": ("memhog",)},
        interval_s=2.0,
    ),
    _c(
        "recl-172-rootwrites-mid",
        "reclaim",
        "memcg-headroom-172 noise-rootwrites",
        fault={"mem_headroom_mb": 172},
        setup={"noise": ("rootwrites",)},
        onset="mid",
    ),
    _c(
        "wb-ckpt-ra336-hog-i2",
        "writeback",
        "writer fs ra-336 noise-hog-elsewhere",
        fault={"read_ahead_kb": 336},
        fix={"read_ahead_kb": 336},
        setup={"noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    _c(
        "healthy-ra224-uncapped-memhog-w3",
        "readahead",
        "healthy uncapped ra-224 fs workers-3 noise-memhog",
        fault={"read_ahead_kb": 224, "workers": 3},
        fix={"read_ahead_kb": 4096, "workers": 3},
        setup={"read_iops": None, "noise": ("memhog",)},
    ),
    # The forty-sixth held-out round (evals/split.py).
    _c(
        "ra64-iops280-memhog-w3",
        "readahead",
        "iops-280 ra-64 fs workers-3 noise-memhog",
        fault={"read_ahead_kb": 64, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 280, "noise": ("memhog",)},
    ),
    _c(
        "ra512-iops30-dirty-mid",
        "readahead",
        "iops-30 ra-512 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 512},
        setup={"read_iops": 30, "noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "ra184-bps24-raw-w1",
        "readahead",
        "bps-24m ra-184 raw workers-1",
        fault={"read_ahead_kb": 184, "workers": 1},
        fix={"workers": 1},
        setup={"raw": True, "read_iops": None, "read_bps": 24 * 1024 * 1024},
    ),
    _c(
        "starve-w0-p4-hog-i2",
        "starvation",
        "workers-0 preprocess-4 noise-hog-elsewhere",
        setup={"preprocess": 4, "noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    _c(
        "cont-h6-w2-rootwrites-mid",
        "contention",
        "hogs-6 workers-2 preprocess-2 noise-rootwrites",
        fault={"hogs": 6},
        fix={"hogs": 6},
        setup={"noise": ("rootwrites",)},
        onset="mid",
    ),
    _c(
        "recl-164-dirty-mid",
        "reclaim",
        "memcg-headroom-164 noise-dirty",
        fault={"mem_headroom_mb": 164},
        setup={"noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "wb-ckpt-ra240-w1-rootwrites",
        "writeback",
        "writer fs ra-240 workers-1 noise-rootwrites",
        fault={"read_ahead_kb": 240, "workers": 1},
        fix={"read_ahead_kb": 240, "workers": 1},
        setup={"noise": ("rootwrites",)},
    ),
    _c(
        "healthy-ra128-uncapped-hog-w2-i2",
        "readahead",
        "healthy uncapped ra-128 fs workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 128},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    # The forty-seventh held-out round (evals/split.py).
    _c(
        "ra416-iops130-w3-dirty",
        "readahead",
        "iops-130 ra-416 fs workers-3 noise-dirty",
        fault={"read_ahead_kb": 416, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 130, "noise": ("dirty",)},
    ),
    _c(
        "ra80-iops170-raw-hog-i2",
        "readahead",
        "iops-170 ra-80 raw workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 80},
        setup={"raw": True, "read_iops": 170, "noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    _c(
        "ra264-bps40-memhog-w1",
        "readahead",
        "bps-40m ra-264 fs workers-1 noise-memhog",
        fault={"read_ahead_kb": 264, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": None, "read_bps": 40 * 1024 * 1024, "noise": ("memhog",)},
    ),
    _c(
        "starve-w1-p3-dirty-mid",
        "starvation",
        "workers-1 preprocess-3 noise-dirty",
        fault={"workers": 1},
        setup={"preprocess": 3, "noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "cont-h4-w1-memhog-mid",
        "contention",
        "hogs-4 workers-1 preprocess-2 noise-memhog",
        fault={"hogs": 4, "workers": 1},
        fix={"hogs": 4},
        setup={"noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "recl-172-hog-i2",
        "reclaim",
        "memcg-headroom-172 noise-hog-elsewhere",
        fault={"mem_headroom_mb": 172},
        setup={"noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    _c(
        "wb-ckpt-ra400-memhog-mid",
        "writeback",
        "writer fs ra-400 workers-2 noise-memhog",
        fault={"read_ahead_kb": 400},
        fix={"read_ahead_kb": 400},
        setup={"noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "healthy-ra352-uncapped-rootwrites-w3-i2",
        "readahead",
        "healthy uncapped ra-352 fs workers-3 noise-rootwrites",
        fault={"read_ahead_kb": 352, "workers": 3},
        fix={"read_ahead_kb": 4096, "workers": 3},
        setup={"read_iops": None, "noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    # The forty-eighth held-out round (evals/split.py).
    _c(
        "ra48-iops220-w1-rootwrites",
        "readahead",
        "iops-220 ra-48 fs workers-1 noise-rootwrites",
        fault={"read_ahead_kb": 48, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 220, "noise": ("rootwrites",)},
    ),
    _c(
        "ra368-iops55-raw-mid",
        "readahead",
        "iops-55 ra-368 raw workers-2",
        fault={"read_ahead_kb": 368},
        setup={"raw": True, "read_iops": 55},
        onset="mid",
    ),
    _c(
        "ra200-bps36-dirty-w3-i2",
        "readahead",
        "bps-36m ra-200 fs workers-3 noise-dirty",
        fault={"read_ahead_kb": 200, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": None, "read_bps": 36 * 1024 * 1024, "noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "starve-w0-p3-memhog-mid",
        "starvation",
        "workers-0 preprocess-3 noise-memhog",
        setup={"preprocess": 3, "noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "cont-h3-w2-dirty-i2",
        "contention",
        "hogs-3 workers-2 preprocess-2 noise-dirty",
        fault={"hogs": 3},
        fix={"hogs": 3},
        setup={"noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "recl-236-dirty-i2",
        "reclaim",
        "memcg-headroom-236 noise-dirty",
        fault={"mem_headroom_mb": 236},
        setup={"noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "wb-ckpt-ra96-w3-hog",
        "writeback",
        "writer fs ra-96 workers-3 noise-hog-elsewhere",
        fault={"read_ahead_kb": 96, "workers": 3},
        fix={"read_ahead_kb": 96, "workers": 3},
        setup={"noise": ("hog-elsewhere",)},
    ),
    _c(
        "healthy-ra496-uncapped-memhog-w2",
        "readahead",
        "healthy uncapped ra-496 fs workers-2 noise-memhog",
        fault={"read_ahead_kb": 496},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("memhog",)},
    ),
    # The forty-ninth held-out round (evals/split.py).
    _c(
        "ra144-iops240-memhog-w2",
        "readahead",
        "iops-240 ra-144 fs workers-2 noise-memhog",
        fault={"read_ahead_kb": 144},
        setup={"read_iops": 240, "noise": ("memhog",)},
    ),
    _c(
        "ra456-iops45-raw-hog-i2",
        "readahead",
        "iops-45 ra-456 raw workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 456},
        setup={"raw": True, "read_iops": 45, "noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    _c(
        "ra112-bps32-rootwrites-mid",
        "readahead",
        "bps-32m ra-112 fs workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 112},
        setup={"read_iops": None, "read_bps": 32 * 1024 * 1024, "noise": ("rootwrites",)},
        onset="mid",
    ),
    _c(
        "starve-w1-p4-rootwrites-i2",
        "starvation",
        "workers-1 preprocess-4 noise-rootwrites",
        fault={"workers": 1},
        setup={"preprocess": 4, "noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "cont-h2-w3-memhog-i2",
        "contention",
        "hogs-2 workers-3 preprocess-2 noise-memhog",
        fault={"hogs": 2, "workers": 3},
        fix={"hogs": 2},
        setup={"noise": ("memhog",)},
        interval_s=2.0,
    ),
    _c(
        "recl-212-rootwrites-mid",
        "reclaim",
        "memcg-headroom-212 noise-rootwrites",
        fault={"mem_headroom_mb": 212},
        setup={"noise": ("rootwrites",)},
        onset="mid",
    ),
    _c(
        "wb-ckpt-ra160-w2-dirty-i2",
        "writeback",
        "writer fs ra-160 workers-2 noise-dirty",
        fault={"read_ahead_kb": 160},
        fix={"read_ahead_kb": 160},
        setup={"noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "healthy-ra272-uncapped-hog-w2",
        "readahead",
        "healthy uncapped ra-272 fs workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 272},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("hog-elsewhere",)},
    ),
    # The fiftieth held-out round (evals/split.py).
    _c(
        "ra88-iops160-dirty-w3-mid",
        "readahead",
        "iops-160 ra-88 fs workers-3 noise-dirty",
        fault={"read_ahead_kb": 88, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 160, "noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "ra384-iops70-raw-memhog-w1",
        "readahead",
        "iops-70 ra-384 raw workers-1 noise-memhog",
        fault={"read_ahead_kb": 384, "workers": 1},
        fix={"workers": 1},
        setup={"raw": True, "read_iops": 70, "noise": ("memhog",)},
    ),
    _c(
        "ra232-bps44-hog-i2",
        "readahead",
        "bps-44m ra-232 fs workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 232},
        setup={"read_iops": None, "read_bps": 44 * 1024 * 1024, "noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    _c(
        "starve-w0-p4-rootwrites-mid",
        "starvation",
        "workers-0 preprocess-4 noise-rootwrites",
        setup={"preprocess": 4, "noise": ("rootwrites",)},
        onset="mid",
    ),
    _c(
        "cont-h6-w1-dirty-mid",
        "contention",
        "hogs-6 workers-1 preprocess-2 noise-dirty",
        fault={"hogs": 6, "workers": 1},
        fix={"hogs": 6},
        setup={"noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "recl-184-memhog-i2",
        "reclaim",
        "memcg-headroom-184 noise-memhog",
        fault={"mem_headroom_mb": 184},
        setup={"noise": ("memhog",)},
        interval_s=2.0,
    ),
    _c(
        "wb-ckpt-ra432-w1-memhog-i2",
        "writeback",
        "writer fs ra-432 workers-1 noise-memhog",
        fault={"read_ahead_kb": 432, "workers": 1},
        fix={"read_ahead_kb": 432, "workers": 1},
        setup={"noise": ("memhog",)},
        interval_s=2.0,
    ),
    _c(
        "healthy-ra176-uncapped-dirty-w3",
        "readahead",
        "healthy uncapped ra-176 fs workers-3 noise-dirty",
        fault={"read_ahead_kb": 176, "workers": 3},
        fix={"read_ahead_kb": 4096, "workers": 3},
        setup={"read_iops": None, "noise": ("dirty",)},
    ),
    # The fifty-first held-out round (evals/split.py).
    _c(
        "ra56-iops260-raw-rootwrites-i2",
        "readahead",
        "iops-260 ra-56 raw workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 56},
        setup={"raw": True, "read_iops": 260, "noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "ra480-iops35-memhog-mid",
        "readahead",
        "iops-35 ra-480 fs workers-2 noise-memhog",
        fault={"read_ahead_kb": 480},
        setup={"read_iops": 35, "noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "ra168-bps28-w3-memhog",
        "readahead",
        "bps-28m ra-168 fs workers-3 noise-memhog",
        fault={"read_ahead_kb": 168, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": None, "read_bps": 28 * 1024 * 1024, "noise": ("memhog",)},
    ),
    _c(
        "starve-w1-p4-dirty-mid",
        "starvation",
        "workers-1 preprocess-4 noise-dirty",
        fault={"workers": 1},
        setup={"preprocess": 4, "noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "cont-h4-w3-dirty-i2",
        "contention",
        "hogs-4 workers-3 preprocess-2 noise-dirty",
        fault={"hogs": 4, "workers": 3},
        fix={"hogs": 4},
        setup={"noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "recl-204-hog-mid",
        "reclaim",
        "memcg-headroom-204 noise-hog-elsewhere",
        fault={"mem_headroom_mb": 204},
        setup={"noise": ("hog-elsewhere",)},
        onset="mid",
    ),
    _c(
        "wb-ckpt-ra288-w3-rootwrites-mid",
        "writeback",
        "writer fs ra-288 workers-3 noise-rootwrites",
        fault={"read_ahead_kb": 288, "workers": 3},
        fix={"read_ahead_kb": 288, "workers": 3},
        setup={"noise": ("rootwrites",)},
        onset="mid",
    ),
    _c(
        "healthy-ra400-uncapped-memhog-w2-i2",
        "readahead",
        "healthy uncapped ra-400 fs workers-2 noise-memhog",
        fault={"read_ahead_kb": 400},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("memhog",)},
        interval_s=2.0,
    ),
    # The fifty-second held-out round (evals/split.py).
    _c(
        "ra192-iops150-raw-memhog",
        "readahead",
        "iops-150 ra-192 raw workers-2 noise-memhog",
        fault={"read_ahead_kb": 192},
        setup={"raw": True, "read_iops": 150, "noise": ("memhog",)},
    ),
    _c(
        "ra432-iops70-w1-dirty-mid",
        "readahead",
        "iops-70 ra-432 fs workers-1 noise-dirty",
        fault={"read_ahead_kb": 432, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 70, "noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "ra160-bps48-hog",
        "readahead",
        "bps-48m ra-160 fs workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 160},
        setup={"read_iops": None, "read_bps": 48 * 1024 * 1024, "noise": ("hog-elsewhere",)},
    ),
    _c(
        "starve-w1-p4-memhog-mid",
        "starvation",
        "workers-1 preprocess-4 noise-memhog",
        fault={"workers": 1},
        setup={"preprocess": 4, "noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "cont-h2-w3-rootwrites-i2",
        "contention",
        "hogs-2 workers-3 preprocess-2 noise-rootwrites",
        fault={"hogs": 2, "workers": 3},
        fix={"hogs": 2},
        setup={"noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "recl-168-hog",
        "reclaim",
        "memcg-headroom-168 noise-hog-elsewhere",
        fault={"mem_headroom_mb": 168},
        setup={"noise": ("hog-elsewhere",)},
    ),
    _c(
        "wb-ckpt-ra504-w3-dirty",
        "writeback",
        "writer fs ra-504 workers-3 noise-dirty",
        fault={"read_ahead_kb": 504, "workers": 3},
        fix={"read_ahead_kb": 504, "workers": 3},
        setup={"noise": ("dirty",)},
    ),
    _c(
        "healthy-ra512-uncapped-hog-w2-i2",
        "readahead",
        "healthy uncapped ra-512 fs workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 512},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    # The fifty-third held-out round (evals/split.py).
    _c(
        "ra456-iops30-raw-memhog",
        "readahead",
        "iops-30 ra-456 raw workers-2 noise-memhog",
        fault={"read_ahead_kb": 456},
        setup={"raw": True, "read_iops": 30, "noise": ("memhog",)},
    ),
    _c(
        "ra80-iops170-rootwrites-i2",
        "readahead",
        "iops-170 ra-80 fs workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 80},
        setup={"read_iops": 170, "noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "ra432-bps44-dirty-mid",
        "readahead",
        "bps-44m ra-432 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 432},
        setup={"read_iops": None, "read_bps": 44 * 1024 * 1024, "noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "starve-w1-p4-hog-i2",
        "starvation",
        "workers-1 preprocess-4 noise-hog-elsewhere",
        fault={"workers": 1},
        setup={"preprocess": 4, "noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    _c(
        "cont-h4-w2-memhog",
        "contention",
        "hogs-4 workers-2 preprocess-2 noise-memhog",
        fault={"hogs": 4},
        fix={"hogs": 4},
        setup={"noise": ("memhog",)},
    ),
    _c(
        "recl-188-rootwrites-i2",
        "reclaim",
        "memcg-headroom-188 noise-rootwrites",
        fault={"mem_headroom_mb": 188},
        setup={"noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "wb-ckpt-ra144-hog-mid",
        "writeback",
        "writer fs ra-144 workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 144},
        fix={"read_ahead_kb": 144},
        setup={"noise": ("hog-elsewhere",)},
        onset="mid",
    ),
    _c(
        "healthy-ra416-uncapped-rootwrites-w2-i2",
        "readahead",
        "healthy uncapped ra-416 fs workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 416},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    # The fifty-fourth held-out round (evals/split.py).
    _c(
        "ra192-iops195-raw-hog",
        "readahead",
        "iops-195 ra-192 raw workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 192},
        setup={"raw": True, "read_iops": 195, "noise": ("hog-elsewhere",)},
    ),
    _c(
        "ra208-iops230-dirty-i2",
        "readahead",
        "iops-230 ra-208 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 208},
        setup={"read_iops": 230, "noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "ra408-bps35-dirty",
        "readahead",
        "bps-35m ra-408 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 408},
        setup={"read_iops": None, "read_bps": 35 * 1024 * 1024, "noise": ("dirty",)},
    ),
    _c(
        "starve-w1-p4-rootwrites-mid",
        "starvation",
        "workers-1 preprocess-4 noise-rootwrites",
        fault={"workers": 1},
        setup={"preprocess": 4, "noise": ("rootwrites",)},
        onset="mid",
    ),
    _c(
        "cont-h2-w3-hog-i2",
        "contention",
        "hogs-2 workers-3 preprocess-2 noise-hog-elsewhere",
        fault={"hogs": 2, "workers": 3},
        fix={"hogs": 2},
        setup={"noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    _c(
        "recl-196-dirty-mid",
        "reclaim",
        "memcg-headroom-196 noise-dirty",
        fault={"mem_headroom_mb": 196},
        setup={"noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "wb-ckpt-ra232-w3-hog",
        "writeback",
        "writer fs ra-232 workers-3 noise-hog-elsewhere",
        fault={"read_ahead_kb": 232, "workers": 3},
        fix={"read_ahead_kb": 232, "workers": 3},
        setup={"noise": ("hog-elsewhere",)},
    ),
    _c(
        "healthy-ra240-uncapped-dirty-w2-i2",
        "readahead",
        "healthy uncapped ra-240 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 240},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("dirty",)},
        interval_s=2.0,
    ),
    # The fifty-fifth held-out round (evals/split.py).
    _c(
        "ra40-iops65-raw-w3-hog-mid",
        "readahead",
        "iops-65 ra-40 raw workers-3 noise-hog-elsewhere",
        fault={"read_ahead_kb": 40, "workers": 3},
        fix={"workers": 3},
        setup={"raw": True, "read_iops": 65, "noise": ("hog-elsewhere",)},
        onset="mid",
    ),
    _c(
        "ra168-iops55-memhog-mid",
        "readahead",
        "iops-55 ra-168 fs workers-2 noise-memhog",
        fault={"read_ahead_kb": 168},
        setup={"read_iops": 55, "noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "ra480-bps35-hog-i2",
        "readahead",
        "bps-35m ra-480 fs workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 480},
        setup={"read_iops": None, "read_bps": 35 * 1024 * 1024, "noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    _c(
        "starve-w1-p4-dirty-i2",
        "starvation",
        "workers-1 preprocess-4 noise-dirty",
        fault={"workers": 1},
        setup={"preprocess": 4, "noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "cont-h4-w1-rootwrites",
        "contention",
        "hogs-4 workers-1 preprocess-2 noise-rootwrites",
        fault={"hogs": 4, "workers": 1},
        fix={"hogs": 4},
        setup={"noise": ("rootwrites",)},
    ),
    _c(
        "recl-232-hog",
        "reclaim",
        "memcg-headroom-232 noise-hog-elsewhere",
        fault={"mem_headroom_mb": 232},
        setup={"noise": ("hog-elsewhere",)},
    ),
    _c(
        "wb-ckpt-ra472-w3-dirty-i2",
        "writeback",
        "writer fs ra-472 workers-3 noise-dirty",
        fault={"read_ahead_kb": 472, "workers": 3},
        fix={"read_ahead_kb": 472, "workers": 3},
        setup={"noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "healthy-ra280-uncapped-dirty-w2-i2",
        "readahead",
        "healthy uncapped ra-280 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 280},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("dirty",)},
        interval_s=2.0,
    ),
    # The fifty-sixth held-out round (evals/split.py).
    _c(
        "ra512-iops180-raw-rootwrites-mid",
        "readahead",
        "iops-180 ra-512 raw workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 512},
        setup={"raw": True, "read_iops": 180, "noise": ("rootwrites",)},
        onset="mid",
    ),
    _c(
        "ra32-iops65-w3-dirty-i2",
        "readahead",
        "iops-65 ra-32 fs workers-3 noise-dirty",
        fault={"read_ahead_kb": 32, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 65, "noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "ra40-bps48-hog-mid",
        "readahead",
        "bps-48m ra-40 fs workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 40},
        setup={"read_iops": None, "read_bps": 48 * 1024 * 1024, "noise": ("hog-elsewhere",)},
        onset="mid",
    ),
    _c(
        "starve-w1-p4-hog-mid",
        "starvation",
        "workers-1 preprocess-4 noise-hog-elsewhere",
        fault={"workers": 1},
        setup={"preprocess": 4, "noise": ("hog-elsewhere",)},
        onset="mid",
    ),
    _c(
        "cont-h6-w3-hog-mid",
        "contention",
        "hogs-6 workers-3 preprocess-2 noise-hog-elsewhere",
        fault={"hogs": 6, "workers": 3},
        fix={"hogs": 6},
        setup={"noise": ("hog-elsewhere",)},
        onset="mid",
    ),
    _c(
        "recl-232-dirty-mid",
        "reclaim",
        "memcg-headroom-232 noise-dirty",
        fault={"mem_headroom_mb": 232},
        setup={"noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "wb-ckpt-ra344-memhog",
        "writeback",
        "writer fs ra-344 workers-2 noise-memhog",
        fault={"read_ahead_kb": 344},
        fix={"read_ahead_kb": 344},
        setup={"noise": ("memhog",)},
    ),
    _c(
        "healthy-ra352-uncapped-dirty-w2-i2",
        "readahead",
        "healthy uncapped ra-352 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 352},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("dirty",)},
        interval_s=2.0,
    ),
    # The fifty-seventh held-out round (evals/split.py).
    _c(
        "ra128-iops155-raw-rootwrites-mid",
        "readahead",
        "iops-155 ra-128 raw workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 128},
        setup={"raw": True, "read_iops": 155, "noise": ("rootwrites",)},
        onset="mid",
    ),
    _c(
        "ra56-iops90-w3-rootwrites-i2",
        "readahead",
        "iops-90 ra-56 fs workers-3 noise-rootwrites",
        fault={"read_ahead_kb": 56, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 90, "noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "ra120-bps39-rootwrites",
        "readahead",
        "bps-39m ra-120 fs workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 120},
        setup={"read_iops": None, "read_bps": 39 * 1024 * 1024, "noise": ("rootwrites",)},
    ),
    _c(
        "starve-w0-p4-memhog",
        "starvation",
        "workers-0 preprocess-4 noise-memhog",
        setup={"preprocess": 4, "noise": ("memhog",)},
    ),
    _c(
        "cont-h4-w1-hog",
        "contention",
        "hogs-4 workers-1 preprocess-2 noise-hog-elsewhere",
        fault={"hogs": 4, "workers": 1},
        fix={"hogs": 4},
        setup={"noise": ("hog-elsewhere",)},
    ),
    _c(
        "recl-220-memhog-mid",
        "reclaim",
        "memcg-headroom-220 noise-memhog",
        fault={"mem_headroom_mb": 220},
        setup={"noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "wb-ckpt-ra376-w3-memhog-mid",
        "writeback",
        "writer fs ra-376 workers-3 noise-memhog",
        fault={"read_ahead_kb": 376, "workers": 3},
        fix={"read_ahead_kb": 376, "workers": 3},
        setup={"noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "healthy-ra256-uncapped-rootwrites-w2-i2",
        "readahead",
        "healthy uncapped ra-256 fs workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 256},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    # The fifty-eighth held-out round (evals/split.py).
    _c(
        "ra232-iops90-raw-w3-rootwrites",
        "readahead",
        "iops-90 ra-232 raw workers-3 noise-rootwrites",
        fault={"read_ahead_kb": 232, "workers": 3},
        fix={"workers": 3},
        setup={"raw": True, "read_iops": 90, "noise": ("rootwrites",)},
    ),
    _c(
        "ra480-iops155-w3-hog",
        "readahead",
        "iops-155 ra-480 fs workers-3 noise-hog-elsewhere",
        fault={"read_ahead_kb": 480, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 155, "noise": ("hog-elsewhere",)},
    ),
    _c(
        "ra456-bps25-dirty-mid",
        "readahead",
        "bps-25m ra-456 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 456},
        setup={"read_iops": None, "read_bps": 25 * 1024 * 1024, "noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "starve-w0-p3-memhog-i2",
        "starvation",
        "workers-0 preprocess-3 noise-memhog",
        setup={"preprocess": 3, "noise": ("memhog",)},
        interval_s=2.0,
    ),
    _c(
        "cont-h6-w3-rootwrites",
        "contention",
        "hogs-6 workers-3 preprocess-2 noise-rootwrites",
        fault={"hogs": 6, "workers": 3},
        fix={"hogs": 6},
        setup={"noise": ("rootwrites",)},
    ),
    _c(
        "recl-216-memhog-mid",
        "reclaim",
        "memcg-headroom-216 noise-memhog",
        fault={"mem_headroom_mb": 216},
        setup={"noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "wb-ckpt-ra280-dirty-i2",
        "writeback",
        "writer fs ra-280 workers-2 noise-dirty",
        fault={"read_ahead_kb": 280},
        fix={"read_ahead_kb": 280},
        setup={"noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "healthy-ra88-uncapped-rootwrites-w2-i2",
        "readahead",
        "healthy uncapped ra-88 fs workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 88},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    # The fifty-ninth held-out round (evals/split.py).
    _c(
        "ra280-iops175-w1-rootwrites-i2",
        "readahead",
        "iops-175 ra-280 fs workers-1 noise-rootwrites",
        fault={"read_ahead_kb": 280, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 175, "noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "ra400-iops40-hog-mid",
        "readahead",
        "iops-40 ra-400 fs workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 400},
        setup={"read_iops": 40, "noise": ("hog-elsewhere",)},
        onset="mid",
    ),
    _c(
        "ra88-bps19-w3-rootwrites-i2",
        "readahead",
        "bps-19m ra-88 fs workers-3 noise-rootwrites",
        fault={"read_ahead_kb": 88, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": None, "read_bps": 19 * 1024 * 1024, "noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "starve-w0-p2-rootwrites",
        "starvation",
        "workers-0 preprocess-2 noise-rootwrites",
        setup={"preprocess": 2, "noise": ("rootwrites",)},
    ),
    _c(
        "cont-h3-w1-hog-i2",
        "contention",
        "hogs-3 workers-1 preprocess-2 noise-hog-elsewhere",
        fault={"hogs": 3, "workers": 1},
        fix={"hogs": 3},
        setup={"noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    _c(
        "recl-232-rootwrites",
        "reclaim",
        "memcg-headroom-232 noise-rootwrites",
        fault={"mem_headroom_mb": 232},
        setup={"noise": ("rootwrites",)},
    ),
    _c(
        "wb-ckpt-ra208-w3-hog",
        "writeback",
        "writer fs ra-208 workers-3 noise-hog-elsewhere",
        fault={"read_ahead_kb": 208, "workers": 3},
        fix={"read_ahead_kb": 208, "workers": 3},
        setup={"noise": ("hog-elsewhere",)},
    ),
    _c(
        "healthy-ra136-uncapped-dirty-w2",
        "readahead",
        "healthy uncapped ra-136 fs workers-2 noise-dirty",
        fault={"read_ahead_kb": 136},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("dirty",)},
    ),
    # The sixtieth held-out round (evals/split.py).
    _c(
        "ra336-iops280-w3-dirty-i2",
        "readahead",
        "iops-280 ra-336 fs workers-3 noise-dirty",
        fault={"read_ahead_kb": 336, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 280, "noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "ra208-iops95-raw-w3-hog-i2",
        "readahead",
        "iops-95 ra-208 raw workers-3 noise-hog-elsewhere",
        fault={"read_ahead_kb": 208, "workers": 3},
        fix={"workers": 3},
        setup={"raw": True, "read_iops": 95, "noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    _c(
        "ra96-bps16-raw-w3-memhog-mid",
        "readahead",
        "bps-16m ra-96 raw workers-3 noise-memhog",
        fault={"read_ahead_kb": 96, "workers": 3},
        fix={"workers": 3},
        setup={"raw": True, "read_iops": None, "read_bps": 16 * 1024 * 1024, "noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "starve-w1-p2-hog-mid",
        "starvation",
        "workers-1 preprocess-2 noise-hog-elsewhere",
        fault={"workers": 1},
        setup={"preprocess": 2, "noise": ("hog-elsewhere",)},
        onset="mid",
    ),
    _c(
        "cont-h2-w1-dirty",
        "contention",
        "hogs-2 workers-1 preprocess-2 noise-dirty",
        fault={"hogs": 2, "workers": 1},
        fix={"hogs": 2},
        setup={"noise": ("dirty",)},
    ),
    _c(
        "recl-204-memhog-mid-i2",
        "reclaim",
        "memcg-headroom-204 noise-memhog",
        fault={"mem_headroom_mb": 204},
        setup={"noise": ("memhog",)},
        onset="mid",
        interval_s=2.0,
    ),
    _c(
        "wb-ckpt-ra360-dirty",
        "writeback",
        "writer fs ra-360 workers-2 noise-dirty",
        fault={"read_ahead_kb": 360},
        fix={"read_ahead_kb": 360},
        setup={"noise": ("dirty",)},
    ),
    _c(
        "healthy-ra56-uncapped-hog-w1-i2",
        "readahead",
        "healthy uncapped ra-56 fs workers-1 noise-hog-elsewhere",
        fault={"read_ahead_kb": 56, "workers": 1},
        fix={"read_ahead_kb": 4096, "workers": 1},
        setup={"read_iops": None, "noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    # The sixty-first held-out round (evals/split.py).
    _c(
        "ra312-iops250-w1-rootwrites-i2",
        "readahead",
        "iops-250 ra-312 fs workers-1 noise-rootwrites",
        fault={"read_ahead_kb": 312, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 250, "noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "ra320-iops240-w1-dirty-mid",
        "readahead",
        "iops-240 ra-320 fs workers-1 noise-dirty",
        fault={"read_ahead_kb": 320, "workers": 1},
        fix={"workers": 1},
        setup={"read_iops": 240, "noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "ra32-bps33-hog",
        "readahead",
        "bps-33m ra-32 fs workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 32},
        setup={"read_iops": None, "read_bps": 33 * 1024 * 1024, "noise": ("hog-elsewhere",)},
    ),
    _c(
        "starve-w0-p4-dirty-mid",
        "starvation",
        "workers-0 preprocess-4 noise-dirty",
        setup={"preprocess": 4, "noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "cont-h3-w2-rootwrites-i2",
        "contention",
        "hogs-3 workers-2 preprocess-2 noise-rootwrites",
        fault={"hogs": 3},
        fix={"hogs": 3},
        setup={"noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "recl-188-memhog-mid-i2",
        "reclaim",
        "memcg-headroom-188 noise-memhog",
        fault={"mem_headroom_mb": 188},
        setup={"noise": ("memhog",)},
        onset="mid",
        interval_s=2.0,
    ),
    _c(
        "wb-ckpt-ra264-hog-i2",
        "writeback",
        "writer fs ra-264 workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 264},
        fix={"read_ahead_kb": 264},
        setup={"noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    _c(
        "healthy-ra192-uncapped-memhog-w2",
        "readahead",
        "healthy uncapped ra-192 fs workers-2 noise-memhog",
        fault={"read_ahead_kb": 192},
        fix={"read_ahead_kb": 4096},
        setup={"read_iops": None, "noise": ("memhog",)},
    ),
    # The sixty-second held-out round (evals/split.py).
    _c(
        "ra152-iops240-raw-w1-rootwrites-i2",
        "readahead",
        "iops-240 ra-152 raw workers-1 noise-rootwrites",
        fault={"read_ahead_kb": 152, "workers": 1},
        fix={"workers": 1},
        setup={"raw": True, "read_iops": 240, "noise": ("rootwrites",)},
        interval_s=2.0,
    ),
    _c(
        "ra264-iops75-raw-hog",
        "readahead",
        "iops-75 ra-264 raw workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 264},
        setup={"raw": True, "read_iops": 75, "noise": ("hog-elsewhere",)},
    ),
    _c(
        "ra304-bps26-w3-hog",
        "readahead",
        "bps-26m ra-304 fs workers-3 noise-hog-elsewhere",
        fault={"read_ahead_kb": 304, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": None, "read_bps": 26 * 1024 * 1024, "noise": ("hog-elsewhere",)},
    ),
    _c(
        "starve-w1-p3-dirty",
        "starvation",
        "workers-1 preprocess-3 noise-dirty",
        fault={"workers": 1},
        setup={"preprocess": 3, "noise": ("dirty",)},
    ),
    _c(
        "cont-h4-w3-dirty-mid-i2",
        "contention",
        "hogs-4 workers-3 preprocess-2 noise-dirty",
        fault={"hogs": 4, "workers": 3},
        fix={"hogs": 4},
        setup={"noise": ("dirty",)},
        onset="mid",
        interval_s=2.0,
    ),
    _c(
        "recl-224-dirty-mid-i2",
        "reclaim",
        "memcg-headroom-224 noise-dirty",
        fault={"mem_headroom_mb": 224},
        setup={"noise": ("dirty",)},
        onset="mid",
        interval_s=2.0,
    ),
    _c(
        "wb-ckpt-ra424-w3-memhog-mid",
        "writeback",
        "writer fs ra-424 workers-3 noise-memhog",
        fault={"read_ahead_kb": 424, "workers": 3},
        fix={"read_ahead_kb": 424, "workers": 3},
        setup={"noise": ("memhog",)},
        onset="mid",
    ),
    _c(
        "healthy-ra424-uncapped-memhog-w1-i2",
        "readahead",
        "healthy uncapped ra-424 fs workers-1 noise-memhog",
        fault={"read_ahead_kb": 424, "workers": 1},
        fix={"read_ahead_kb": 4096, "workers": 1},
        setup={"read_iops": None, "noise": ("memhog",)},
        interval_s=2.0,
    ),
    # The sixty-third held-out round (evals/split.py).
    _c(
        "ra488-iops45-w3-dirty-i2",
        "readahead",
        "iops-45 ra-488 fs workers-3 noise-dirty",
        fault={"read_ahead_kb": 488, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": 45, "noise": ("dirty",)},
        interval_s=2.0,
    ),
    _c(
        "ra408-iops170-raw-rootwrites-mid-i2",
        "readahead",
        "iops-170 ra-408 raw workers-2 noise-rootwrites",
        fault={"read_ahead_kb": 408},
        setup={"raw": True, "read_iops": 170, "noise": ("rootwrites",)},
        onset="mid",
        interval_s=2.0,
    ),
    _c(
        "ra168-bps26-w3-dirty-mid",
        "readahead",
        "bps-26m ra-168 fs workers-3 noise-dirty",
        fault={"read_ahead_kb": 168, "workers": 3},
        fix={"workers": 3},
        setup={"read_iops": None, "read_bps": 26 * 1024 * 1024, "noise": ("dirty",)},
        onset="mid",
    ),
    _c(
        "starve-w1-p3-memhog-mid-i2",
        "starvation",
        "workers-1 preprocess-3 noise-memhog",
        fault={"workers": 1},
        setup={"preprocess": 3, "noise": ("memhog",)},
        onset="mid",
        interval_s=2.0,
    ),
    _c(
        "cont-h4-w2-rootwrites-mid-i2",
        "contention",
        "hogs-4 workers-2 preprocess-2 noise-rootwrites",
        fault={"hogs": 4},
        fix={"hogs": 4},
        setup={"noise": ("rootwrites",)},
        onset="mid",
        interval_s=2.0,
    ),
    _c(
        "recl-232-dirty",
        "reclaim",
        "memcg-headroom-232 noise-dirty",
        fault={"mem_headroom_mb": 232},
        setup={"noise": ("dirty",)},
    ),
    _c(
        "wb-ckpt-ra64-hog-i2",
        "writeback",
        "writer fs ra-64 workers-2 noise-hog-elsewhere",
        fault={"read_ahead_kb": 64},
        fix={"read_ahead_kb": 64},
        setup={"noise": ("hog-elsewhere",)},
        interval_s=2.0,
    ),
    _c(
        "healthy-ra376-uncapped-hog-w1",
        "readahead",
        "healthy uncapped ra-376 fs workers-1 noise-hog-elsewhere",
        fault={"read_ahead_kb": 376, "workers": 1},
        fix={"read_ahead_kb": 4096, "workers": 1},
        setup={"read_iops": None, "noise": ("hog-elsewhere",)},
    ),
)


# -- what the truth says when the fix acts on the cause ---------------------------------------------


SATURATED_WAIT = 0.5  # a job waiting for data this much of the time is short of it, not healthy


def _truth(
    cond: Condition, sc: Scenario, dev: str, moved: bool, onset_t: float, fault_wait: float = 0.0
) -> dict[str, Any]:
    job = tb.JOB
    capped = sc.read_iops is not None or sc.read_bps is not None
    if not moved and capped and fault_wait >= SATURATED_WAIT:
        # The fix did not help, yet the job waits for data most of the time, reading from a device
        # held at a cap: the device is saturated (the spec's storage_latency, "slow or saturated").
        # No catalogue primitive raises a device's cap, and deeper prefetching adds no throughput.
        evidence = [f"io.{dev}.lat_p99_us", "psi.io.some_avg10", f"trainer.{job}.data_wait_frac"]
        return _label("storage_latency", onset_t, evidence, [])
    if not moved:
        return _label("none", None, None, [])
    wait = f"trainer.{job}.data_wait_frac"
    if sc.cause == "readahead_mismatch":
        fix = [{"primitive": "block.read_ahead_kb", "target": dev, "min": 1024, "max": 16384}]
        return _label(sc.cause, onset_t, [f"io.{dev}.avg_req_kb", f"io.{dev}.read_iops", wait], [fix])
    if sc.cause == "dataloader_starvation":
        fix = [{"primitive": "loader.workers", "target": job, "min": sc.fault.workers + 1, "max": 4}]
        return _label(sc.cause, onset_t, [wait, f"trainer.{job}.samples_per_s"], [fix])
    if sc.cause == "cpu_contention":
        # The fix measured (more loader workers than cores, to win a larger share of the contended
        # CPU) is one loader.workers refuses (never more workers than CPUs online): nothing the
        # catalogue may do helps, so doing nothing is right.
        return _label(sc.cause, onset_t, ["sched.runq_lat_p99_us", "psi.cpu.some_avg10", wait], [])
    if sc.cause == "writeback_burst":
        fix = [
            {"primitive": "vm.dirty_background_bytes", "min": 4194304, "max": 16777216},
            {"primitive": "vm.dirty_bytes", "min": 8388608, "max": 33554432},
        ]
        return _label(sc.cause, onset_t, ["mem.dirty_mib", f"io.{dev}.write_kbps", wait], [fix])
    # Memory reclaim: the fix (a larger cgroup limit) is no catalogue primitive; doing nothing is right.
    return _label(sc.cause, onset_t, ["mem.pagecache_miss_per_s", f"io.{dev}.read_kbps", wait], [])


def _label(
    cause: str, onset_t: float | None, evidence: list[str] | None, acceptable: list[list[dict[str, Any]]]
) -> dict[str, Any]:
    """A truth in the spec's key order; with no acceptable action, doing nothing is correct."""
    out: dict[str, Any] = {"root_causes": [cause]}
    if onset_t is not None:
        out["onset_t"] = onset_t
    if evidence is not None:
        out["evidence"] = evidence
    out["acceptable_actions"] = acceptable
    out["forbidden_actions"] = [{"primitive": "trainer.batch_size"}]
    out["noop_correct"] = not acceptable
    return out


# -- recording -----------------------------------------------------------------------------------


class _Onset:
    """A live host whose collection switches the fault on once `at_s` of the window have passed."""

    def __init__(self, live: LiveHost, at_s: float | None, fire: Callable[[], None]) -> None:
        self.live, self.at_s, self.fire = live, at_s, fire
        self.fs = live.fs
        self.fired_t: float | None = None

    def start(self) -> dict[str, SourceStatus]:
        return self.live.start()

    def collect(self, duration_s: float, on_sample: Callable[[Sample], None] | None = None) -> Window:
        t0: list[float] = []

        def each(s: Sample) -> None:
            if on_sample is not None:
                on_sample(s)
            t0[:] = t0 or [s.t]
            if self.at_s is not None and self.fired_t is None and s.t - t0[0] >= self.at_s:
                self.fire()
                self.fired_t = s.t - t0[0]

        return self.live.collect(duration_s, each)

    def knobs(self, devices: Sequence[str], gpus: Sequence[int]) -> dict[str, Any]:
        return self.live.knobs(devices, gpus)

    def report(self, window: Window) -> Any:
        return self.live.report(window)

    def close(self) -> None:
        self.live.close()


@dataclass
class Outcome:
    ident: str
    fault: tb.KPI
    fix: tb.KPI
    moved: float
    truth: str


def record_one(cond: Condition, ident: str, out: Path) -> Outcome:
    """Record one repeat of `cond` into `out/ident` and label it from the measured counterfactual."""
    sc = cond.built()
    with tb.session(sc) as bed:
        mid = cond.onset == "mid"
        bed.setup(throttle=not (mid and sc.cause == "readahead_mismatch"))
        bed.start_noise()
        # Healthy first when the fault comes mid-window: no hogs, no writer, no memory limit yet
        # (readahead: the device throttle comes later).
        pre = dataclasses.replace(sc.fault, hogs=0, writer=False, mem_headroom_mb=None) if mid else sc.fault
        bed.apply(pre)
        bed.start_trainer(pre)
        time.sleep(sc.settle_s)

        def onset() -> None:
            if sc.cause == "readahead_mismatch":
                bed.throttle()
            else:
                bed.switch(sc.fault)

        live = LiveHost(HostFS("/"), interval_s=cond.interval_s, bpf=True)
        at = 0.45 * cond.duration_s if mid else None
        watcher = _Onset(live, at, onset)
        rec = record(watcher, cond.duration_s, cond.interval_s)
        onset_t = watcher.fired_t if watcher.fired_t is not None else 0.0
        fault = bed.kpi(FIX_WINDOW_S)
        bed.stop_phase()
        bed.apply(sc.fix)
        bed.start_trainer(sc.fix)
        fix = bed.kpi(FIX_WINDOW_S)
    moved = tb.movement(fault, fix)
    is_cause = moved >= MOVE
    truth = _truth(cond, sc, Path(bed.dev).name, is_cause, round(onset_t, 1), fault.data_wait_frac)
    dev = Path(bed.dev).name
    tags = ["real", "matrix", sc.name, *cond.tags, f"onset-{cond.onset}", f"interval-{cond.interval_s:g}"]
    title = title_of(cond)
    comment = "\n".join(
        [
            f"Recorded by `python -m evals.matrix record --only {cond.name}` (condition {cond.name}).",
            f"testbed {sc.name}: {title}; data on /dev/{dev}"
            + (" (raw device)" if sc.raw else " (ext4)")
            + f", read_iops {sc.read_iops}, read_bps {sc.read_bps}, onset {cond.onset}.",
            f"Counterfactual on the same setup ({FIX_WINDOW_S:g} s each): fault {fault.samples_per_s:.1f} "
            f"samples/s (data wait {100 * fault.data_wait_frac:.0f} %), fix ({fix_note_of(cond)}) "
            f"{fix.samples_per_s:.1f} samples/s: {100 * moved:+.0f} %.",
            truth_line(truth["root_causes"][0], is_cause),
        ]
    )
    write_incident(_normalised(rec), out / ident, title=title, truth=truth, tags=tags, comment=comment)
    return Outcome(ident, fault, fix, moved, truth["root_causes"][0])


def truth_line(cause: str, moved: bool) -> str:
    why = f"the fix {'raises' if moved else 'does not raise'} samples/s by {100 * MOVE:.0f} % or more"
    if cause == "storage_latency" and not moved:
        share = f"{100 * SATURATED_WAIT:.0f} %"
        why += f", and the job waits for data {share} of the time or more on a capped device"
    return f"Truth: {cause} ({why})."


def _normalised(rec: Recording) -> Recording:
    """The job's pid is of no use after the run; everything else is as recorded."""
    jobs = [j.model_copy(update={"pid": None}) for j in rec.jobs]
    return dataclasses.replace(rec, jobs=jobs)


def _idents(cond: Condition, repeats: int, out: Path) -> list[str]:
    return [
        f"real-{cond.name}-{i}" for i in range(1, repeats + 1) if not (out / f"real-{cond.name}-{i}").exists()
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m evals.matrix", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="the conditions")
    rec = sub.add_parser("record", help="record the conditions (root, eBPF, PyTorch)")
    rec.add_argument("--only", default="*", help="a glob over condition names")
    rec.add_argument("--repeats", type=int, default=2)
    rec.add_argument("--out", type=Path, default=Path(__file__).parent / "incidents")
    a = ap.parse_args(argv)
    chosen = [c for c in CONDITIONS if fnmatch.fnmatch(c.name, a.only)] if a.cmd == "record" else CONDITIONS
    if a.cmd == "list":
        for c in chosen:
            print(
                f"{c.name:28} {c.scenario:11} onset {c.onset:5} interval {c.interval_s:g}  {' '.join(c.tags)}"
            )
        return 0
    tb.stop()  # a run that died left its setup: undo it first
    for c in chosen:
        for ident in _idents(c, a.repeats, a.out):
            t0 = time.monotonic()
            try:
                o = record_one(c, ident, a.out)
            except (tb.TestbedError, OSError) as e:
                print(f"{ident}: failed: {e}", file=sys.stderr)
                continue
            print(
                f"{ident}: fault {o.fault.samples_per_s:.1f} -> fix {o.fix.samples_per_s:.1f} samples/s "
                f"({100 * o.moved:+.0f} %): {o.truth} ({time.monotonic() - t0:.0f} s)",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
