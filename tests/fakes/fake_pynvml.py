"""A recorded-values stand-in for the `pynvml` module.

It answers the calls NvmlSource makes from a dict in the format that
bench/nvml_probe.py records on a real GPU host (see tests/fixtures/nvml/). The
error classes and constants are the real binding's (pure Python, no driver
needed), so `NVMLError(3)` is `NVMLError_NotSupported` exactly as on a host.

A recorded value of `{"nvml_error": "NotSupported"}` (any suffix of an
`NVMLError_*` class) makes that call raise; so does `init_error` at the top
level and `handle_error` on a GPU. `missing_functions` removes attributes, to
play an older binding.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pynvml as _real

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "nvml"

_COPIED = [n for n in dir(_real) if n.startswith(("NVML_", "NVMLError"))]


def load_fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return data


class _Handle:
    def __init__(self, index: int) -> None:
        self.index = index


class FakeNvml:
    """Module-like object: same function, constant and exception names as pynvml."""

    def __init__(self, recorded: dict[str, Any]) -> None:
        self._missing: frozenset[str] = frozenset()
        self.recorded = copy.deepcopy(recorded)
        self.calls: list[str] = []
        self.initialised = False
        for n in _COPIED:
            setattr(self, n, getattr(_real, n))
        self._missing = frozenset(self.recorded.get("missing_functions", []))

    def __getattribute__(self, name: str) -> Any:
        # An older binding lacks newer functions altogether: AttributeError, as there.
        if name != "_missing" and name in object.__getattribute__(self, "_missing"):
            raise AttributeError(name)
        return object.__getattribute__(self, name)

    # -- helpers ---------------------------------------------------------------

    def _raise_if_error(self, value: Any) -> Any:
        if isinstance(value, dict) and "nvml_error" in value:
            raise getattr(_real, "NVMLError_" + value["nvml_error"])()
        return value

    def _gpu(self, handle: _Handle) -> dict[str, Any]:
        if not self.initialised:
            raise _real.NVMLError_Uninitialized()
        gpu: dict[str, Any] = self.recorded["gpus"][handle.index]
        return gpu

    def _field(self, handle: _Handle, key: str) -> Any:
        gpu = self._gpu(handle)
        if key not in gpu:
            raise _real.NVMLError_NotSupported()
        return self._raise_if_error(gpu[key])

    # -- pynvml API --------------------------------------------------------------

    def nvmlInit(self) -> None:
        self.calls.append("nvmlInit")
        if "init_error" in self.recorded:
            raise getattr(_real, "NVMLError_" + self.recorded["init_error"])()
        self.initialised = True

    def nvmlShutdown(self) -> None:
        self.calls.append("nvmlShutdown")
        self.initialised = False

    def nvmlDeviceGetCount(self) -> int:
        if not self.initialised:
            raise _real.NVMLError_Uninitialized()
        return int(self._raise_if_error(self.recorded.get("device_count", len(self.recorded["gpus"]))))

    def nvmlDeviceGetHandleByIndex(self, index: int) -> _Handle:
        if not self.initialised:
            raise _real.NVMLError_Uninitialized()
        gpus = self.recorded["gpus"]
        if index >= len(gpus):
            raise _real.NVMLError_InvalidArgument()
        if "handle_error" in gpus[index]:
            raise getattr(_real, "NVMLError_" + gpus[index]["handle_error"])()
        return _Handle(index)

    def nvmlDeviceGetName(self, handle: _Handle) -> str:
        return str(self._field(handle, "name"))

    def nvmlDeviceGetUtilizationRates(self, handle: _Handle) -> SimpleNamespace:
        return SimpleNamespace(**self._field(handle, "utilization"))

    def nvmlDeviceGetClockInfo(self, handle: _Handle, clock_type: int) -> int:
        assert clock_type == _real.NVML_CLOCK_SM, "only the SM clock is recorded"
        return int(self._field(handle, "clock_sm_mhz"))

    def nvmlDeviceGetMaxClockInfo(self, handle: _Handle, clock_type: int) -> int:
        assert clock_type == _real.NVML_CLOCK_SM, "only the SM clock is recorded"
        return int(self._field(handle, "max_clock_sm_mhz"))

    def nvmlDeviceGetPowerUsage(self, handle: _Handle) -> int:
        return int(self._field(handle, "power_usage_mw"))

    def nvmlDeviceGetEnforcedPowerLimit(self, handle: _Handle) -> int:
        return int(self._field(handle, "enforced_power_limit_mw"))

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: _Handle) -> int:
        return int(self._field(handle, "clocks_event_reasons"))

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, handle: _Handle) -> int:
        gpu = self._gpu(handle)
        key = "clocks_throttle_reasons" if "clocks_throttle_reasons" in gpu else "clocks_event_reasons"
        return int(self._field(handle, key))

    def nvmlDeviceGetTemperature(self, handle: _Handle, sensor: int) -> int:
        assert sensor == _real.NVML_TEMPERATURE_GPU, "only the GPU sensor is recorded"
        return int(self._field(handle, "temperature_gpu_c"))

    def nvmlDeviceGetPcieThroughput(self, handle: _Handle, counter: int) -> int:
        key = {_real.NVML_PCIE_UTIL_RX_BYTES: "pcie_rx_kbps", _real.NVML_PCIE_UTIL_TX_BYTES: "pcie_tx_kbps"}
        return int(self._field(handle, key[counter]))

    def nvmlDeviceGetMemoryInfo(self, handle: _Handle) -> SimpleNamespace:
        return SimpleNamespace(**self._field(handle, "memory"))

    def nvmlDeviceGetComputeRunningProcesses(self, handle: _Handle) -> list[SimpleNamespace]:
        return [SimpleNamespace(**p) for p in self._field(handle, "compute_processes")]

    def nvmlDeviceGetGraphicsRunningProcesses(self, handle: _Handle) -> list[SimpleNamespace]:
        return [SimpleNamespace(**p) for p in self._field(handle, "graphics_processes")]
