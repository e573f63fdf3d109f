"""The recorder writes incidents that the incident reader accepts, with only vocabulary metrics."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
import yaml

from agent.collector import Collector
from agent.recorder import UNLABELLED, incident_id, record, write_incident
from core.incident import load_incident
from core.knob import KnobValue
from core.report import HealthReport, HostInfo, JobInfo, build_report
from core.sample import Sample, SourceStatus
from core.window import Window


class FakeSource:
    name = "fake"

    def __init__(self) -> None:
        self.n = 0

    def start(self) -> SourceStatus:
        return SourceStatus(live=True)

    def collect(self) -> dict[str, float]:
        self.n += 1
        return {
            "trainer.resnet.samples_per_s": 100.0 + self.n,
            "trainer.resnet.data_wait_frac": 0.5,
            "io.vdb.read_iops": 200.0,
            "not.a.vocabulary.name": 1.0,
        }

    def close(self) -> None:
        return None


class FakeLive:
    """The parts of LiveHost the recorder uses, around a real Collector and a fake source."""

    def __init__(self) -> None:
        self.collector = Collector([FakeSource()], 0.02)
        self.knob_reads = 0
        self.closed = False

    def start(self) -> dict[str, SourceStatus]:
        return self.collector.start()

    def collect(self, duration_s: float, on_sample: Callable[[Sample], None] | None = None) -> Window:
        return self.collector.run(duration_s, on_sample=on_sample)

    def knobs(self, devices: Sequence[str], gpus: Sequence[int]) -> dict[str, KnobValue]:
        self.knob_reads += 1
        # The value changes after the start: the incident must keep the start's.
        return {"block.read_ahead_kb@vdb": 128 if self.knob_reads == 1 else 4096}

    def report(self, window: Window) -> HealthReport:
        host = HostInfo(cpus=2, gpus=0, kernel="6.18", block_devices=["vdb"])
        knobs = dict(self.knobs(["vdb"], []), **{"loader.workers@resnet": 2})
        jobs = [JobInfo(name="resnet", pid=4242, loader_workers=2, found_by="hook")]
        return build_report(window, host, knobs=knobs, jobs=jobs, sources=self.collector.statuses)

    def close(self) -> None:
        self.closed = True


def test_recorded_incident_loads_and_validates(tmp_path: Path) -> None:
    live = FakeLive()
    rec = record(live, duration_s=0.2, interval_s=0.02)
    assert live.closed
    folder = write_incident(rec, tmp_path / "rec-one", title="fake host")
    inc = load_incident(folder)
    assert inc.id == "rec-one"
    assert inc.tags == [UNLABELLED]
    assert inc.truth.root_causes == ["none"] and inc.truth.noop_correct
    assert inc.truth.acceptable_actions == []
    assert inc.knobs["block.read_ahead_kb@vdb"] == 128  # the value at the start
    assert inc.knobs["loader.workers@resnet"] == 2  # known only once the job was
    assert [(j.name, j.pid, j.loader_workers) for j in inc.jobs] == [("resnet", 4242, 2)]
    assert inc.host.block_devices == ["vdb"] and inc.interval_s == 0.02
    assert len(inc.samples) >= 5
    assert inc.samples[0].t == 0.0
    names = set().union(*(s.m for s in inc.samples))
    assert "not.a.vocabulary.name" not in names
    assert "trainer.resnet.samples_per_s" in names
    text = (folder / "incident.yaml").read_text()
    assert "# UNLABELLED" in text.split("truth:")[0]


def test_a_labelled_recording_carries_its_truth_tags_and_provenance(tmp_path: Path) -> None:
    rec = record(FakeLive(), duration_s=0.1, interval_s=0.02)
    truth = {
        "root_causes": ["readahead_mismatch"],
        "onset_t": 0.0,
        "evidence": ["io.vdb.avg_req_kb"],
        "acceptable_actions": [[{"primitive": "block.read_ahead_kb", "target": "vdb", "min": 1024}]],
        "forbidden_actions": [{"primitive": "trainer.batch_size"}],
        "noop_correct": False,
    }
    folder = write_incident(
        rec, tmp_path / "real-x-1", truth=truth, tags=["real", "iops-100"], comment="fix: +650 %\nsecond line"
    )
    inc = load_incident(folder)
    assert inc.tags == ["real", "iops-100"] and inc.truth.root_causes == ["readahead_mismatch"]
    assert not inc.truth.noop_correct and inc.truth.acceptable_actions[0][0].target == "vdb"
    text = (folder / "incident.yaml").read_text()
    assert text.startswith("# fix: +650 %\n# second line\n") and "UNLABELLED" not in text


def test_series_is_json_lines_in_time_order(tmp_path: Path) -> None:
    rec = record(FakeLive(), duration_s=0.1, interval_s=0.02)
    folder = write_incident(rec, tmp_path / "rec-two")
    rows = [json.loads(line) for line in (folder / "series.jsonl").read_text().splitlines()]
    ts = [r["t"] for r in rows]
    assert ts == sorted(ts) and ts[0] == 0


def test_the_share_a_figure_was_measured_over_stays_out_of_the_series(tmp_path: Path) -> None:
    rec = record(FakeLive(), duration_s=0.05, interval_s=0.02)
    rec.samples = [s.model_copy(update={"cover": {"io.vdb.read_iops": 0.1}}) for s in rec.samples]
    folder = write_incident(rec, tmp_path / "rec-cover")
    rows = [json.loads(line) for line in (folder / "series.jsonl").read_text().splitlines()]
    assert rows and all(set(r) == {"t", "m"} for r in rows)


def test_header_is_plain_yaml_with_sources(tmp_path: Path) -> None:
    rec = record(FakeLive(), duration_s=0.05, interval_s=0.02)
    folder = write_incident(rec, tmp_path / "rec-three")
    data = yaml.safe_load((folder / "incident.yaml").read_text())
    assert data["recorded_sources"] == {"fake": {"live": True}}
    assert data["schema_version"] == 1


@pytest.mark.parametrize(
    ("raw", "ident"),
    [("Real Readahead", "real-readahead"), ("rec_2024.01", "rec-2024-01"), ("--", "incident")],
)
def test_incident_id_is_sanitised(raw: str, ident: str) -> None:
    assert incident_id(raw) == ident


def test_folder_name_must_be_an_id(tmp_path: Path) -> None:
    rec = record(FakeLive(), duration_s=0.05, interval_s=0.02)
    with pytest.raises(ValueError, match="not a valid incident id"):
        write_incident(rec, tmp_path / "Bad_Name")


def test_only_devices_leaves_other_disks_out(tmp_path: Path) -> None:
    from agent.recorder import Recording, only_devices

    rec = Recording(
        host=HostInfo(cpus=2, gpus=0, block_devices=["loop0", "loop1"]),
        interval_s=1.0,
        samples=[
            Sample(t=0.0, m={"io.loop0.read_iops": 5.0, "io.loop1.read_iops": 9.0, "cpu.util_pct": 50.0}),
        ],
        knobs={"block.read_ahead_kb@loop0": 128, "block.read_ahead_kb@loop1": 4096, "vm.swappiness": 60},
    )
    out = only_devices(rec, ["loop0"])
    assert out.host.block_devices == ["loop0"]
    assert out.samples[0].m == {"io.loop0.read_iops": 5.0, "cpu.util_pct": 50.0}
    assert out.knobs == {"block.read_ahead_kb@loop0": 128, "vm.swappiness": 60}
    inc = load_incident(write_incident(out, tmp_path / "one-disk"))
    assert inc.host.block_devices == ["loop0"]
