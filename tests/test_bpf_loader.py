"""Run-time probing of tracefs, kernel headers and HZ, on fake host roots."""

from __future__ import annotations

import gzip
from pathlib import Path

from bpf.loader import COLLECTORS, find_tracefs, format_fields, headers_reason, kernel_hz, probe
from core.hostfs import HostFS
from tests.bpf_helpers import write_all_events, write_event


def test_all_collector_programs_exist() -> None:
    for spec in COLLECTORS.values():
        assert spec.path.is_file(), spec.path
        assert "TRACEPOINT_PROBE" in spec.path.read_text()


def test_each_tracepoint_has_one_program() -> None:
    """Every program on a tracepoint pays its dispatch: the hot scheduler ones are shared by no two."""
    seen: dict[str, str] = {}
    for spec in COLLECTORS.values():
        for tp in spec.tracepoints:
            assert tp.id not in seen, f"{tp.id} in both {seen[tp.id]} and {spec.name}"
            seen[tp.id] = spec.name
    assert seen["sched:sched_switch"] == seen["sched:sched_wakeup"] == "sched"


def test_find_tracefs(tmp_path: Path) -> None:
    fs = HostFS(tmp_path)
    assert find_tracefs(fs) is None
    (tmp_path / "sys/kernel/debug/tracing/events").mkdir(parents=True)
    assert find_tracefs(fs) == "/sys/kernel/debug/tracing"
    (tmp_path / "sys/kernel/tracing/events").mkdir(parents=True)
    assert find_tracefs(fs) == "/sys/kernel/tracing"


def test_format_fields_parses_arrays_and_data_loc(tmp_path: Path) -> None:
    write_event(tmp_path, "block", "block_rq_issue", ["dev_t dev", "char rwbs[10]", "__data_loc char[] cmd"])
    tp = COLLECTORS["block"].tracepoints[0]
    fields = format_fields(HostFS(tmp_path), "/sys/kernel/tracing", tp)
    assert fields == {"common_type", "dev", "rwbs", "cmd"}


def test_probe_reports_missing_event_and_field(tmp_path: Path) -> None:
    fs = HostFS(tmp_path)
    write_all_events(tmp_path)
    assert all(probe(s, fs, "/sys/kernel/tracing") is None for s in COLLECTORS.values())

    (tmp_path / "sys/kernel/tracing/events/writeback/balance_dirty_pages/format").unlink()
    assert probe(COLLECTORS["writeback"], fs, "/sys/kernel/tracing") == (
        "tracepoint writeback:balance_dirty_pages not in this kernel"
    )
    write_event(tmp_path, "block", "block_rq_complete", ["dev_t dev", "sector_t sector", "char rwbs[8]"])
    assert probe(COLLECTORS["block"], fs, "/sys/kernel/tracing") == (
        "tracepoint block:block_rq_complete lacks field nr_sector"
    )
    # Other collectors are unaffected.
    assert probe(COLLECTORS["sched"], fs, "/sys/kernel/tracing") is None


def test_headers_reason(tmp_path: Path) -> None:
    fs = HostFS(tmp_path)
    reason = headers_reason(fs, "6.1.0-x")
    assert reason is not None and "6.1.0-x" in reason and "make bootstrap" in reason
    (tmp_path / "lib/modules/6.1.0-x/build/include").mkdir(parents=True)
    assert headers_reason(fs, "6.1.0-x") is None


def test_kernel_hz_from_config_gz_then_boot_config(tmp_path: Path) -> None:
    fs = HostFS(tmp_path)
    (tmp_path / "proc").mkdir()
    (tmp_path / "boot").mkdir()
    (tmp_path / "boot/config-6.1.0-x").write_text("CONFIG_HZ_1000=y\nCONFIG_HZ=1000\n")
    assert kernel_hz(fs, "6.1.0-x") == (1000, "/boot/config-6.1.0-x")
    (tmp_path / "proc/config.gz").write_bytes(gzip.compress(b"# x\nCONFIG_HZ_300=y\nCONFIG_HZ=300\n"))
    assert kernel_hz(fs, "6.1.0-x") == (300, "/proc/config.gz")


def test_kernel_hz_without_config_or_jiffies_is_assumed(tmp_path: Path) -> None:
    hz, how = kernel_hz(HostFS(tmp_path), "none")
    assert hz == 250 and how.startswith("assumed")


def test_kernel_hz_measured_from_schedstat(tmp_path: Path) -> None:
    # /proc/schedstat of a fake root does not tick, so a frozen jiffies counter
    # must round to the lowest HZ rather than fail.
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/schedstat").write_text("version 15\ntimestamp 4295000000\n")
    hz, how = kernel_hz(HostFS(tmp_path), "none")
    assert hz == 100 and how.startswith("measured")
