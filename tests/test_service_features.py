"""Per-cgroup features: workload names from paths, id->path, normalisation; live on a real kernel."""

from __future__ import annotations

import math
import os
import threading
import time
from pathlib import Path

import pytest

from agent.service.features import FEATURES, build, vector
from agent.sources.cgroupfs import CgroupPaths, own_cgroup, workload_of
from bpf.snapshot import CgroupCounts
from core.hostfs import HostFS

CID = "0123456789abcdef" * 4
UID = "5f2b1c3a-9d8e-4f7a-b6c5-d4e3f2a1b0c9"


@pytest.mark.parametrize(
    ("path", "name", "container", "pod"),
    [
        (f"/system.slice/docker-{CID}.scope", f"docker-{CID[:12]}", CID, None),
        (f"/system.slice/cri-containerd-{CID}.scope", f"cri-containerd-{CID[:12]}", CID, None),
        (
            f"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod{UID.replace('-', '_')}.slice/"
            f"cri-containerd-{CID}.scope",
            f"pod-{UID}/{CID[:12]}",
            CID,
            UID,
        ),
        (f"/kubepods/besteffort/pod{UID}/{CID}", f"pod-{UID}/{CID[:12]}", CID, UID),
        (f"/kubepods/pod{UID}", f"pod-{UID}", None, UID),
        ("/system.slice/sshd.service", "sshd.service", None, None),
        ("/user.slice/user-0.slice", None, None, None),
        ("/", None, None, None),
    ],
)
def test_workload_names_from_cgroup_paths(
    path: str, name: str | None, container: str | None, pod: str | None
) -> None:
    w = workload_of(path)
    assert (w.name, w.container_id, w.pod_uid) == (name, container, pod)


def _fake_cgroup_root(tmp_path: Path) -> tuple[HostFS, dict[str, int]]:
    base = tmp_path / "sys/fs/cgroup"
    pod = f"kubepods.slice/kubepods-pod{UID.replace('-', '_')}.slice/cri-containerd-{CID}.scope"
    for rel in ("", "system.slice/sshd.service", pod):
        (base / rel).mkdir(parents=True, exist_ok=True)
    (base / "cgroup.controllers").write_text("cpu memory io\n")
    (base / pod / "memory.pressure").write_text(
        "some avg10=12.50 avg60=3.00 avg300=1.00 total=100\nfull avg10=1.00 avg60=0.00 avg300=0.00 total=5\n"
    )
    (tmp_path / "proc/pressure").mkdir(parents=True)
    (tmp_path / "proc/pressure/memory").write_text("some avg10=0.50 avg60=0 avg300=0 total=1\n")
    ids = {
        "/": os.stat(base).st_ino,
        "/system.slice/sshd.service": os.stat(base / "system.slice/sshd.service").st_ino,
        "/" + pod: os.stat(base / pod).st_ino,
    }
    return HostFS(tmp_path), ids


def test_ids_map_to_paths_and_unknown_ids_rescan_at_most_every_few_seconds(tmp_path: Path) -> None:
    fs, ids = _fake_cgroup_root(tmp_path)
    now = [100.0]
    paths = CgroupPaths(fs, rescan_s=5.0, clock=lambda: now[0])
    assert paths.root == "/sys/fs/cgroup"
    for path, cgid in ids.items():
        assert paths.path(cgid) == path and paths.id_of(path) == cgid
    new = tmp_path / "sys/fs/cgroup/system.slice/new.service"
    new.mkdir()
    assert paths.path(os.stat(new).st_ino) is None  # scanned moments ago: not again yet
    now[0] += 5.0
    assert paths.path(os.stat(new).st_ino) == "/system.slice/new.service"


def test_memory_pressure_is_a_share_and_missing_is_none(tmp_path: Path) -> None:
    fs, ids = _fake_cgroup_root(tmp_path)
    paths = CgroupPaths(fs)
    pod = next(p for p in ids if "kubepods" in p)
    assert paths.memory_pressure(pod) == pytest.approx(0.125)
    assert paths.memory_pressure("/") == pytest.approx(0.005)
    assert paths.memory_pressure("/system.slice/sshd.service") is None
    assert CgroupPaths(HostFS(tmp_path / "nothing")).memory_pressure("/") is None


