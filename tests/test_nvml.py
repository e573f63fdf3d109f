"""NvmlSource against recorded NVML values: every metric, per-field errors, lost GPUs, no driver."""

from __future__ import annotations

from typing import Any

import pytest

from agent.sources.base import Source
from agent.sources.nvml import NvmlSource
from core.vocabulary import is_known
from tests.fakes.fake_pynvml import FakeNvml, load_fixture


@pytest.fixture
def recorded() -> dict[str, Any]:
    return load_fixture("h100x2.json")


def started(recorded: dict[str, Any]) -> tuple[NvmlSource, FakeNvml]:
    fake = FakeNvml(recorded)
    src = NvmlSource(nvml_module=fake)
    st = src.start()
    assert st.live, st.reason
    return src, fake


def test_satisfies_source_protocol() -> None:
    assert isinstance(NvmlSource(nvml_module=FakeNvml(load_fixture("h100x2.json"))), Source)
    assert NvmlSource.name == "nvml"


def test_every_metric_with_units(recorded: dict[str, Any]) -> None:
    src, _ = started(recorded)
    m = src.collect()
    assert m == {
        "gpu.0.util_pct": 97.0,
        "gpu.0.sm_clock_mhz": 1980.0,
        "gpu.0.sm_clock_max_mhz": 1980.0,
        "gpu.0.power_w": pytest.approx(612.483),
        "gpu.0.power_limit_w": 700.0,
        "gpu.0.clock_event_reasons": 0.0,
        "gpu.0.temp_c": 63.0,
        "gpu.0.pcie_rx_kbps": 2400532.0,
        "gpu.0.pcie_tx_kbps": 177120.0,
        "gpu.0.mem_used_mib": pytest.approx(63861424128 / 2**20),
        "gpu.1.util_pct": 100.0,
        "gpu.1.sm_clock_mhz": 1755.0,
        "gpu.1.sm_clock_max_mhz": 1980.0,
        "gpu.1.power_w": pytest.approx(699.214),
        "gpu.1.power_limit_w": 700.0,
        "gpu.1.clock_event_reasons": 4.0,
        "gpu.1.temp_c": 71.0,
        "gpu.1.pcie_rx_kbps": 2376346.0,
        "gpu.1.pcie_tx_kbps": 234911.0,
        "gpu.1.mem_used_mib": pytest.approx(64935165952 / 2**20),
    }
    assert all(is_known(name) for name in m)


@pytest.mark.parametrize(
    ("key", "metric"),
    [
        ("utilization", "util_pct"),
        ("clock_sm_mhz", "sm_clock_mhz"),
        ("max_clock_sm_mhz", "sm_clock_max_mhz"),
        ("power_usage_mw", "power_w"),
        ("enforced_power_limit_mw", "power_limit_w"),
        ("clocks_event_reasons", "clock_event_reasons"),
        ("temperature_gpu_c", "temp_c"),
        ("pcie_rx_kbps", "pcie_rx_kbps"),
        ("pcie_tx_kbps", "pcie_tx_kbps"),
        ("memory", "mem_used_mib"),
    ],
)
@pytest.mark.parametrize("error", ["NotSupported", "NoPermission", "Unknown", "GpuIsLost"])
def test_a_failing_field_is_left_out_alone(
    recorded: dict[str, Any], key: str, metric: str, error: str
) -> None:
    recorded["gpus"][1][key] = {"nvml_error": error}
    src, _ = started(recorded)
    m = src.collect()
    assert f"gpu.1.{metric}" not in m
    assert len([n for n in m if n.startswith("gpu.1.")]) == 9
    assert len([n for n in m if n.startswith("gpu.0.")]) == 10


def test_clock_event_reasons_falls_back_on_an_old_driver(recorded: dict[str, Any]) -> None:
    # Drivers before 535 lack the symbol: the binding raises FunctionNotFound.
    recorded["gpus"][1]["clocks_event_reasons"] = {"nvml_error": "FunctionNotFound"}
    recorded["gpus"][1]["clocks_throttle_reasons"] = 0x44
    src, _ = started(recorded)
    assert src.collect()["gpu.1.clock_event_reasons"] == 0x44


def test_clock_event_reasons_falls_back_on_an_old_binding(recorded: dict[str, Any]) -> None:
    recorded["missing_functions"] = ["nvmlDeviceGetCurrentClocksEventReasons"]
    src, _ = started(recorded)
    assert src.collect()["gpu.1.clock_event_reasons"] == 4.0


def test_a_gpu_whose_handle_fails_is_skipped_and_retried(recorded: dict[str, Any]) -> None:
    recorded["gpus"][0]["handle_error"] = "GpuIsLost"
    src, fake = started(recorded)
    m = src.collect()
    assert not [n for n in m if n.startswith("gpu.0.")]
    assert m["gpu.1.util_pct"] == 100.0
    assert src.gpu_processes() == {1: [4243]}
    del fake.recorded["gpus"][0]["handle_error"]
    assert src.collect()["gpu.0.util_pct"] == 97.0


def test_gpu_processes_merges_compute_and_graphics(recorded: dict[str, Any]) -> None:
    recorded["gpus"][0]["graphics_processes"] = [{"pid": 900, "usedGpuMemory": None}, {"pid": 4242}]
    recorded["gpus"][1]["compute_processes"] = {"nvml_error": "NoPermission"}
    src, _ = started(recorded)
    assert src.gpu_processes() == {0: [900, 4242], 1: []}


def test_gpu_names(recorded: dict[str, Any]) -> None:
    src, _ = started(recorded)
    assert src.gpu_names() == {0: "NVIDIA H100 80GB HBM3", 1: "NVIDIA H100 80GB HBM3"}
    assert src.gpu_count == 2


@pytest.mark.parametrize(
    ("init_error", "words"),
    [
        ("LibraryNotFound", "NVML Shared Library Not Found"),
        ("DriverNotLoaded", "Driver Not Loaded"),
        ("NoPermission", "Insufficient Permissions"),
    ],
)
def test_no_driver_is_not_live_with_a_reason(recorded: dict[str, Any], init_error: str, words: str) -> None:
    recorded["init_error"] = init_error
    src = NvmlSource(nvml_module=FakeNvml(recorded))
    st = src.start()
    assert not st.live
    assert words in st.reason and "\n" not in st.reason
    assert src.collect() == {}
    assert src.gpu_processes() == {}
    src.close()


def test_driver_without_gpus_is_not_live(recorded: dict[str, Any]) -> None:
    recorded["gpus"] = []
    fake = FakeNvml(recorded)
    st = NvmlSource(nvml_module=fake).start()
    assert not st.live and "no GPU" in st.reason
    assert fake.calls[-1] == "nvmlShutdown"


def test_all_gpus_lost_is_not_live(recorded: dict[str, Any]) -> None:
    for g in recorded["gpus"]:
        g["handle_error"] = "GpuIsLost"
    st = NvmlSource(nvml_module=FakeNvml(recorded)).start()
    assert not st.live and "none of the 2 GPUs" in st.reason


def test_close_is_idempotent_and_stops_collecting(recorded: dict[str, Any]) -> None:
    src, fake = started(recorded)
    src.close()
    src.close()
    assert fake.calls.count("nvmlShutdown") == 1
    assert src.collect() == {}


def test_without_the_binding_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    def refuse(name: str) -> object:
        raise ImportError(name)

    monkeypatch.setattr(importlib, "import_module", refuse)
    st = NvmlSource().start()
    assert not st.live and "nvidia-ml-py" in st.reason
