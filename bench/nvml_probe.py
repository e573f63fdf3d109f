"""Record what NvmlSource reads on a real GPU host, as a fixture for tests/fakes/fake_pynvml.py.

Run on a GPU machine:  python bench/nvml_probe.py > tests/fixtures/nvml/<host>.json
Every call NvmlSource makes is recorded raw (before unit conversion); a call that
fails is recorded as {"nvml_error": "<NVMLError_ suffix>"} so the fake replays it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import pynvml as nv


def _error_name(e: Exception) -> str:
    return type(e).__name__.removeprefix("NVMLError_") if isinstance(e, nv.NVMLError) else "Unknown"


def _record(call: Callable[[], Any], shape: Callable[[Any], Any] = lambda v: v) -> Any:
    try:
        return shape(call())
    except nv.NVMLError as e:
        return {"nvml_error": _error_name(e)}


def _procs(value: Any) -> list[dict[str, Any]]:
    return [{"pid": int(p.pid), "usedGpuMemory": p.usedGpuMemory} for p in value]


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _gpu(h: Any) -> dict[str, Any]:
    return {
        "name": _record(lambda: nv.nvmlDeviceGetName(h), _text),
        "utilization": _record(
            lambda: nv.nvmlDeviceGetUtilizationRates(h), lambda u: {"gpu": u.gpu, "memory": u.memory}
        ),
        "clock_sm_mhz": _record(lambda: nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM)),
        "max_clock_sm_mhz": _record(lambda: nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM)),
        "power_usage_mw": _record(lambda: nv.nvmlDeviceGetPowerUsage(h)),
        "enforced_power_limit_mw": _record(lambda: nv.nvmlDeviceGetEnforcedPowerLimit(h)),
        "clocks_event_reasons": _record(lambda: nv.nvmlDeviceGetCurrentClocksEventReasons(h)),
        "clocks_throttle_reasons": _record(lambda: nv.nvmlDeviceGetCurrentClocksThrottleReasons(h)),
        "temperature_gpu_c": _record(lambda: nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU)),
        "pcie_rx_kbps": _record(lambda: nv.nvmlDeviceGetPcieThroughput(h, nv.NVML_PCIE_UTIL_RX_BYTES)),
        "pcie_tx_kbps": _record(lambda: nv.nvmlDeviceGetPcieThroughput(h, nv.NVML_PCIE_UTIL_TX_BYTES)),
        "memory": _record(
            lambda: nv.nvmlDeviceGetMemoryInfo(h),
            lambda m: {"total": m.total, "free": m.free, "used": m.used},
        ),
        "compute_processes": _record(lambda: nv.nvmlDeviceGetComputeRunningProcesses(h), _procs),
        "graphics_processes": _record(lambda: nv.nvmlDeviceGetGraphicsRunningProcesses(h), _procs),
    }


def probe() -> dict[str, Any]:
    try:
        nv.nvmlInit()
    except nv.NVMLError as e:
        return {"recorded_from": "nvml_probe", "init_error": _error_name(e), "gpus": []}
    try:
        driver = _record(nv.nvmlSystemGetDriverVersion, _text)
        gpus: list[dict[str, Any]] = []
        for i in range(nv.nvmlDeviceGetCount()):
            try:
                gpus.append(_gpu(nv.nvmlDeviceGetHandleByIndex(i)))
            except nv.NVMLError as e:
                gpus.append({"handle_error": _error_name(e)})
        return {"recorded_from": "nvml_probe", "driver_version": driver, "gpus": gpus}
    finally:
        nv.nvmlShutdown()


def main() -> None:
    json.dump(probe(), sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
