"""The wire protocol between the trainer hook and the agent, and the bounds both enforce.

Standard library only (with the standard-library modules of `core`): training scripts import
this through `agent.hook`.

Transport: a Unix stream socket at `$IDLETUNE_STATE_DIR/trainer.sock`; one JSON
object per line, each way. Hook to agent:

    {"type": "hello", "v": 1, "job", "pid", "rank", "knobs", "capabilities", "workers"}
    {"type": "metrics", "job", "pid", "interval_s", "steps", "step_s", "wait_s",
     "active_s", "samples", "knobs", "workers"}
    {"type": "ack", "id", "key", "ok", "value", "pending", "reason"}

Agent to hook:

    {"type": "set", "id", "key", "value"}
    {"type": "reopen_files", "id"}

An ack with `pending: true` means accepted, to take effect at the next safe point
(the next epoch); a second ack with `pending: false` follows when it has (or a
refusal if applying failed, or when a newer request for the same key superseded
it). `value` is always the value in force when sent. `reopen_files` is answered
the same way, under the key `reopen_files` and with no value: its second ack says
the loader's workers were restarted and have opened their files again. The agent
takes a change as in force only on that second ack (and the next metrics line's
`knobs`), however long after the request it comes.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

from core.cpulist import format_cpulist, parse_cpulist
from core.knob import KnobValue
from core.statedir import state_dir

PROTOCOL_VERSION = 1
SOCKET_NAME = "trainer.sock"
MAX_LINE = 64 * 1024  # a longer line is a broken peer, not a message

WORKERS = "loader.workers"
PREFETCH = "loader.prefetch_factor"
AFFINITY = "loader.cpu_affinity"
BATCH_SIZE = "trainer.batch_size"
REOPEN_FILES = "reopen_files"
KEYS = (WORKERS, PREFETCH, AFFINITY, BATCH_SIZE)

# Hard limits the hook enforces whatever the agent asks: the catalogue's ranges
# (primitives/loader_*.py, trainer_batch_size.py), and for workers also 4 per CPU
# this process may use, past which a loader only thrashes. The catalogue and the
# gate keep tighter, host-aware limits of their own.
WORKERS_MAX = 256
WORKERS_PER_CPU_MAX = 4
PREFETCH_MIN, PREFETCH_MAX = 1, 16
BATCH_SIZE_MIN, BATCH_SIZE_MAX = 1, 65536

_JOB_BAD = re.compile(r"[^a-z0-9_-]+")


def socket_path(explicit_state_dir: str | None = None) -> str:
    return os.path.join(state_dir(explicit_state_dir), SOCKET_NAME)


def safe_job_name(text: str) -> str:
    """A name usable inside metric names (`trainer.<job>.…`): lower case, no dots or spaces."""
    name = _JOB_BAD.sub("-", text.strip().lower()).strip("-_")[:48]
    return name or "job"


def encode(msg: dict[str, Any]) -> bytes:
    return (json.dumps(msg, separators=(",", ":")) + "\n").encode()


def decode(line: bytes) -> dict[str, Any] | None:
    """One message, or None for a line that is not a JSON object (skipped, not fatal)."""
    try:
        msg = json.loads(line)
    except ValueError:
        return None
    return msg if isinstance(msg, dict) else None


def check(key: str, value: Any, usable_cpus: set[int]) -> tuple[KnobValue | None, str]:
    """(canonical value, "") when `value` is acceptable for `key`, else (None, why not)."""
    if key == AFFINITY:
        try:
            cpus = set(value) if isinstance(value, list) else parse_cpulist(str(value))
        except (TypeError, ValueError) as e:
            return None, f"{key}: not a CPU list ({e})"
        if not cpus:
            return None, f"{key}: not a CPU list (empty CPU list)"
        if not all(isinstance(c, int) and not isinstance(c, bool) for c in cpus):
            return None, f"{key}: CPU numbers must be integers"
        outside = cpus - usable_cpus
        if outside:
            usable = format_cpulist(usable_cpus)
            return None, f"{key}: CPUs {format_cpulist(outside)} are not usable here (usable: {usable})"
        return format_cpulist(cpus), ""
    if key in (WORKERS, PREFETCH, BATCH_SIZE):
        if isinstance(value, bool) or not isinstance(value, int | float) or int(value) != value:
            return None, f"{key}: must be a whole number, got {value!r}"
        lo, hi = _int_bounds(key, usable_cpus)
        if not lo <= int(value) <= hi:
            return None, f"{key}: {int(value)} is outside [{lo}, {hi}]"
        return int(value), ""
    return None, f"unknown key {key!r}"


def _int_bounds(key: str, usable_cpus: set[int]) -> tuple[int, int]:
    if key == WORKERS:
        return 0, min(WORKERS_MAX, WORKERS_PER_CPU_MAX * max(1, len(usable_cpus)))
    if key == PREFETCH:
        return PREFETCH_MIN, PREFETCH_MAX
    return BATCH_SIZE_MIN, BATCH_SIZE_MAX


def bounds(key: str, usable_cpus: set[int]) -> dict[str, int]:
    lo, hi = _int_bounds(key, usable_cpus)
    return {"min": lo, "max": hi}
