"""Process tree walks over /proc: a job's loader workers are its descendants.

Standard library only (the trainer hook uses it too). Reads go through HostFS so
tests can fake /proc. `/proc/<pid>/task/<tid>/children` needs CONFIG_PROC_CHILDREN
(set by the common distribution kernels); without it the ppid field of every
`/proc/<pid>/stat` is scanned instead, which costs one read per process.
"""

from __future__ import annotations

from core.hostfs import HostFS


def children(fs: HostFS, pid: int) -> list[int]:
    """Direct children of `pid`, created by any of its threads; [] when it is gone."""
    tasks = _listdir(fs, f"/proc/{pid}/task")
    if not tasks:
        return []
    if not fs.exists(f"/proc/{pid}/task/{tasks[0]}/children"):
        return [p for p, ppid in _all_ppids(fs).items() if ppid == pid]
    out: set[int] = set()
    for tid in tasks:
        try:
            text = fs.read_text(f"/proc/{pid}/task/{tid}/children")
        except OSError:
            continue  # the thread exited between the listing and the read
        out.update(int(t) for t in text.split())
    return sorted(out)


def descendants(fs: HostFS, pid: int, limit: int = 4096) -> list[int]:
    """All descendants of `pid`, breadth first; `limit` bounds a fork bomb's cost."""
    out: list[int] = []
    seen = {pid}
    frontier = [pid]
    while frontier and len(out) < limit:
        nxt: list[int] = []
        for p in frontier:
            for c in children(fs, p):
                if c not in seen:
                    seen.add(c)
                    out.append(c)
                    nxt.append(c)
        frontier = nxt
    return out[:limit]


def alive(fs: HostFS, pid: int) -> bool:
    return fs.exists(f"/proc/{pid}/stat")


def ppid(fs: HostFS, pid: int) -> int | None:
    try:
        return _stat_ppid(fs.read_text(f"/proc/{pid}/stat"))
    except (OSError, ValueError, IndexError):
        return None


def _stat_ppid(stat: str) -> int:
    # comm may hold spaces and parentheses: the fields after it start past the last ')'.
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def _listdir(fs: HostFS, path: str) -> list[str]:
    try:
        return fs.listdir(path)
    except OSError:
        return []  # the process exited between the check and the listing


def _all_ppids(fs: HostFS) -> dict[int, int]:
    out: dict[int, int] = {}
    for entry in _listdir(fs, "/proc"):
        if entry.isdigit():
            p = ppid(fs, int(entry))
            if p is not None:
                out[int(entry)] = p
    return out
