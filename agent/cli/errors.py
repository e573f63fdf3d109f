"""User-facing errors: one line that says what to do, exit status 2."""

from __future__ import annotations

import sys
from typing import NoReturn

from core.text import printable


def fail(message: str, code: int = 2) -> NoReturn:
    # The message may quote a host, an incident or a user: it reaches the terminal cleaned.
    print(f"idletune: {printable(message)}", file=sys.stderr)
    raise SystemExit(code)
