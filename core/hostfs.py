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
        self._real_root = self.root.resolve()
        # Asked on every path: comparing with a new Path("/") each time showed in the tick's profile.
        self._is_real = self.root == Path("/")

    def path(self, host_path: str) -> Path:
        """The path under the root; ValueError for one that is relative or would leave the root."""
        if not host_path.startswith("/"):
            raise ValueError(f"host path must be absolute: {host_path!r}")
        if "\0" in host_path or ".." in host_path.split("/"):
            raise ValueError(f"host path leaves the host root: {host_path!r}")
        p = self.root / host_path.lstrip("/")
        # Under `/` every path is on the host. Under another root a link may point out of it.
        if not self.is_real and not p.resolve().is_relative_to(self._real_root):
            raise ValueError(f"host path leaves the host root through a link: {host_path!r}")
        return p

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
        # Kernel files take one write(2); no temporary file. The knob must exist (nothing is
        # created), and the last component is never a link (a planted one would redirect root).
        fd = os.open(self.path(host_path), os.O_WRONLY | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)

    @property
    def is_real(self) -> bool:
        return self._is_real
