"""The one object through which host paths are read and written.

Rooted at `/` on a live host; tests root it in a temporary directory that holds a
fake `/proc` and `/sys`. Paths are always given in their absolute host form.
"""

from __future__ import annotations

import os
from pathlib import Path

# Reads every host path under this root instead of `/`: a recorded or fake host
# (tests, demos) without touching the real one.
ROOT_ENV = "IDLETUNE_ROOT"


def host_fs() -> HostFS:
    """The host as the environment names it: $IDLETUNE_ROOT, else `/`."""
    return HostFS(os.environ.get(ROOT_ENV) or "/")


class HostFS:
    def __init__(self, root: str | os.PathLike[str] = "/") -> None:
        self.root = Path(root)

    def path(self, host_path: str) -> Path:
        if not host_path.startswith("/"):
            raise ValueError(f"host path must be absolute: {host_path!r}")
        return self.root / host_path.lstrip("/")

    def exists(self, host_path: str) -> bool:
        return self.path(host_path).exists()

    def read_text(self, host_path: str) -> str:
        return self.path(host_path).read_text()

    def read_value(self, host_path: str) -> str:
        """A sysfs/procfs value: the file's text without its trailing newline."""
        return self.read_text(host_path).strip()

    def listdir(self, host_path: str) -> list[str]:
        p = self.path(host_path)
        if not p.is_dir():
            return []
        return sorted(e.name for e in p.iterdir())

    def write_text(self, host_path: str, text: str) -> None:
        """Write a kernel knob. Only the executor calls this."""
        # Kernel files take one write(2); no truncation dance, no temporary file.
        with open(self.path(host_path), "w") as f:
            f.write(text)

    @property
    def is_real(self) -> bool:
        return self.root == Path("/")
