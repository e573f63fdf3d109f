"""NVML source: per-GPU figures of the spec vocabulary and the processes on each GPU.

Each field is read in its own try: a driver or board that does not support a
query (NVMLError_NotSupported, typical of consumer boards and MIG) loses that
field only. A source without a driver or without a GPU reports `live: false`.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

from core.sample import SourceStatus

_MIB = 1024 * 1024


class NvmlSource:
    """GPU utilisation, clocks, power, throttling, temperature, PCIe and memory through NVML."""

    name = "nvml"

    def __init__(self, nvml_module: ModuleType | Any | None = None) -> None:
        # Injected in tests (tests/fakes/fake_pynvml.py); imported lazily otherwise so
        # that importing this module never needs the binding, let alone a driver.
        self._nvml: Any = nvml_module
        self._handles: dict[int, Any] = {}
        self._count = 0
        self._initialised = False

    def start(self) -> SourceStatus:
        if self._nvml is None:
            try:
                self._nvml = importlib.import_module("pynvml")
            except ImportError:
                reason = "nvidia-ml-py is not installed (pip install nvidia-ml-py)"
                return SourceStatus(live=False, reason=reason)
        nv = self._nvml
        try:
            nv.nvmlInit()
        except Exception as e:  # LibraryNotFound, DriverNotLoaded, a ctypes OSError: all mean no driver
            return SourceStatus(live=False, reason=f"NVML did not initialise: {_describe(e)}")
        self._initialised = True
        try:
            self._count = int(nv.nvmlDeviceGetCount())
        except nv.NVMLError as e:
            self.close()
            return SourceStatus(live=False, reason=f"NVML could not count GPUs: {_describe(e)}")
        if self._count == 0:
            self.close()
            return SourceStatus(live=False, reason="the NVIDIA driver is loaded but reports no GPU")
        self._refresh_handles()
        if not self._handles:
            self.close()
            return SourceStatus(live=False, reason=f"none of the {self._count} GPUs answers NVML")
        return SourceStatus(live=True)

    @property
    def gpu_count(self) -> int:
        return self._count

    def _refresh_handles(self) -> None:
        """Handles of GPUs that answer; a GPU that failed (lost, reset) is retried next time."""
        for i in range(self._count):
            if i in self._handles:
                continue
            try:
                self._handles[i] = self._nvml.nvmlDeviceGetHandleByIndex(i)
            except self._nvml.NVMLError:
                # Lost or resetting GPU: no figures from it this interval, retried next.
                continue

    def collect(self) -> dict[str, float]:
        if not self._initialised:
            return {}
        self._refresh_handles()
        out: dict[str, float] = {}
        fields = self._fields()
        for i, h in sorted(self._handles.items()):
            for suffix, read in fields:
                try:
                    out[f"gpu.{i}.{suffix}"] = read(h)
                except self._nvml.NVMLError:
                    # NotSupported is the common case; NoPermission, GpuIsLost, Unknown
                    # and FunctionNotFound cost the field too, never the whole sample.
                    continue
        return out

    def _fields(self) -> tuple[tuple[str, Callable[[Any], float]], ...]:
        nv = self._nvml
        return (
            ("util_pct", lambda h: float(nv.nvmlDeviceGetUtilizationRates(h).gpu)),
            ("sm_clock_mhz", lambda h: float(nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM))),
            ("sm_clock_max_mhz", lambda h: float(nv.nvmlDeviceGetMaxClockInfo(h, nv.NVML_CLOCK_SM))),
            ("power_w", lambda h: nv.nvmlDeviceGetPowerUsage(h) / 1000.0),
            ("power_limit_w", lambda h: nv.nvmlDeviceGetEnforcedPowerLimit(h) / 1000.0),
            ("clock_event_reasons", self._clock_event_reasons),
            ("temp_c", lambda h: float(nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU))),
            ("pcie_rx_kbps", lambda h: float(nv.nvmlDeviceGetPcieThroughput(h, nv.NVML_PCIE_UTIL_RX_BYTES))),
            ("pcie_tx_kbps", lambda h: float(nv.nvmlDeviceGetPcieThroughput(h, nv.NVML_PCIE_UTIL_TX_BYTES))),
            ("mem_used_mib", lambda h: nv.nvmlDeviceGetMemoryInfo(h).used / _MIB),
        )

    def _clock_event_reasons(self, h: Any) -> float:
        nv = self._nvml
        # The "event" name arrived with driver 535; older drivers (and older bindings)
        # only have the "throttle" name for the same bitmask.
        new = getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None)
        if new is not None:
            try:
                return float(new(h))
            except nv.NVMLError as e:
                if not _is(nv, e, "NVMLError_FunctionNotFound"):
                    raise
        return float(nv.nvmlDeviceGetCurrentClocksThrottleReasons(h))

    def gpu_processes(self) -> dict[int, list[int]]:
        """GPU index -> pids of the compute and graphics processes using it."""
        out: dict[int, list[int]] = {}
        if not self._initialised:
            return out
        nv = self._nvml
        for i, h in sorted(self._handles.items()):
            pids: set[int] = set()
            for query in (nv.nvmlDeviceGetComputeRunningProcesses, nv.nvmlDeviceGetGraphicsRunningProcesses):
                try:
                    procs = query(h)
                except nv.NVMLError:
                    # Unprivileged containers often may not list processes; the GPU
                    # then ties to no job, which the report shows as found by no one.
                    continue
                pids.update(int(p.pid) for p in procs)
            out[i] = sorted(pids)
        return out

    def gpu_names(self) -> dict[int, str]:
        """GPU index -> product name, for the report's host section."""
        out: dict[int, str] = {}
        for i, h in sorted(self._handles.items()):
            try:
                name = self._nvml.nvmlDeviceGetName(h)
            except self._nvml.NVMLError:
                continue
            out[i] = name.decode() if isinstance(name, bytes) else str(name)
        return out

    def close(self) -> None:
        if self._initialised:
            self._initialised = False
            self._handles.clear()
            # Shutting down a driver that went away is not worth an error.
            with contextlib.suppress(self._nvml.NVMLError):
                self._nvml.nvmlShutdown()


def _is(nv: Any, e: BaseException, cls_name: str) -> bool:
    cls = getattr(nv, cls_name, None)
    return isinstance(cls, type) and isinstance(e, cls)


def _describe(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return " ".join(text.split())
