"""Where idletune keeps its state (journal, audit log, approvals, leases, token, the trainer socket),
and how its files are opened: as data that root trusts only from a directory only root can write.

The state directory must be a directory owned by root (or by the user running idletune) and not
writable by group or others; files in it are opened without following symlinks and must be
regular files with the same owner rule. Anything else is refused with one line saying what to
do: a journal planted by another user would otherwise tell root what to write where.

Standard library only: the trainer hook finds the agent's socket here.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

STATE_ENV = "IDLETUNE_STATE_DIR"
DEFAULT_STATE_DIR = "/var/lib/idletune"


class StateError(Exception):
    """A state directory or file that is not safe to use; the message is one line saying what to do."""


class StateAccessError(StateError):
    """A state file this user may not open (root's journal read by another user)."""


class LockHeld(StateError):
    """Another process holds a state lock (`pid_lock`); `holder` is the pid it wrote, "?" when none."""

    def __init__(self, path: Path, holder: str) -> None:
        super().__init__(f"another process (pid {holder}) holds {path}")
        self.path = path
        self.holder = holder


def state_dir(explicit: str | None = None) -> str:
    """The explicit directory, else $IDLETUNE_STATE_DIR, else /var/lib/idletune."""
    return explicit or os.environ.get(STATE_ENV) or DEFAULT_STATE_DIR


def _owner_ok(uid: int) -> bool:
    return uid in (0, os.geteuid())


def secure_dir(path: str | os.PathLike[str], *, mode: int = 0o755) -> Path:
    """The directory, created with `mode` when absent; StateError unless it is a directory owned by
    root (or this user) and not writable by group or others. An existing one is never chmod'ed."""
    p = Path(path)
    try:
        st = os.stat(p)
    except FileNotFoundError:
        try:
            p.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
            p.mkdir(mode=mode)
        except FileExistsError:
            pass  # another process made it just now: checked below like any existing one
        except OSError as e:
            raise StateError(f"cannot create the state directory {p}: {e.strerror or e}") from None
        st = os.stat(p)
    except OSError as e:
        raise StateError(f"cannot use the state directory {p}: {e.strerror or e}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise StateError(f"{p} is not a directory: point {STATE_ENV} at a directory only root can write")
    if not _owner_ok(st.st_uid):
        raise StateError(
            f"{p} is owned by uid {st.st_uid}, not root: idletune keeps its journal only in a directory "
            f"root owns (chown root {p}, or point {STATE_ENV} elsewhere)"
        )
    if st.st_mode & 0o022:
        raise StateError(
            f"{p} is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o}): "
            f"run chmod go-w {p}, or point {STATE_ENV} at a directory only root can write"
        )
    return p


def open_file(path: str | os.PathLike[str], flags: int, mode: int = 0o600, *, private: bool = False) -> int:
    """A descriptor on a state file, opened without following a symlink; StateError unless it is a
    regular file owned by root (or this user), not writable by group or others, and with `private`
    not readable by them either. The caller closes it."""
    p = Path(path)
    try:
        fd = os.open(p, flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, mode)
    except OSError as e:
        if e.errno == errno.ELOOP:  # the name is a symlink
            raise StateError(f"{p} is a symbolic link: idletune does not follow links in its state") from None
        if e.errno in (errno.EACCES, errno.EPERM):
            raise StateAccessError(f"cannot open {p}: permission denied (run as root)") from None
        raise
    try:
        st = os.fstat(fd)
        bad = 0o077 if private else 0o022
        if not stat.S_ISREG(st.st_mode):
            raise StateError(f"{p} is not a regular file: move it away")
        if not _owner_ok(st.st_uid):
            raise StateError(f"{p} is owned by uid {st.st_uid}, not root: move it away")
        if st.st_mode & bad:
            raise StateError(
                f"{p} has mode {stat.S_IMODE(st.st_mode):04o}, open to group or others: move it away"
            )
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_file(path: str | os.PathLike[str], *, private: bool = False, limit: int = 64 << 20) -> str | None:
    """A state file's text (None when absent), checked as `open_file` does; StateError past `limit` bytes."""
    try:
        fd = open_file(path, os.O_RDONLY, private=private)
    except FileNotFoundError:
        return None
    with os.fdopen(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise StateError(f"{path} is larger than {limit} bytes: move it away")
    return data.decode("utf-8", errors="replace")


def write_file(path: str | os.PathLike[str], text: str, mode: int = 0o600) -> None:
    """Replace a state file atomically: a new file beside it (never through a link), then rename."""
    p = Path(path)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)  # left by a crash of this pid's predecessor
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    try:
        os.write(fd, text.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, p)


@contextlib.contextmanager
def pid_lock(path: str | os.PathLike[str], wait_s: float = 0.0) -> Iterator[None]:
    """An exclusive lock on the state file `path` for the block, the file holding this process's pid;
    LockHeld once another process has held it for `wait_s`. Closing drops the lock, so a holder's
    exit, by a crash too, frees it."""
    fd = open_file(path, os.O_RDWR | os.O_CREAT)
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "?"
                    raise LockHeld(Path(path), holder) from None
                time.sleep(0.02)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)  # closing drops the lock
