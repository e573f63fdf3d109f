"""Where idletune keeps its state: journal, audit log, approvals, leases, the trainer socket.

Standard library only: the trainer hook finds the agent's socket here.
"""

from __future__ import annotations

import os

STATE_ENV = "IDLETUNE_STATE_DIR"
DEFAULT_STATE_DIR = "/var/lib/idletune"


def state_dir(explicit: str | None = None) -> str:
    """The explicit directory, else $IDLETUNE_STATE_DIR, else /var/lib/idletune."""
    return explicit or os.environ.get(STATE_ENV) or DEFAULT_STATE_DIR
