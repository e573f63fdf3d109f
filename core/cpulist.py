"""The kernel's CPU list format (`0-3,8,10-11`), as in /sys/devices/system/cpu/online.

Standard library only: the trainer hook checks affinity requests with it.
"""

from __future__ import annotations


def parse_cpulist(text: str) -> set[int]:
    """CPU ids of a list (empty for an empty list); ValueError for a malformed list or a range
    written backwards."""
    cpus: set[int] = set()
    for part in text.replace(" ", "").strip().split(","):
        if not part:
            continue
        lo_s, sep, hi_s = part.partition("-")
        lo = int(lo_s)
        hi = int(hi_s) if sep else lo
        if lo < 0 or hi < lo:
            raise ValueError(f"bad CPU range {part!r}")
        cpus.update(range(lo, hi + 1))
    return cpus


def format_cpulist(cpus: set[int] | list[int]) -> str:
    """The shortest list form: sorted, consecutive ids collapsed into ranges."""
    ids = sorted(set(cpus))
    parts: list[str] = []
    i = 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        parts.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return ",".join(parts)
