"""User-facing errors: one line that says what to do, exit status 2."""

from __future__ import annotations

import sys
from typing import NoReturn


def fail(message: str, code: int = 2) -> NoReturn:
    print(f"idletune: {message}", file=sys.stderr)
    raise SystemExit(code)
