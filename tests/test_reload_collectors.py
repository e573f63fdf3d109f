"""Reloading collectors through the collection loop and the live host: what can be is
reloaded, the rest keeps running untouched, one line per source."""

from __future__ import annotations

from pathlib import Path

from agent.collector import Collector
from agent.jobs import OperatorJob
from agent.live import LiveHost
from core.hostfs import HostFS
from core.sample import SourceStatus


class Plain:
    """A source that reads afresh each interval: nothing to reload."""

    def __init__(self, name: str, live: bool = True) -> None:
        self.name = name
        self.live = live
        self.starts = 0

    def start(self) -> SourceStatus:
        self.starts += 1
        return SourceStatus(live=self.live, reason="" if self.live else "no driver")

    def collect(self) -> dict[str, float]:
        return {f"{self.name}.x": 1.0}

    def close(self) -> None:
        return None


class Swappable(Plain):
    """A source that can reload, with a set result (or a bug)."""

    def __init__(self, name: str, result: tuple[bool, str] | Exception) -> None:
        super().__init__(name)
        self.result = result

    def reload(self) -> tuple[bool, str]:
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


def test_collector_reloads_what_can_be_and_leaves_the_rest_running() -> None:
    srcs = [Swappable("bpf", (True, "block reloaded")), Plain("nvml", live=False), Plain("procfs")]
    c = Collector(srcs)
    c.start()
    c.tick()
    assert c.reload() == [
        ("bpf", True, "block reloaded"),
        ("nvml", True, "not running (no driver)"),
        ("procfs", True, "nothing to reload"),
    ]
    assert [s.starts for s in srcs] == [1, 1, 1]
    assert set(c.tick().m) == {"bpf.x", "procfs.x"}
    srcs[0].result = RuntimeError("map vanished\nsecond line")
    assert c.reload()[0] == ("bpf", False, "reload failed: RuntimeError: map vanished")


def test_live_host_reports_one_line_per_source(tmp_path: Path) -> None:
    (tmp_path / "proc/1").mkdir(parents=True)
    jobs = [OperatorJob("t", 1)]
    live = LiveHost(HostFS(tmp_path), bpf=False, operator_jobs=jobs, state_dir=str(tmp_path / "s"))
    live.collector.sources[0] = Swappable("bpf", (False, "sched kept running: compile/attach failed"))
    live.start()
    ok, text = live.reload_collectors()
    lines = text.splitlines()
    assert not ok and lines[0] == "bpf: sched kept running: compile/attach failed"
    assert [ln.split(":")[0] for ln in lines] == ["bpf", "nvml", "trainer", "procfs"]
    live.close()
