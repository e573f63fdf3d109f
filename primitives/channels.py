"""The two non-file ways primitives act: the trainer hook's control channel, and NVML power limits."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

TrainerValue = int | float | str


class Ack(BaseModel):
    """The trainer's answer to a request: done (with the value now in force) or refused, and why.

    `pending`: accepted, but the trainer puts it in force later (next epoch); `value`
    is then still the old one.
    """

    model_config = ConfigDict(extra="forbid")

    ok: bool
    value: TrainerValue | None = None
    reason: str = ""
    pending: bool = False


@runtime_checkable
class TrainerChannel(Protocol):
    """Control channel to the trainer hooks attached on this host (built by the trainer hook).

    Keys are catalogue ids (`loader.workers`, `loader.prefetch_factor`,
    `loader.cpu_affinity`, `trainer.batch_size`). A hook applies a change at a point
    where the training loop allows it and answers with the value actually in force.
    """

    def jobs(self) -> list[str]:
        """Names of the jobs whose hook is attached now."""
        ...

    def capabilities(self, job: str) -> frozenset[str]:
        """The keys this job's hook can read and set, plus `reopen_files` when it can reopen."""
        ...

    def get(self, job: str, key: str) -> TrainerValue:
        """The value in force; raises LookupError for a job or key the hook does not know."""
        ...

    def set(self, job: str, key: str, value: TrainerValue) -> Ack: ...

    def reopen_files(self, job: str) -> Ack:
        """Restart the loader's workers so that they open their files again."""
        ...

    def awaiting(self, job: str, key: str) -> bool:
        """Whether a request for `key` (or `reopen_files`) that the job accepted for its next safe
        point is still waiting there: some rank has not yet confirmed it in force (nor refused it)."""
        ...


REOPEN_FILES = "reopen_files"


@runtime_checkable
class GpuPower(Protocol):
    """Per-GPU power limit in watts, within the board's constraints."""

    def count(self) -> int: ...

    def limit_w(self, index: int) -> float: ...

    def constraints_w(self, index: int) -> tuple[float, float]:
        """(min, max) limit the board accepts."""
        ...

    def set_limit_w(self, index: int, watts: float) -> None:
        """Raises OSError with the driver's words when NVML refuses."""
        ...


class NvmlGpuPower:
    """GpuPower over pynvml. Build it with `open_nvml_power`, which says why when there is no GPU."""

    def __init__(self, nvml: ModuleType | Any) -> None:
        self._nv: Any = nvml
        self._count = int(nvml.nvmlDeviceGetCount())

    def _handle(self, index: int) -> Any:
        return self._nv.nvmlDeviceGetHandleByIndex(index)

    def count(self) -> int:
        return self._count

    def limit_w(self, index: int) -> float:
        # The management limit is what we set; the enforced one can be lower (another
        # limiter) and would never read back equal to what we wrote.
        return int(self._nv.nvmlDeviceGetPowerManagementLimit(self._handle(index))) / 1000.0

    def constraints_w(self, index: int) -> tuple[float, float]:
        lo, hi = self._nv.nvmlDeviceGetPowerManagementLimitConstraints(self._handle(index))
        return int(lo) / 1000.0, int(hi) / 1000.0

    def set_limit_w(self, index: int, watts: float) -> None:
        try:
            self._nv.nvmlDeviceSetPowerManagementLimit(self._handle(index), round(watts * 1000))
        except self._nv.NVMLError as e:
            raise OSError(f"NVML refused the power limit: {e}") from e


def open_nvml_power(nvml: ModuleType | Any | None = None) -> tuple[NvmlGpuPower | None, str]:
    """An NVML power interface, or None and the reason (no binding, no driver, no GPU)."""
    if nvml is None:
        try:
            nvml = importlib.import_module("pynvml")
        except ImportError:
            return None, "nvidia-ml-py is not installed"
    try:
        nvml.nvmlInit()
    except Exception as e:  # LibraryNotFound, DriverNotLoaded, OSError from ctypes: all mean no driver
        return None, f"NVML did not initialise: {type(e).__name__}"
    try:
        power = NvmlGpuPower(nvml)
    except nvml.NVMLError as e:
        return None, f"NVML could not count GPUs: {e}"
    if power.count() == 0:
        return None, "the NVIDIA driver reports no GPU"
    return power, ""
