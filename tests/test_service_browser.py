"""The dashboard in headless Chromium: it shows the report, causes, KPI plot and audit, and approve works.

Drives Debian's chromium through Playwright (never a downloaded browser); skipped
with the reason where chromium or Playwright is absent.
"""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from guardrails.executor import Executor
from tests.service_helpers import Service, action, make_service

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",  # root in a container has no user namespace for the sandbox
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="chromium not installed (make bootstrap as root)"),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Service, str]]:
    uvicorn = pytest.importorskip("uvicorn")
    svc = make_service(tmp_path, now=True)
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(svc.app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "server did not start"
        time.sleep(0.05)
    try:
        yield svc, f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


Served = tuple[Service, str]


def test_dashboard_shows_state_and_approve_reaches_the_store(served: Served, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    svc, base = served
    store = svc.state.guard.approvals
    ask = store.request(action("vm.dirty_ratio", 10), 2, "writeback_burst")
    other = store.request(action("vm.dirty_background_ratio", 5), 2, "writeback_burst")
    # A change in force and one put back: the plot marks both.
    ex = Executor(svc.fh.host, journal=svc.state.guard.journal)
    first = ex.apply(action("vm.swappiness", 50))
    assert first.change_id is not None
    assert ex.apply(action("vm.dirty_expire_centisecs", 2000)).status == "applied"
    assert ex.revert(first.change_id).status == "reverted"
    svc.state.refresh()
    writes = list(svc.fh.fs.writes)
    with sync_api.sync_playwright() as p:
        # A fresh profile per run: launch_persistent_context owns --user-data-dir.
        browser = p.chromium.launch_persistent_context(
            tmp_path / "profile", executable_path=CHROMIUM, args=FLAGS, headless=True
        )
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.goto(f"{base}/#token={svc.token}")
            # The token left the address bar once read.
            page.wait_for_url(lambda url: "#" not in url)
            page.wait_for_selector(f"tr[data-approval='{ask.id}'] button.approve")
            assert "writeback_burst" in page.locator("#causes li").first.inner_text()
            assert page.locator("#report tbody tr").count() == len(svc.state.snapshot().report.metrics)
            assert page.locator("#kpi path.line").count() == 1
            assert page.locator("#kpi line.applied").count() == 2
            assert page.locator("#kpi line.rolled_back").count() == 1
            assert "approval.requested" in page.locator("#audit").inner_text()

            page.click(f"tr[data-approval='{ask.id}'] button.approve")
            page.wait_for_selector(f"#approvals-note:text-is('{ask.id}: approved')")
            page.wait_for_selector(f"tr[data-approval='{ask.id}']", state="detached")
            assert page.locator(f"tr[data-approval='{other.id}']").count() == 1
            page.wait_for_selector("#audit:has-text('approval.approved')")
            assert errors == []
        finally:
            browser.close()
    done = store.get(ask.id)
    assert done is not None and done.status == "approved" and done.decided_by == "dashboard"
    still = store.get(other.id)
    assert still is not None and still.status == "pending"
    assert svc.fh.fs.writes == writes  # approving wrote nothing to the host


def test_approve_without_the_token_is_refused_in_the_page(served: Served, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    svc, base = served
    ask = svc.state.guard.approvals.request(action("vm.dirty_ratio", 10), 2, "writeback_burst")
    with sync_api.sync_playwright() as p:
        # A fresh profile per run: launch_persistent_context owns --user-data-dir.
        browser = p.chromium.launch_persistent_context(
            tmp_path / "profile2", executable_path=CHROMIUM, args=FLAGS, headless=True
        )
        try:
            page = browser.new_page()
            page.goto(base)
            page.fill("#token", "wrong-token-of-enough-length-000000000")
            page.click(f"tr[data-approval='{ask.id}'] button.approve")
            page.wait_for_selector("#approvals-note:has-text('401')")
        finally:
            browser.close()
    again = svc.state.guard.approvals.get(ask.id)
    assert again is not None and again.status == "pending"
