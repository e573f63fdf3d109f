"""Figures a benchmark prints, also kept as JSON so the README table is regenerated from them.

Each file records the machine's state at the time (CPUs, load average), because
figures from a shared 2-core host are only meaningful beside it.
"""

from __future__ import annotations

import json
import os
import platform
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def write_figures(path: Path | None, bench: str, figures: dict[str, Any]) -> None:
    """Write `figures` for `bench` to `path` (nothing when None)."""
    if path is None:
        return
    doc = {
        "bench": bench,
        "figures": figures,
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "cpus": os.cpu_count(),
        "load_avg_1m": round(os.getloadavg()[0], 2),
        "kernel": platform.release(),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2) + "\n")


def read_all(folder: Path = RESULTS) -> dict[str, dict[str, Any]]:
    """Every recorded bench by name."""
    out: dict[str, dict[str, Any]] = {}
    for f in sorted(folder.glob("*.json")):
        doc = json.loads(f.read_text())
        if isinstance(doc, dict) and "bench" in doc and "figures" in doc:
            out[str(doc["bench"])] = doc
    return out
