"""What the compiler leaves resident is given back: only clean pages of its libraries are dropped."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from agent.sources.bpf_source import BpfSource
from bpf import memory

SMAPS = """\
7f0000000000-7f0000100000 r--p 00000000 08:01 1234 /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1
Size:               1024 kB
Rss:                 800 kB
Anonymous:             0 kB
VmFlags: rd mr mw me
7f0000100000-7f0002000000 r-xp 00100000 08:01 1234 /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1
Size:              31744 kB
Rss:               40000 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me
7f0002000000-7f0002100000 r--p 02000000 08:01 1234 /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1
Size:               1024 kB
Rss:                1024 kB
Anonymous:          1024 kB
VmFlags: rd mr mw me ac
7f0002100000-7f0002200000 rw-p 02100000 08:01 1234 /usr/lib/x86_64-linux-gnu/libLLVM-14.so.1
Size:               1024 kB
Rss:                 512 kB
Anonymous:           512 kB
7f0003000000-7f0004000000 r-xp 00000000 08:01 99 /usr/lib/llvm-14/lib/libclang-cpp.so.14
Size:              16384 kB
Rss:               20000 kB
Anonymous:             0 kB
7f0005000000-7f0006000000 r-xp 00000000 08:01 77 /usr/lib/x86_64-linux-gnu/libbcc.so.0.26.0
Size:              16384 kB
Rss:                2800 kB
Anonymous:             0 kB
7f0007000000-7f0008000000 rw-p 00000000 00:00 0
Size:              16384 kB
Rss:                9000 kB
Anonymous:          9000 kB
7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
Rss:                 100 kB
Anonymous:           100 kB
"""


def test_mappings_are_read_with_their_resident_and_private_sizes() -> None:
    ms = list(memory.mappings(SMAPS))
    assert len(ms) == 8
    assert ms[1].start == 0x7F0000100000 and ms[1].perms == "r-xp" and ms[1].rss_kb == 40000
    assert ms[2].anonymous_kb == 1024
    assert ms[6].path == "" and ms[7].path == "[stack]"


def test_only_clean_read_only_pages_of_the_compiler_are_dropped(tmp_path: Path) -> None:
    smaps = tmp_path / "smaps"
    smaps.write_text(SMAPS)
    advised: list[tuple[int, int, int]] = []

    def madvise(addr: int, length: int, advice: int) -> int:
        advised.append((addr, length, advice))
        return 0

    kb = memory.drop_compiler_pages(str(smaps), madvise)
    # LLVM's read-only data and code, clang's code; not LLVM's relocated or writable parts,
    # not bcc (it reads the maps every interval), not anonymous memory.
    assert advised == [
        (0x7F0000000000, 0x100000, memory.MADV_DONTNEED),
        (0x7F0000100000, 0x1F00000, memory.MADV_DONTNEED),
        (0x7F0003000000, 0x1000000, memory.MADV_DONTNEED),
    ]
    assert kb == 800 + 40000 + 20000


def test_a_refused_advice_or_an_unreadable_smaps_drops_nothing(tmp_path: Path) -> None:
    smaps = tmp_path / "smaps"
    smaps.write_text(SMAPS)
    assert memory.drop_compiler_pages(str(smaps), lambda a, n, adv: -1) == 0
    assert memory.drop_compiler_pages(str(tmp_path / "none"), lambda a, n, adv: 0) == 0


def test_this_process_survives_dropping_its_own_compiler_pages() -> None:
    """On this process's real mappings: nothing of LLVM is mapped here, or it is dropped harmlessly."""
    assert memory.drop_compiler_pages() >= 0


def _compiler_rss_kb() -> int:
    text = Path("/proc/self/smaps").read_text()
    return sum(m.rss_kb for m in memory.mappings(text) if Path(m.path).name.startswith(memory.COMPILER_LIBS))


@pytest.mark.root
@pytest.mark.skipif(
    os.geteuid() != 0
    or importlib.util.find_spec("bcc") is None
    or not Path("/sys/kernel/tracing/events").is_dir(),
    reason="needs root, bcc and tracefs",
)
def test_after_a_compile_the_compiler_code_is_given_back_and_a_reload_still_compiles() -> None:
    src = BpfSource(collectors=["writeback", "filemap"])
    try:
        assert src.start().live
        # What stays is LLVM's relocated data; its code and constants (tens of MB) are gone.
        after_start = _compiler_rss_kb()
        assert after_start < 20_000, after_start
        src.collect()
        ok, line = src.reload(settle_s=0.05)  # the compiler's pages come back from the page cache
        assert ok, line
        assert _compiler_rss_kb() < 20_000
        assert src.collect() is not None
    finally:
        src.close()
