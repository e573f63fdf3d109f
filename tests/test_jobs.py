"""Job discovery over a fake /proc: NVML processes, operator jobs, hook announcements, workers."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.jobs import JobRegistry, JobSpecError, OperatorJob, jobs_from_config, parse_job_spec
from agent.proctree import children, descendants
from agent.sources.trainer_state import AnnouncedJob
from core.hostfs import HostFS


class FakeProc:
    """Writes /proc/<pid>/{stat,comm,cmdline,task/<tid>/children} under a temporary root."""

    def __init__(self, root: Path, *, children_files: bool = True) -> None:
        self.root = root
        self.children_files = children_files
        self.kids: dict[tuple[int, int], list[int]] = {}
        self.fs = HostFS(root)

    def add(
        self, pid: int, ppid: int, argv: list[str], comm: str = "python3", tids: tuple[int, ...] = ()
    ) -> None:
        d = self.root / "proc" / str(pid)
        d.mkdir(parents=True)
        (d / "comm").write_text(comm + "\n")
        (d / "cmdline").write_text("\0".join(argv) + ("\0" if argv else ""))
        # comm with a space and a parenthesis: the parser must take fields after the last ')'.
        (d / "stat").write_text(f"{pid} ({comm} (x)) S {ppid} {pid} {pid} 0 -1 4194560 0 0\n")
        for tid in (pid, *tids):
            (d / "task" / str(tid)).mkdir(parents=True)
            if self.children_files:
                (d / "task" / str(tid) / "children").write_text("")
        if ppid > 0 and (self.root / "proc" / str(ppid)).exists():
            self.kids.setdefault((ppid, ppid), []).append(pid)
            self._write_kids(ppid, ppid)

    def fork_from_thread(self, parent: int, tid: int, pid: int, argv: list[str]) -> None:
        self.add(pid, parent, argv)
        self.kids[(parent, parent)].remove(pid)
        self.kids.setdefault((parent, tid), []).append(pid)
        self._write_kids(parent, parent)
        self._write_kids(parent, tid)

    def _write_kids(self, pid: int, tid: int) -> None:
        if self.children_files:
            text = " ".join(str(c) for c in self.kids.get((pid, tid), [])) + " "
            (self.root / "proc" / str(pid) / "task" / str(tid) / "children").write_text(text)


PY = "/usr/bin/python3.11"


def host(root: Path, children_files: bool = True) -> FakeProc:
    p = FakeProc(root, children_files=children_files)
    p.add(100, 1, [PY, "/usr/local/bin/torchrun", "--nproc-per-node", "2", "train.py"])
    p.add(200, 100, [PY, "-u", "/opt/jobs/train.py", "--lr", "1e-3"], comm="pt_main_thread", tids=(205,))
    p.add(201, 100, [PY, "-u", "/opt/jobs/train.py", "--lr", "1e-3"], comm="pt_main_thread")
    for w in (300, 301):
        p.add(w, 200, [PY, "-u", "/opt/jobs/train.py"])
    p.fork_from_thread(200, 205, 302, [PY, "-u", "/opt/jobs/train.py"])  # forked by a non-main thread
    p.add(400, 300, ["/usr/bin/ffmpeg", "-i", "x.mp4"], comm="ffmpeg")
    p.add(310, 201, [PY, "-u", "/opt/jobs/train.py"])
    p.add(500, 1, [PY, "-W", "ignore", "-m", "bench.thing"])
    p.add(600, 1, ["/usr/local/bin/ollama", "serve"], comm="ollama")
    p.add(700, 1, ["java", "-jar", "etl.jar"], comm="java")
    p.add(701, 700, ["java", "-jar", "etl.jar"], comm="java")
    p.add(800, 1, [PY, "bert_finetune.py"])
    p.add(1000, 1, [PY, "-c", "import torch; ..."], comm="python3")
    return p


GPU_PROCS = {0: [200, 301, 500, 1000], 1: [201, 600, 800]}


def registry(p: FakeProc) -> JobRegistry:
    return JobRegistry(
        p.fs,
        operator=[OperatorJob("etl", 700), OperatorJob("gone", 900)],
        gpu_processes=lambda: GPU_PROCS,
        announced=lambda: [AnnouncedJob("bert", [800], [], {}, {})],
        max_age_s=0.0,
    )


@pytest.mark.parametrize("children_files", [True, False])
def test_jobs_from_all_three_places(tmp_path: Path, children_files: bool) -> None:
    reg = registry(host(tmp_path, children_files))
    assert reg.pids_by_job() == {
        "bert": [800],
        "etl": [700, 701],
        # both ranks (same script, same torchrun parent) first, then their workers
        "train": [200, 201, 300, 301, 302, 400, 310],
        "bench-thing": [500],
        "ollama": [600],
        "python3": [1000],
    }
    infos = {j.name: j for j in reg.job_infos()}
    assert infos["train"].model_dump() == {
        "name": "train",
        "pid": 200,
        "gpus": [0, 1],
        "loader_workers": 3,
        "found_by": "nvml",
    }
    assert (infos["bert"].found_by, infos["bert"].gpus) == ("hook", [1])
    assert (infos["etl"].found_by, infos["etl"].gpus, infos["etl"].loader_workers) == ("operator", [], 1)
    assert reg.notes == ["job gone: pid 900 is not running"]


def test_the_hook_name_wins_for_the_same_process(tmp_path: Path) -> None:
    p = host(tmp_path)
    reg = JobRegistry(
        p.fs,
        operator=[OperatorJob("my-bert", 800)],
        gpu_processes=lambda: GPU_PROCS,
        announced=lambda: [AnnouncedJob("bert", [800], [], {}, {})],
    )
    jobs = reg.pids_by_job()
    assert jobs["bert"] == [800] and "my-bert" not in jobs


def test_same_name_different_parents_are_different_jobs(tmp_path: Path) -> None:
    p = FakeProc(tmp_path)
    p.add(10, 1, [PY, "train.py"])
    p.add(20, 1, [PY, "other/train.py"])
    reg = JobRegistry(p.fs, gpu_processes=lambda: {0: [10], 1: [20]})
    # Both under init: started separately, so two jobs however alike their names.
    assert reg.pids_by_job() == {"train": [10], "train-2": [20]}


def test_ranks_under_different_launchers_get_unique_names(tmp_path: Path) -> None:
    p = FakeProc(tmp_path)
    p.add(5, 1, [PY, "torchrun", "a.py"])
    p.add(6, 1, [PY, "torchrun", "b.py"])
    p.add(10, 5, [PY, "train.py"])
    p.add(20, 6, [PY, "train.py"])
    reg = JobRegistry(p.fs, gpu_processes=lambda: {0: [10], 1: [20]})
    assert reg.pids_by_job() == {"train": [10], "train-2": [20]}


def test_refresh_follows_new_workers(tmp_path: Path) -> None:
    p = FakeProc(tmp_path)
    p.add(10, 1, [PY, "train.py"])
    reg = JobRegistry(p.fs, gpu_processes=lambda: {0: [10]}, max_age_s=0.0)
    assert reg.pids_by_job() == {"train": [10]}
    p.add(11, 10, [PY, "train.py"])
    assert reg.pids_by_job() == {"train": [10, 11]}
    cached = JobRegistry(p.fs, gpu_processes=lambda: {0: [10]}, max_age_s=60.0)
    assert cached.pids_by_job() == {"train": [10, 11]}
    p.add(12, 10, [PY, "train.py"])
    assert cached.pids_by_job() == {"train": [10, 11]}  # within max_age: one walk an interval


def test_no_sources_no_jobs(tmp_path: Path) -> None:
    assert JobRegistry(HostFS(tmp_path)).pids_by_job() == {}


def test_children_and_descendants_of_a_gone_process(tmp_path: Path) -> None:
    fs = HostFS(tmp_path)
    assert children(fs, 4242) == [] and descendants(fs, 4242) == []


def test_process_names(tmp_path: Path) -> None:
    p = FakeProc(tmp_path)
    p.add(1, 0, [PY, "-X", "dev", "-u", "/a/b/Fine Tune.v2.py"])
    p.add(2, 0, [], comm="kworker/0:1")
    p.add(3, 0, ["/opt/bin/MyTrainer"], comm="MyTrainer")
    reg = JobRegistry(p.fs)
    assert reg.process_name(1) == "fine-tune-v2"
    assert reg.process_name(2) == "kworker-0-1"
    assert reg.process_name(3) == "mytrainer"
    assert reg.process_name(99) == "pid99"


def test_parse_job_spec() -> None:
    assert parse_job_spec("ResNet50=4242") == OperatorJob("resnet50", 4242)
    for bad in ("resnet50", "=12", "a=b", "a=0", "a=-1", "a="):
        with pytest.raises(JobSpecError, match="NAME=PID"):
            parse_job_spec(bad)


def test_jobs_from_config() -> None:
    assert jobs_from_config({"jobs": {"bert": 7, "gpt": 8}}) == [
        OperatorJob("bert", 7),
        OperatorJob("gpt", 8),
    ]
    assert jobs_from_config({}) == []
    with pytest.raises(JobSpecError, match="map job names"):
        jobs_from_config({"jobs": ["bert=7"]})
    with pytest.raises(JobSpecError, match="positive integer"):
        jobs_from_config({"jobs": {"bert": "7"}})
