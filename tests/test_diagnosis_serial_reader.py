"""A job whose one loader worker reads all its data blocks on every request the readahead window
leaves it: its reads run in series with its decoding. On a fast device each request is short, so
the I/O pressure stays low against the trainer's wait, yet the device is busy serving that one
reader for much of the wait and a larger window lets readahead run ahead of it. Such a reader's
window is named, not starvation; with more workers, or a trainer that waits little, or a device
that is barely busy, the I/O share of the wait decides as before (tests/test_diagnosis_io_share.py)."""

from __future__ import annotations

import pytest

from agent.diagnosis.rules_io import SERIAL_BUSY, SERIAL_WAIT
from core.diagnosis import Category, Diagnosis
from core.report import HostInfo, JobInfo
from tests.diag_helpers import Jitter, diagnose_jittered


def _reader(
    workers: int = 1,
    wait: float = 0.6,
    iops: float = 1000.0,
    lat_us: float = 500.0,
    util_pct: float | None = None,
    seed: int = 1,
) -> Diagnosis:
    """A chronic reader of 400 kB requests under read_ahead_kb 400 on an uncapped device, its tasks
    stalled on I/O 8 % of the time (an eighth of a 60 % wait); the device's busy share is `iops`
    times `lat_us`, or `util_pct` where the host records it (then with no latency figures)."""

    def metrics(t: int, j: Jitter) -> dict[str, float]:
        m = {
            "trainer.job.data_wait_frac": j(wait),
            "trainer.job.samples_per_s": j(6000.0),
            "trainer.job.step_time_ms": j(10.0),
            "cpu.util_pct": j(66.0),
            "psi.cpu.some_avg10": j(20.0),
            "psi.io.some_avg10": j(8.0),
            "io.vdb.read_iops": j(iops),
            "io.vdb.read_kbps": j(iops * 400.0),
            "io.vdb.avg_req_kb": j(400.0),
            "mem.dirty_mib": j(6.0),
        }
        if util_pct is None:
            m |= {"io.vdb.lat_p50_us": j(lat_us), "io.vdb.lat_p99_us": j(4.0 * lat_us)}
        else:
            m["io.vdb.util_pct"] = j(util_pct)
        return m

    host = HostInfo(cpus=2, numa_nodes=1, gpus=0, block_devices=["vdb"])
    job = [JobInfo(name="job", gpus=[], loader_workers=workers)]
    knobs = {"block.read_ahead_kb@vdb": 400, "loader.workers@job": workers}
    return diagnose_jittered(40, seed, metrics, host, knobs=knobs, jobs=job)


def _confidence(d: Diagnosis, category: Category) -> float:
    return next((c.confidence for c in d.causes if c.category is category), 0.0)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_lone_reader_waiting_on_a_busy_device_is_a_readahead_fault(seed: int) -> None:
    # Busy 1000 x 500 µs = half the span, against a 60 % wait.
    d = _reader(seed=seed)
    assert d.top.category is Category.READAHEAD_MISMATCH, d.causes[:3]
    assert _confidence(d, Category.DATALOADER_STARVATION) < _confidence(d, Category.READAHEAD_MISMATCH)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_hosts_own_utilization_stands_for_the_busy_share(seed: int) -> None:
    d = _reader(util_pct=50.0, seed=seed)
    assert d.top.category is Category.READAHEAD_MISMATCH, d.causes[:3]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_with_two_workers_the_io_share_of_the_wait_decides(seed: int) -> None:
    # The same figures with a second worker: one worker's reads overlap the other's decoding.
    d = _reader(workers=2, seed=seed)
    assert _confidence(d, Category.READAHEAD_MISMATCH) < 0.1, d.causes[:3]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_lone_reader_the_trainer_seldom_waits_on_is_not_a_readahead_fault(seed: int) -> None:
    d = _reader(wait=SERIAL_WAIT[0] - 0.1, seed=seed)
    assert _confidence(d, Category.READAHEAD_MISMATCH) < 0.1, d.causes[:3]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_lone_reader_whose_device_is_seldom_busy_is_not_a_readahead_fault(seed: int) -> None:
    # 60 % wait, the device busy under a fifth of it: the worker spends the wait decoding.
    busy = 0.6 * SERIAL_BUSY[0] * 0.5
    d = _reader(iops=busy * 1e6 / 500.0, seed=seed)
    assert _confidence(d, Category.READAHEAD_MISMATCH) < 0.1, d.causes[:3]
