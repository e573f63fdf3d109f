"""NvmlGpuPower over a stand-in of the binding's power calls (milliwatts), and why it is absent."""

from __future__ import annotations

from typing import Any

import pynvml
import pytest

from primitives.channels import GpuPower, NvmlGpuPower, open_nvml_power


class PowerNvml:
    """The pynvml calls NvmlGpuPower makes; limits in milliwatts as NVML has them."""

    NVMLError = pynvml.NVMLError

    def __init__(
        self, limits_mw: list[int], lo: int = 200_000, hi: int = 700_000, init_error: bool = False
    ) -> None:
        self.limits = list(limits_mw)
        self.lo, self.hi = lo, hi
        self.init_error = init_error

    def nvmlInit(self) -> None:
        if self.init_error:
            raise pynvml.NVMLError_LibraryNotFound()

    def nvmlDeviceGetCount(self) -> int:
        return len(self.limits)

    def nvmlDeviceGetHandleByIndex(self, i: int) -> int:
        return i

    def nvmlDeviceGetPowerManagementLimit(self, h: int) -> int:
        return self.limits[h]

    def nvmlDeviceGetPowerManagementLimitConstraints(self, h: int) -> list[int]:
        return [self.lo, self.hi]

    def nvmlDeviceSetPowerManagementLimit(self, h: int, mw: Any) -> None:
        if not isinstance(mw, int) or not self.lo <= mw <= self.hi:
            raise pynvml.NVMLError_InvalidArgument()
        self.limits[h] = mw


def test_watts_constraints_and_exact_milliwatts() -> None:
    nv = PowerNvml([412_345, 700_000])
    power, reason = open_nvml_power(nv)
    assert power is not None and reason == ""
    assert isinstance(power, GpuPower)
    assert power.count() == 2
    assert power.limit_w(0) == 412.345
    assert power.constraints_w(1) == (200.0, 700.0)
    power.set_limit_w(0, 500)
    assert nv.limits[0] == 500_000
    power.set_limit_w(0, 412.345)
    assert nv.limits[0] == 412_345


def test_nvml_refusal_is_an_oserror_with_the_drivers_words() -> None:
    power = NvmlGpuPower(PowerNvml([300_000]))
    with pytest.raises(OSError, match="NVML refused"):
        power.set_limit_w(0, 900)


def test_no_driver_or_no_gpu_says_why() -> None:
    power, reason = open_nvml_power(PowerNvml([], init_error=True))
    assert power is None and "did not initialise" in reason
    power, reason = open_nvml_power(PowerNvml([]))
    assert power is None and "no GPU" in reason
