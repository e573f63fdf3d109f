"""Shared test setup: `root` tests run only as root on a real kernel; others never touch the host."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.geteuid() == 0:
        return
    skip = pytest.mark.skip(reason="needs root and the real kernel")
    for item in items:
        if "root" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _isolated_state_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test writes the real state directory by accident."""
    monkeypatch.setenv("IDLETUNE_STATE_DIR", str(tmp_path_factory.mktemp("state")))
