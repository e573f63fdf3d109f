"""A device held at a flat read rate while the job's tasks stall on it is at a cap. A cap on
requests and a cap on bytes look alike from the host, so the cap ranks after a readahead window
that larger requests could lift it with, and first where the window is already large."""

from __future__ import annotations

import math

from core.diagnosis import Category, Diagnosis
from core.report import HostInfo, JobInfo
from tests.diag_helpers import Jitter, diagnose_jittered, rank_of


def _reader(read_ahead_kb: int, swing: float, seed: int = 1, latency: bool = True) -> Diagnosis:
    """A job waiting on data read from loop0 (its file on vda) at about 24 MiB/s; `swing` is how
    far the read rate moves from second to second. Without `latency`, as procfs alone records it
    (no eBPF: no request latency)."""
    req = float(min(read_ahead_kb, 512))

    def metrics(t: int, j: Jitter) -> dict[str, float]:
        kbps = 24576.0 * (1.0 + swing * math.sin(1.7 * t))
        m = {
            "trainer.job.data_wait_frac": j(0.9),
            "trainer.job.samples_per_s": j(380.0),
            "psi.io.some_avg10": j(80.0),
            "cpu.util_pct": j(7.0),
        }
        for dev in ("loop0", "vda"):
            m |= {
                f"io.{dev}.read_kbps": kbps,
                f"io.{dev}.read_iops": kbps / req,
                f"io.{dev}.avg_req_kb": j(req),
                f"io.{dev}.write_kbps": 0.0,
            }
            if latency:
                m |= {f"io.{dev}.lat_p50_us": j(500.0), f"io.{dev}.lat_p99_us": j(2000.0)}
        return m

    return diagnose_jittered(
        40,
        seed,
        metrics,
        HostInfo(cpus=2, gpus=0, block_devices=["loop0", "vda"]),
        knobs={"block.read_ahead_kb@loop0": read_ahead_kb, "block.read_ahead_kb@vda": 8192},
        jobs=[JobInfo(name="job", loader_workers=2)],
    )


def test_a_flat_rate_with_a_large_window_is_the_device_at_its_cap() -> None:
    d = _reader(4096, swing=0.005)
    assert d.top.category is Category.STORAGE_LATENCY, [(c.category.value, c.confidence) for c in d.causes]
    assert d.top.target == "loop0"  # where the files live, not the disk beneath the loop device
    assert "io.loop0.read_kbps" in {e.metric for e in d.top.evidence}
    assert "cap" in d.top.summary


def test_a_flat_rate_with_a_small_window_names_readahead_first_and_the_cap_second() -> None:
    d = _reader(128, swing=0.005)
    assert d.top.category is Category.READAHEAD_MISMATCH
    assert rank_of(d, Category.STORAGE_LATENCY) == 2
    cap = next(c for c in d.causes if c.category is Category.STORAGE_LATENCY)
    assert 0.0 < cap.confidence < d.top.confidence


def test_a_rate_that_moves_is_no_cap() -> None:
    d = _reader(4096, swing=0.15)
    cap = next(c for c in d.causes if c.category is Category.STORAGE_LATENCY)
    assert "cap" not in cap.summary


def test_without_latency_figures_a_small_window_still_comes_before_the_device() -> None:
    """Procfs alone has no request latency; tasks stalled on I/O then stand for a slow device, but
    requests as large as a window below 1 MiB still point at the window first, as they do when
    latency is measured, and a large window still leaves the device."""
    for ra in (320, 512):
        d = _reader(ra, swing=0.005, latency=False)
        assert d.top.category is Category.READAHEAD_MISMATCH, (
            ra,
            [(c.category.value, c.confidence) for c in d.causes],
        )
        assert rank_of(d, Category.STORAGE_LATENCY) == 2
        assert d.top.category is _reader(ra, swing=0.005).top.category
    big = _reader(4096, swing=0.005, latency=False)
    assert big.top.category is Category.STORAGE_LATENCY
    # The device the data is read from (the loop device, not the disk beneath it) is named, so a
    # rule can read its window.
    assert big.top.target == "loop0" and "loop0" in big.top.summary
