"""Giving back what the compiler left resident once the programs are loaded.

bcc compiles with clang and LLVM inside the agent's process. After a compile,
malloc_trim returns the compiler's freed heap, and the pages of LLVM's and
clang's code and read-only data that the compile touched (some 80 MB, counted
in the agent's RSS) are dropped from the process: they are clean copies of the
library files, so dropping them loses nothing, and a later compile (a reload)
reads them back from the page cache or the disk. Writable mappings, and
read-only ones holding any page of their own (relocations), are left alone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

MADV_DONTNEED = 4
# The compiler's libraries, by file name: bcc links LLVM and clang as shared libraries.
COMPILER_LIBS = ("libLLVM", "libclang")


@dataclass(frozen=True)
class Mapping:
    start: int
    end: int
    perms: str
    path: str
    rss_kb: int
    anonymous_kb: int


def mappings(smaps: str) -> Iterator[Mapping]:
    """The mappings of a /proc/PID/smaps text, with their resident and private anonymous sizes."""
    head: list[str] | None = None
    fields: dict[str, int] = {}

    def done() -> Mapping | None:
        if head is None:
            return None
        lo, hi = (int(x, 16) for x in head[0].split("-"))
        path = head[5] if len(head) > 5 else ""
        return Mapping(lo, hi, head[1], path, fields.get("Rss", 0), fields.get("Anonymous", 0))

    for line in smaps.splitlines():
        parts = line.split()
        if not parts:
            continue
        if not parts[0].endswith(":"):
            m = done()
            if m is not None:
                yield m
            head, fields = parts, {}
        elif len(parts) >= 2 and parts[1].isdigit():
            fields[parts[0][:-1]] = int(parts[1])
    m = done()
    if m is not None:
        yield m


def droppable(m: Mapping, libs: tuple[str, ...] = COMPILER_LIBS) -> bool:
    """A compiler library's mapping that holds only clean copies of its file."""
    return (
        Path(m.path).name.startswith(libs)
        and "w" not in m.perms
        and m.perms.endswith("p")
        and m.anonymous_kb == 0
        and m.rss_kb > 0
    )


def _libc_madvise() -> Callable[[int, int, int], int]:
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    fn = libc.madvise
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    fn.restype = ctypes.c_int
    return lambda addr, length, advice: int(fn(addr, length, advice))


def drop_compiler_pages(
    smaps_path: str = "/proc/self/smaps", madvise: Callable[[int, int, int], int] | None = None
) -> int:
    """Drop the compiler libraries' clean resident pages from this process; the kB dropped."""
    try:
        text = Path(smaps_path).read_text()
    except OSError:
        return 0
    advise = madvise or _libc_madvise()
    dropped = 0
    for m in mappings(text):
        if droppable(m) and advise(m.start, m.end - m.start, MADV_DONTNEED) == 0:
            dropped += m.rss_kb
    return dropped
