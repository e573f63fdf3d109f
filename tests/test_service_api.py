"""The HTTP API with the test client: every endpoint, the 401s, 422s and 413s, and guarded changes."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from agent.diagnosis.engine import diagnose
from agent.service.auth import MAX_BODY, load_token
from core.incident import load_incident
from core.statedir import StateError
from guardrails.executor import Executor
from tests.fakes.fake_kernel import tree_bytes
from tests.service_helpers import INCIDENT, Service, action, make_service

MUTATING = [
    ("/v1/ask", {"question": "why?"}),
    ("/v1/actions/abc123/approve", None),
    ("/v1/actions/abc123/reject", None),
    ("/v1/rollback", {"all": True}),
]


@pytest.fixture
def svc(tmp_path: Path) -> Service:
    return make_service(tmp_path)


@pytest.fixture
def client(svc: Service) -> TestClient:
    return TestClient(svc.app)


def test_token_file_is_private_created_once_and_never_adopted(tmp_path: Path) -> None:
    d = tmp_path / "s"
    token = load_token(d)
    path = d / "token"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(d.stat().st_mode) & 0o022 == 0
    assert len(token) >= 32 and load_token(d) == token
    os.chmod(path, 0o644)  # readable by others: refused, not tightened and taken
    with pytest.raises(StateError, match="open to group or others"):
        load_token(d)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    os.chmod(path, 0o600)
    path.write_text("short\n")
    with pytest.raises(ValueError, match="no usable token"):
        load_token(d)


def test_report_and_diagnosis_are_the_pipeline_s(client: TestClient) -> None:
    inc = load_incident(INCIDENT)
    window = inc.window()
    report = inc.report(window)
    r = client.get("/v1/report")
    assert r.status_code == 200 and r.headers["content-type"] == "application/json"
    assert r.json() == json.loads(report.model_dump_json())
    d = client.get("/v1/diagnosis").json()
    expected = diagnose(window, report, inc.question)
    assert [c["category"] for c in d["causes"]] == [c.category.value for c in expected.causes]
    assert d["causes"][0]["category"] == "writeback_burst"


def test_kpi_features_status_audit_actions(client: TestClient) -> None:
    k = client.get("/v1/kpi").json()
    assert k["name"] == "gpu_util_pct" and len(k["points"]) == load_incident(INCIDENT).window().__len__()
    f = client.get("/v1/features").json()
    assert f["live"] is False and "recorded incident" in f["reason"] and f["cgroups"] == []
    assert client.get("/v1/status").json()["last_error"] == ""
    assert client.get("/v1/audit").json() == []
    a = client.get("/v1/actions").json()
    assert a == {"pending": [], "answered": [], "applied": [], "rolled_back": [], "closed": []}


def test_metrics_are_prometheus_text_with_labels(client: TestClient) -> None:
    r = client.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    text = r.text
    assert "# TYPE idletune_gpu_util_pct gauge" in text
    assert 'idletune_gpu_util_pct{gpu="0"}' in text
    assert 'idletune_io_lat_p99_us{dev="' in text
    assert "idletune_mem_dirty_mib " in text
    assert 'idletune_cause_confidence{category="writeback_burst"}' in text
    # The counters of guardrails.audit, at every scrape.
    for family in ("idletune_actions", "idletune_verdicts", "idletune_rollbacks", "idletune_gate_decisions"):
        assert f"# TYPE {family}_total counter" in text


def test_openapi_names_every_endpoint_and_the_bearer_scheme(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    for path in (
        "/v1/report",
        "/v1/diagnosis",
        "/v1/ask",
        "/v1/actions",
        "/v1/actions/{approval_id}/approve",
        "/v1/actions/{approval_id}/reject",
        "/v1/rollback",
        "/v1/audit",
        "/v1/features",
        "/v1/kpi",
        "/metrics",
    ):
        assert path in doc["paths"], path
    assert doc["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"
    assert doc["paths"]["/v1/rollback"]["post"]["security"] == [{"HTTPBearer": []}]


def test_ask_answers_from_the_diagnosis_without_a_model(client: TestClient, svc: Service) -> None:
    r = client.post("/v1/ask", json={"question": "Why are my GPUs idle?"}, headers=svc.auth)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["source"] == "diagnosis" and "writeback" in body["answer"]


@pytest.mark.parametrize(("path", "body"), MUTATING)
@pytest.mark.parametrize("header", [None, "Bearer nope", "Basic x", "Bearer"])
def test_no_or_wrong_token_is_401_and_changes_nothing(
    client: TestClient, svc: Service, path: str, body: object, header: str | None
) -> None:
    pending = svc.state.guard.approvals.request(action("vm.dirty_ratio", 10), 2, "writeback_burst")
    ex = Executor(svc.fh.host, journal=svc.state.guard.journal)
    assert ex.apply(action("vm.swappiness", 50)).status == "applied"
    before_host = tree_bytes(svc.fh.fs.root)
    before_state = tree_bytes(svc.state_dir)
    p = path.replace("abc123", pending.id)
    headers = {"Authorization": header} if header is not None else {}
    # A malformed body too: the token is checked before the body is read.
    for payload in (body, "{not json"):
        kw = {"json": payload} if not isinstance(payload, str) else {"content": payload}
        r = client.post(p, headers=headers, **kw)
        assert r.status_code == 401, (p, r.text)
        assert r.headers["www-authenticate"] == "Bearer"
    assert tree_bytes(svc.fh.fs.root) == before_host
    assert tree_bytes(svc.state_dir) == before_state


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/ask", {}),
        ("/v1/ask", {"question": ""}),
        ("/v1/ask", {"question": "x" * 2001}),
        ("/v1/ask", {"question": "why", "extra": 1}),
        ("/v1/rollback", {}),
        ("/v1/rollback", {"all": True, "change_id": 3}),
        ("/v1/rollback", {"change_id": 0}),
        ("/v1/rollback", {"change_id": "one"}),
        ("/v1/actions/abcdef/approve", {"by": "not a name!"}),
        ("/v1/actions/../approve", None),
        ("/v1/actions/ABCDEF/reject", None),
        ("/v1/actions/abcdef0/approve", None),
    ],
)
def test_invalid_bodies_and_ids_are_422_with_the_reason(
    client: TestClient, svc: Service, path: str, body: object
) -> None:
    r = client.post(path, json=body, headers=svc.auth)
    if path == "/v1/actions/../approve":
        # The client normalises the path away from the route: not found, never a file outside the store.
        assert r.status_code in (404, 405)
        return
    assert r.status_code == 422, (path, r.text)
    detail = r.json()["detail"]
    assert detail and all("msg" in d and "loc" in d for d in detail)


def test_malformed_json_is_422(client: TestClient, svc: Service) -> None:
    r = client.post("/v1/ask", content="{nope", headers={**svc.auth, "content-type": "application/json"})
    assert r.status_code == 422


def test_bodies_are_size_limited(client: TestClient, svc: Service) -> None:
    big = {"question": "x" * (MAX_BODY + 10)}
    r = client.post("/v1/ask", json=big, headers=svc.auth)
    assert r.status_code == 413

    def chunks() -> object:
        for _ in range(5):
            yield b"x" * (MAX_BODY // 2)

    r = client.post("/v1/ask", content=chunks(), headers={**svc.auth, "content-type": "application/json"})
    assert r.status_code == 413


def test_approve_and_reject_go_through_the_approval_store(client: TestClient, svc: Service) -> None:
    store = svc.state.guard.approvals
    a = store.request(action("vm.dirty_ratio", 10), 2, "writeback_burst")
    b = store.request(action("vm.dirty_background_ratio", 5), 2, "writeback_burst")
    pending = client.get("/v1/actions").json()["pending"]
    assert {p["id"] for p in pending} == {a.id, b.id}

    r = client.post(f"/v1/actions/{a.id}/approve", json={"by": "alice"}, headers=svc.auth)
    assert r.status_code == 200 and r.json()["status"] == "approved" and r.json()["decided_by"] == "alice"
    r = client.post(f"/v1/actions/{b.id}/reject", headers=svc.auth)
    assert r.status_code == 200 and r.json()["status"] == "rejected" and r.json()["decided_by"] == "api"
    assert store.answer_for(a.action) is not None and store.answer_for(a.action).status == "approved"  # type: ignore[union-attr]

    r = client.post(f"/v1/actions/{a.id}/reject", headers=svc.auth)
    assert r.status_code == 409 and "already approved" in r.json()["detail"]
    assert client.post("/v1/actions/000000/approve", headers=svc.auth).status_code == 404
    doc = client.get("/v1/actions").json()
    assert doc["pending"] == [] and {x["status"] for x in doc["answered"]} == {"approved", "rejected"}
    kinds = [e["kind"] for e in client.get("/v1/audit").json()]
    assert kinds.count("approval.requested") == 2
    assert "approval.approved" in kinds and "approval.rejected" in kinds
    # Nothing was written to the host: an approval is an answer for the gate, not a change.
    assert svc.fh.fs.writes == []


def test_rollback_restores_through_the_executor_and_journal(client: TestClient, svc: Service) -> None:
    guard = svc.state.guard
    ex = Executor(svc.fh.host, journal=guard.journal)
    res = ex.apply(action("vm.dirty_ratio", 10))
    assert res.status == "applied" and svc.fh.fs.read_value("/proc/sys/vm/dirty_ratio") == "10"
    doc = client.get("/v1/actions").json()
    assert [c["knob"] for c in doc["applied"]] == ["vm.dirty_ratio"]

    assert client.post("/v1/rollback", json={"change_id": 999}, headers=svc.auth).status_code == 404
    r = client.post("/v1/rollback", json={"change_id": res.change_id}, headers=svc.auth)
    assert r.status_code == 200, r.text
    assert [x["status"] for x in r.json()["results"]] == ["reverted"]
    assert svc.fh.fs.read_value("/proc/sys/vm/dirty_ratio") == "20"
    doc = client.get("/v1/actions").json()
    assert doc["applied"] == [] and [c["id"] for c in doc["rolled_back"]] == [res.change_id]
    timeline = client.get("/v1/audit").json()
    assert timeline[-1]["kind"] == "rollback" and "reverted" in timeline[-1]["summary"]
    # Nothing left: rolling back everything is an empty success.
    r = client.post("/v1/rollback", json={"all": True}, headers=svc.auth)
    assert r.status_code == 200 and r.json()["results"] == []


def test_audit_since_and_limit(client: TestClient, svc: Service) -> None:
    store = svc.state.guard.approvals
    for v in (10, 11, 12):
        store.request(action("vm.dirty_ratio", v), 2, None)
    events = client.get("/v1/audit").json()
    assert len(events) == 3
    assert len(client.get("/v1/audit", params={"limit": 2}).json()) == 2
    assert client.get("/v1/audit", params={"since": events[-1]["t"] + 1}).json() == []
    assert client.get("/v1/audit", params={"limit": 0}).status_code == 422


def test_dashboard_page_and_assets_load_nothing_external(client: TestClient) -> None:
    r = client.get("/")
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    assert "default-src 'none'" in r.headers["content-security-policy"]
    assert "http://" not in r.text and "https://" not in r.text
    for name in ("app.js", "style.css"):
        asset = client.get(f"/static/{name}")
        assert asset.status_code == 200
        assert "https://" not in asset.text
    assert client.get("/static/../app.py").status_code == 404
    assert client.get("/static/index.html").status_code == 404


def test_host_and_job_figures_of_one_family_get_separate_names() -> None:
    from agent.service.metrics import gauges_text
    from core.diagnosis import Category, Cause, Diagnosis
    from core.report import HostInfo, build_report
    from core.sample import Sample
    from core.window import Window

    w = Window(samples=[Sample(t=0, m={"sched.runq_lat_p99_us": 50.0, "sched.train.runq_lat_p99_us": 80.0})])
    report = build_report(w, HostInfo(cpus=2))
    d = Diagnosis(causes=[Cause(category=Category.NONE, confidence=1.0, summary="ok")])
    text = gauges_text(report, d, 0).decode()
    assert "idletune_sched_runq_lat_p99_us 50.0" in text
    assert 'idletune_sched_job_runq_lat_p99_us{job="train"} 80.0' in text


def test_snapshot_fast_path_and_the_route_serve_the_same_bytes(client: TestClient) -> None:
    for path in ("/v1/report", "/v1/diagnosis", "/v1/kpi", "/v1/features"):
        fast = client.get(path)
        routed = client.get(path, params={"via": "router"})  # a query string skips the fast path
        assert fast.status_code == routed.status_code == 200
        assert fast.content == routed.content and fast.headers["content-type"] == "application/json"
    assert client.head("/v1/report").status_code in (200, 405)


def test_state_files_and_the_trainer_socket_are_not_world_writable(client: TestClient, svc: Service) -> None:
    from agent.sources.trainer import TrainerSource

    trainer = TrainerSource(str(svc.state_dir))
    assert trainer.start().live
    try:
        a = svc.state.guard.approvals.request(action("vm.dirty_ratio", 10), 2, None)
        assert client.post(f"/v1/actions/{a.id}/approve", headers=svc.auth).status_code == 200
        res = Executor(svc.fh.host, journal=svc.state.guard.journal).apply(action("vm.dirty_ratio", 10))
        r = client.post("/v1/rollback", json={"change_id": res.change_id}, headers=svc.auth)
        assert r.status_code == 200
        paths = [svc.state_dir, *svc.state_dir.rglob("*")]
        names = {p.name for p in paths}
        assert {"token", "journal.jsonl", "audit.jsonl", "trainer.sock", "approvals"} <= names
        for p in paths:
            mode = stat.S_IMODE(p.lstat().st_mode)
            assert not mode & stat.S_IWOTH, (p, oct(mode))
        for secret in ("token", "journal.jsonl"):
            assert stat.S_IMODE((svc.state_dir / secret).stat().st_mode) & 0o077 == 0
    finally:
        trainer.close()


def test_a_person_reading_the_diagnosis_asking_or_opening_the_dashboard_is_asking(
    client: TestClient, svc: Service
) -> None:
    asked: list[str] = []

    class Live:
        def ask(self, who: str) -> None:
            asked.append(who)

    svc.state.observer.live = Live()  # type: ignore[attr-defined]
    client.get("/v1/report")
    client.get("/metrics")
    assert asked == []  # scrapers and schedulers poll these: nobody is asking
    client.get("/v1/diagnosis")
    client.get("/v1/diagnosis?x=1")  # past the fast path, through the route
    client.get("/")
    client.post("/v1/ask", json={"question": "why?"}, headers=svc.auth)
    assert asked == [
        "a reader of /v1/diagnosis",
        "a reader of /v1/diagnosis",
        "the dashboard",
        "a question to /v1/ask",
    ]
