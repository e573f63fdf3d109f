"""Strict request bodies: non-finite numbers and coerced types are a 422 (never a 500, never an action),
and the OpenAPI document lists what a mutating request can get before its handler runs."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from fastapi.exceptions import RequestValidationError
from fastapi.testclient import TestClient
from starlette.requests import Request

from agent.service.bodies import finite_json, invalid_request
from guardrails.executor import Executor
from tests.fakes.fake_kernel import tree_bytes
from tests.service_helpers import Service, action, make_service

NON_FINITE = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1.5e309"]
# Every mutating endpoint, with bodies that put the number where a field, the body or a list item is.
PLACES = [
    ("/v1/ask", '{"question": %s}'),
    ("/v1/ask", '{"question": "why?", "extra": %s}'),
    ("/v1/ask", "%s"),
    ("/v1/actions/{id}/approve", '{"by": %s}'),
    ("/v1/actions/{id}/approve", "%s"),
    ("/v1/actions/{id}/reject", '{"by": "alice", "x": [1, %s]}'),
    ("/v1/rollback", '{"change_id": %s}'),
    ("/v1/rollback", '{"all": %s}'),
    ("/v1/rollback", "[%s]"),
]
COERCED = [
    {"all": "yes"},
    {"all": 1},
    {"all": "true"},
    {"all": 1.0},
    {"change_id": True},
    {"change_id": "1"},
    {"change_id": 1.0},
]


@pytest.fixture
def svc(tmp_path: Path) -> Service:
    s = make_service(tmp_path)
    # Work for approve, reject and rollback, so a body that got through would change something.
    s.state.guard.approvals.request(action("vm.dirty_ratio", 10), 2, "writeback_burst")
    assert (
        Executor(s.fh.host, journal=s.state.guard.journal).apply(action("vm.swappiness", 50)).change_id == 1
    )
    return s


@pytest.fixture
def client(svc: Service) -> TestClient:
    # A server error comes back as a 500 response here, not as an exception in the test.
    return TestClient(svc.app, raise_server_exceptions=False)


def _strict_json(text: str) -> object:
    def refuse(token: str) -> object:
        raise AssertionError(f"{token} in a response")

    return json.loads(text, parse_constant=refuse)


def _one_line_msgs(detail: object) -> list[str]:
    assert isinstance(detail, list) and detail
    msgs = [d["msg"] for d in detail]
    assert all(isinstance(m, str) and m and "\n" not in m for m in msgs)
    return msgs


@pytest.mark.parametrize("number", NON_FINITE)
@pytest.mark.parametrize(("path", "template"), PLACES)
def test_non_finite_numbers_are_422_and_change_nothing(
    client: TestClient, svc: Service, path: str, template: str, number: str
) -> None:
    pending = svc.state.guard.approvals.pending()[0]
    before_host, before_state = tree_bytes(svc.fh.fs.root), tree_bytes(svc.state_dir)
    r = client.post(
        path.replace("{id}", pending.id),
        content=template % number,
        headers={**svc.auth, "content-type": "application/json"},
    )
    assert r.status_code == 422, (path, template % number, r.status_code, r.text)
    msgs = _one_line_msgs(_strict_json(r.text)["detail"])  # type: ignore[index]
    assert any(number in m and "finite" in m for m in msgs), msgs
    assert tree_bytes(svc.fh.fs.root) == before_host and tree_bytes(svc.state_dir) == before_state


def test_a_non_finite_number_is_located_outside_strings() -> None:
    body = '{"question": "NaN or 1e400?", "n": 1e400}'
    with pytest.raises(json.JSONDecodeError) as e:
        finite_json(body.encode())
    assert e.value.pos == body.rindex("1e400") and "1e400 is not a finite number" in e.value.msg
    with pytest.raises(json.JSONDecodeError) as e:
        finite_json(b"NaN")
    assert e.value.pos == 0
    assert finite_json(b'{"x": 1e300, "y": -2.5, "z": "Infinity"}') == {
        "x": 1e300,
        "y": -2.5,
        "z": "Infinity",
    }


def test_any_validation_error_serialises_even_when_it_repeats_a_non_finite_number() -> None:
    # Defence in depth: a number the parser let through (a future float field, a query) still
    # gets a 422 that is strict JSON, not the framework's 500.
    errors = [
        {"type": "float_type", "loc": ("query", "x"), "msg": "bad", "input": [float("nan"), -float("inf")]}
    ]
    reply = asyncio.run(invalid_request(Request({"type": "http"}), RequestValidationError(errors)))
    assert reply.status_code == 422
    assert _strict_json(bytes(reply.body).decode()) == {
        "detail": [{"type": "float_type", "loc": ["query", "x"], "msg": "bad", "input": ["nan", "-inf"]}]
    }


@pytest.mark.parametrize("body", COERCED)
def test_rollback_takes_only_a_json_boolean_or_integer(
    client: TestClient, svc: Service, body: object
) -> None:
    before_host, before_state = tree_bytes(svc.fh.fs.root), tree_bytes(svc.state_dir)
    r = client.post("/v1/rollback", json=body, headers=svc.auth)
    assert r.status_code == 422, (body, r.text)
    assert _one_line_msgs(r.json()["detail"])
    # Nothing rolled back: the change is still open and the host still holds its value.
    assert [c["id"] for c in client.get("/v1/actions").json()["applied"]] == [1]
    assert svc.fh.fs.read_value("/proc/sys/vm/swappiness") == "50"
    assert tree_bytes(svc.fh.fs.root) == before_host and tree_bytes(svc.state_dir) == before_state


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/ask", {"question": 5}),
        ("/v1/ask", {"question": ["why?"]}),
        ("/v1/actions/{id}/approve", {"by": 7}),
        ("/v1/actions/{id}/reject", {"by": True}),
    ],
)
def test_other_bodies_are_strict_too(client: TestClient, svc: Service, path: str, body: object) -> None:
    pending = svc.state.guard.approvals.pending()[0]
    r = client.post(path.replace("{id}", pending.id), json=body, headers=svc.auth)
    assert r.status_code == 422, (path, body, r.text)
    assert svc.state.guard.approvals.pending() == [pending]


def test_strict_bodies_still_take_their_own_types(client: TestClient, svc: Service) -> None:
    r = client.post("/v1/rollback", json={"all": True}, headers=svc.auth)
    assert r.status_code == 200 and [x["status"] for x in r.json()["results"]] == ["reverted"]
    pending = svc.state.guard.approvals.pending()[0]
    r = client.post(f"/v1/actions/{pending.id}/approve", json={"by": "alice"}, headers=svc.auth)
    assert r.status_code == 200 and r.json()["decided_by"] == "alice"


def test_malformed_json_says_what_is_wrong_in_one_line(client: TestClient, svc: Service) -> None:
    r = client.post("/v1/ask", content="{nope", headers={**svc.auth, "content-type": "application/json"})
    assert r.status_code == 422
    (msg,) = _one_line_msgs(r.json()["detail"])
    assert msg.startswith("JSON decode error") and len(msg) > len("JSON decode error")


def test_a_body_that_is_not_utf8_is_400(client: TestClient, svc: Service) -> None:
    r = client.post(
        "/v1/ask", content=b"\xff\xfe\xff", headers={**svc.auth, "content-type": "application/json"}
    )
    assert r.status_code == 400


MUTATING_OPS = [
    "/v1/ask",
    "/v1/actions/{approval_id}/approve",
    "/v1/actions/{approval_id}/reject",
    "/v1/rollback",
]


@pytest.mark.parametrize("path", MUTATING_OPS)
def test_openapi_lists_400_401_413_422_for_mutating_endpoints(client: TestClient, path: str) -> None:
    doc = client.get("/openapi.json").json()
    responses = doc["paths"][path]["post"]["responses"]
    assert {"400", "401", "413", "422"} <= set(responses), sorted(responses)
    assert "16384 bytes" in responses["413"]["description"]
    assert "finite" in responses["422"]["description"]
    # The framework's schema for a validation error stays attached.
    assert "HTTPValidationError" in json.dumps(responses["422"])


def test_reads_do_not_list_the_body_errors(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    assert "413" not in doc["paths"]["/v1/report"]["get"]["responses"]
