"""Reports, diagnoses and model replies shared by the LLM tests."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

from agent.diagnosis.engine import diagnose
from core.diagnosis import Category, Cause, Diagnosis, Evidence
from core.knob import KnobValue
from core.report import HealthReport, HostInfo, JobInfo, build_report
from core.sample import Sample, SourceStatus
from core.window import Window
from evals.synth import incident, scenario

KNOBS: dict[str, KnobValue] = {
    "vm.dirty_ratio": 20,
    "vm.dirty_background_ratio": 10,
    "vm.dirty_bytes": 0,
    "vm.dirty_background_bytes": 0,
    "vm.dirty_writeback_centisecs": 500,
    "vm.dirty_expire_centisecs": 3000,
    "vm.swappiness": 60,
    "block.read_ahead_kb@nvme0n1": 4096,
    "block.nr_requests@nvme0n1": 256,
    "cpufreq.governor": "performance",
}


def report(
    job: str = "sdxl",
    *,
    knobs: dict[str, KnobValue] | None = None,
    sources: dict[str, SourceStatus] | None = None,
) -> HealthReport:
    series = {
        "gpu.0.util_pct": [90.0, 40.0, 35.0, 38.0],
        "gpu.1.util_pct": [91.0, 42.0, 36.0, 39.0],
        "mem.dirty_mib": [200.0, 5200.0, 5400.0, 5100.0],
        "io.nvme0n1.lat_p99_us": [300.0, 9000.0, 9500.0, 8800.0],
        f"trainer.{job}.data_wait_frac": [0.02, 0.4, 0.45, 0.42],
    }
    samples = [Sample(t=float(t), m={k: v[t] for k, v in series.items()}) for t in range(4)]
    return build_report(
        Window(samples=samples),
        HostInfo(cpus=64, gpus=2, numa_nodes=2, block_devices=["nvme0n1"], gpu_model="H100"),
        knobs={**KNOBS, f"loader.workers@{job}": 8, **(knobs or {})},
        jobs=[JobInfo(name=job, pid=4003, gpus=[0, 1], loader_workers=8)],
        sources=sources or {"procfs": SourceStatus(live=True), "nvml": SourceStatus(live=True)},
    )


def diagnosis(
    category: str = "writeback_burst", confidence: float = 0.82, target: str | None = None
) -> Diagnosis:
    ev = [
        Evidence(
            metric="mem.dirty_mib", observed=5233.3, baseline=200.0, threshold=1000.0, rule="dirty pile grew"
        ),
        Evidence(metric="io.nvme0n1.lat_p99_us", observed=9000.0, baseline=300.0, rule="reads stalled"),
    ]
    return Diagnosis(
        causes=[
            Cause(
                category=Category(category),
                confidence=confidence,
                summary="checkpoint writes flood the page cache",
                evidence=ev,
                target=target,
            ),
            Cause(category=Category.NONE, confidence=0.1, summary="healthy"),
        ]
    )


def healthy() -> Diagnosis:
    return Diagnosis(causes=[Cause(category=Category.NONE, confidence=0.9, summary="GPUs busy")])


def reply(actions: list[dict[str, Any]] | None = None, noop: str | None = None) -> str:
    doc: dict[str, Any] = {"actions": actions or []}
    if noop is not None:
        doc["noop_reason"] = noop
    return json.dumps(doc)


def eight_gpu() -> tuple[HealthReport, Diagnosis]:
    """A synthetic 8-GPU host with a fault, through the real diagnosis."""
    inc = incident(scenario(Category.GPU_POWER_THROTTLE, 7, gpus=8, cpus=224))
    window = inc.window()
    r = inc.report(window)
    return r, diagnose(window, r, inc.question)


class FakeServer:
    """A local OpenAI-compatible server on a free port: records each request, answers `{"actions": []}`."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.delay = 0.0
        self.status = 200
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append((self.path, body))
                time.sleep(outer.delay)
                doc = {
                    "choices": [{"message": {"content": '{"actions": []}'}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 12, "completion_tokens": 5},
                }
                data = json.dumps(doc).encode()
                self.send_response(outer.status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