def test_vector_normalisation() -> None:
    # Waits of 10, 20 and 30 µs: mean 20, population std sqrt(200/3).
    c = CgroupCounts(
        waits=3, wait_ns=60_000, wait_sq_us=100 + 400 + 900, switches=50, run_ns=40_000, blocked_ns=900_000
    )
    vec, mean, std = vector(c, 2.0, 0.25)
    assert mean == pytest.approx(20.0) and std == pytest.approx(math.sqrt(200 / 3))
    assert vec == pytest.approx(
        [math.log1p(20.0), math.log1p(math.sqrt(200 / 3)), 900_000 / 1_000_000, math.log1p(25.0), 0.25]
    )
    assert len(vec) == len(FEATURES)
    # Squares summed over whole µs can fall under the mean's square: the std is 0, never NaN.
    tiny = CgroupCounts(waits=2, wait_ns=1_800, wait_sq_us=0, switches=0, run_ns=0, blocked_ns=0)
    v2, _, s2 = vector(tiny, 1.0, None)
    assert s2 == 0.0 and v2[2] == 0.0 and v2[4] is None


def test_build_keeps_cgroups_with_waits_keyed_by_id_and_name(tmp_path: Path) -> None:
    fs, ids = _fake_cgroup_root(tmp_path)
    pod = next(p for p in ids if "kubepods" in p)
    counts = {
        ids[pod]: CgroupCounts(waits=10, wait_ns=10_000, wait_sq_us=10, switches=10, run_ns=1, blocked_ns=1),
        ids["/system.slice/sshd.service"]: CgroupCounts(waits=0, switches=3, run_ns=5),
        ids["/"]: CgroupCounts(waits=20, wait_ns=20_000, wait_sq_us=20, switches=20),
        999_999_999: CgroupCounts(waits=1, wait_ns=1_000, wait_sq_us=1, switches=1),
    }
    doc = build(counts, 1.0, 1234.5, CgroupPaths(fs))
    assert doc.live and doc.t == 1234.5 and doc.features == list(FEATURES)
    assert [c.cgroup_id for c in doc.cgroups] == [ids["/"], ids[pod], 999_999_999]
    by_id = {c.cgroup_id: c for c in doc.cgroups}
    assert by_id[ids[pod]].name == f"pod-{UID}/{CID[:12]}" and by_id[ids[pod]].pod_uid == UID
    assert by_id[ids[pod]].vector[4] == pytest.approx(0.125)
    gone = by_id[999_999_999]
    assert gone.path is None and gone.name is None and gone.vector[4] is None


@pytest.mark.root
@pytest.mark.slow
def test_endpoint_serves_the_agent_s_own_cgroup_fresh(tmp_path: Path) -> None:
    """Live: the eBPF run-queue collector keys by cgroup, and /v1/features shows this process's."""
    import importlib.util

    if importlib.util.find_spec("bcc") is None or not Path("/sys/kernel/tracing/events").is_dir():
        pytest.skip("needs bcc and tracefs")
    from fastapi.testclient import TestClient

    from agent.live import LiveHost
    from agent.service.app import create_app
    from agent.service.auth import load_token
    from agent.service.guard import Guard, fs_host
    from agent.service.observers import LiveObserver
    from agent.service.state import ServiceState
    from primitives.host import Host

    fs = HostFS()
    own = own_cgroup(fs)
    own_id = CgroupPaths(fs).id_of(own) if own is not None else None
    assert own_id is not None, "no cgroup v2 hierarchy"
    live = LiveHost(fs, interval_s=0.5, state_dir=str(tmp_path / "state"))
    state = ServiceState(LiveObserver(live), Guard(tmp_path / "state", lambda: fs_host(Host(fs))))
    client = TestClient(create_app(state, load_token(tmp_path / "state")))
    stop = threading.Event()

    def pingpong() -> None:
        r, w = os.pipe()
        while not stop.is_set():
            os.write(w, b"x")
            os.read(r, 1)

    workers = [threading.Thread(target=pingpong) for _ in range(3)]
    try:
        state.refresh()  # starts the sources (compiles the programs)
        for t in workers:
            t.start()
        time.sleep(1.0)
        state.refresh()
        doc = client.get("/v1/features").json()
    finally:
        stop.set()
        for t in workers:
            t.join()
        state.stop()
    assert doc["live"], doc["reason"]
    assert time.time() - doc["t"] < 5.0
    mine = next((c for c in doc["cgroups"] if c["cgroup_id"] == own_id), None)
    assert mine is not None, [c["cgroup_id"] for c in doc["cgroups"]]
    assert mine["path"] == own and mine["waits"] > 100
    mean_log, std_log, offcpu, cs_log, psi = mine["vector"]
    assert mean_log > 0 and std_log >= 0 and 0.0 <= offcpu <= 1.0 and cs_log > math.log1p(100)
    assert psi is None or 0.0 <= psi <= 1.0
