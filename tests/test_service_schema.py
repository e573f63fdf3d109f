"""schemathesis against the OpenAPI document: generated requests never get a 5xx.

Requests carry the token, so generated bodies reach validation and the handlers; a
pending approval and an open change give approve, reject and rollback real work.
Operations are driven through hypothesis directly (schemathesis' pytest plugin does
not support this pytest).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.core.result import Err

from guardrails.executor import Executor
from tests.service_helpers import Service, action, make_service

EXAMPLES = 30


@pytest.fixture
def service(tmp_path: Path) -> Service:
    svc = make_service(tmp_path)
    svc.state.guard.approvals.request(action("vm.dirty_ratio", 10), 2, "writeback_burst")
    Executor(svc.fh.host, journal=svc.state.guard.journal).apply(action("vm.swappiness", 50))
    return svc


def test_no_server_errors_on_any_operation(service: Service) -> None:
    schema = schemathesis.openapi.from_asgi("/openapi.json", service.app)
    seen: list[str] = []
    calls: list[int] = []
    for result in schema.get_all_operations():
        assert not isinstance(result, Err), result.err()
        op = result.ok()
        seen.append(op.label)

        @given(case=op.as_strategy())
        @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
        def check(case: schemathesis.Case[Any]) -> None:
            response = case.call(headers=service.auth)
            calls.append(response.status_code)
            assert response.status_code < 500, (case.method, case.formatted_path, response.text)
            if case.method == "POST":
                assert case.call().status_code == 401  # the same request without the token

        check()
    assert "POST /v1/rollback" in seen and "GET /v1/features" in seen and len(seen) >= 12
    # Generated inputs reached the handlers, not only the validator.
    assert len(calls) > 5 * len(seen) and 200 in calls and 422 in calls
