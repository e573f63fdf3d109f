"""Host setup steps of the testbed; each one logs its undo before it changes anything."""

from __future__ import annotations

import contextlib
import os
import shlex
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from evals.testbed.state import UndoLog, kill_group

CGROUP_ROOT = Path("/sys/fs/cgroup")
GROUP = "idletune-testbed"


def sh(*argv: str, timeout: float = 120.0) -> str:
    out = subprocess.run(list(argv), check=True, capture_output=True, text=True, timeout=timeout)
    return out.stdout.strip()


def make_data_device(log: UndoLog, workdir: Path, size_mb: int, *, raw: bool = False) -> tuple[str, Path]:
    """A sparse image on a loop device with ext4, mounted; returns (device, mount point). With
    `raw`, no file system: the mount point returned is the work directory.

    Direct I/O on the loop device keeps the image out of the page cache, so a read
    that misses the file system's cache really reaches the (throttled) device.
    """
    workdir.mkdir(parents=True, exist_ok=True)
    image = workdir / "data.img"
    log.add("file", path=str(image))
    with open(image, "wb") as f:
        f.truncate(size_mb * 1024 * 1024)
    dev = sh("losetup", "--find", "--show", "--direct-io=on", str(image))
    log.add("loop", dev=dev, file=str(image))
    if raw:
        return dev, workdir
    # Initialise inode tables and journal now: ext4lazyinit writing in the background
    # would add I/O nobody asked for to the measurements.
    sh("mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev, timeout=300)
    mnt = workdir / "mnt"
    mnt.mkdir(exist_ok=True)
    log.add("dir", path=str(mnt))
    log.add("mount", path=str(mnt))
    sh("mount", "-o", "noatime", dev, str(mnt))
    return dev, mnt


def dev_numbers(dev: str) -> str:
    st = os.stat(dev)
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


def queue_knob(dev: str, name: str) -> str:
    return f"/sys/block/{Path(dev).name}/queue/{name}"


def sysctl_path(key: str) -> str:
    return "/proc/sys/" + key.replace(".", "/")


def write_shards(folder: Path, shards: int, shard_mb: int) -> list[Path]:
    """Random bytes in shard files: incompressible, so no layer can shortcut the reads."""
    folder.mkdir(parents=True, exist_ok=True)
    chunk = os.urandom(4 * 1024 * 1024)
    files: list[Path] = []
    for i in range(shards):
        path = folder / f"shard-{i:04d}.bin"
        with open(path, "wb") as f:
            for k in range(shard_mb // 4):
                # Rotate the chunk so shards differ; cheap and still incompressible.
                f.write(chunk[k % 7 :] + chunk[: k % 7])
            f.flush()
            os.fsync(f.fileno())
        files.append(path)
    return files


def write_raw(dev: str, mb: int) -> None:
    """Random bytes over the first `mb` MiB of a block device (the raw data set)."""
    chunk = os.urandom(4 * 1024 * 1024)
    with open(dev, "wb") as f:
        for k in range(mb // 4):
            f.write(chunk[k % 7 :] + chunk[: k % 7])
        f.flush()
        os.fsync(f.fileno())


def drop_cache(files: Iterable[Path]) -> None:
    """Evict the files' pages (only theirs, not the whole host's cache) so reads hit the device."""
    for path in files:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def warm_cache(files: Iterable[Path]) -> None:
    for path in files:
        with open(path, "rb") as f:
            while f.read(1 << 20):
                pass


def make_cgroup(log: UndoLog, controller: str, name: str) -> Path:
    path = CGROUP_ROOT / controller / GROUP / name
    parent = path.parent
    # Logged even when it exists: a parent left by a crashed run goes at this run's teardown.
    log.add("cgroup", path=str(parent))
    parent.mkdir(exist_ok=True)
    log.add("cgroup", path=str(path))
    path.mkdir(exist_ok=True)
    return path


def spawn(
    log: UndoLog,
    argv: Sequence[str],
    *,
    cgroups: Sequence[Path] = (),
    lifetime_s: float | None = None,
    log_file: Path | None = None,
) -> subprocess.Popen[bytes]:
    """Start a process in its own session, inside `cgroups` from its first instruction.

    A shell joins the groups and then execs the command, so no child (loader
    workers) can be forked outside them. `lifetime_s` bounds a process that
    nobody stops (a run left for `testbed stop`) on a shared host.
    """
    joins = "".join(f"echo $$ > {shlex.quote(str(g / 'cgroup.procs'))} && " for g in cgroups)
    cmd = list(argv)
    if lifetime_s is not None:
        cmd = ["timeout", "-s", "TERM", f"{lifetime_s:.0f}", *cmd]
    script = f"{joins}exec {shlex.join(cmd)}"
    out = open(log_file, "ab") if log_file is not None else subprocess.DEVNULL  # noqa: SIM115
    try:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", script],
            start_new_session=True,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
    finally:
        if log_file is not None and not isinstance(out, int):
            out.close()
    log.process(proc.pid)
    return proc


def python_argv(module: str, *args: str) -> list[str]:
    return [sys.executable, "-m", module, *args]


def stop_process(log: UndoLog, proc: subprocess.Popen[bytes]) -> None:
    """Stop one spawned process group now (the undo log would, later)."""
    kill_group(proc.pid, None)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5)
    log.forget_process(proc.pid)
