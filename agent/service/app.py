"""The HTTP API and the dashboard: `create_app(state, token)`.

Reads serve the snapshot's pre-serialised bytes; writes (approve, reject, rollback,
ask) pass the bearer-token guard first and reach the host only through the
guardrails (approval store, executor, journal). Request bodies are strict: JSON numbers
must be finite (NaN, Infinity and 1e400 are refused when the body is parsed) and fields
take their own JSON type only (`"yes"` or `1` is not a boolean); anything else is a 422.
"""

from __future__ import annotations

from pathlib import Path as FilePath
from typing import Annotated, Any

from fastapi import FastAPI, HTTPException, Path, Query
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, Response
from pydantic import BaseModel, ConfigDict, Field, model_validator

from agent.daemon import Daemon
from agent.service import metrics
from agent.service.auth import MAX_BODY, GuardMiddleware
from agent.service.bodies import FiniteJSONRoute, invalid_request
from agent.service.fastpath import SnapshotFastPath
from agent.service.features import FeaturesDoc
from agent.service.guard import ActionsDoc, TimelineEvent
from agent.service.kpi import KpiSeries
from agent.service.state import ServiceState
from core.diagnosis import Diagnosis
from core.report import HealthReport
from guardrails.approvals import Approval
from guardrails.executor import ExecResult
from guardrails.gate import Mode

DASHBOARD = FilePath(__file__).parent / "dashboard"
STATIC = {"app.js": "text/javascript", "style.css": "text/css"}
# Nothing external loads: scripts, styles and requests come from this origin only.
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
)
PAGE_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "cache-control": "no-store",
}
JSON = "application/json"

ApprovalId = Annotated[str, Path(pattern=r"^[0-9a-f]{6}$", description="the id the gate printed")]
INVALID = (
    "the body or a parameter is invalid: malformed JSON, a non-finite number (NaN, Infinity, 1e400), "
    "a value of the wrong JSON type, out of bounds, or an unknown field"
)


class AskBody(BaseModel):
    # Strict: a field takes its own JSON type only, never a coerced one.
    model_config = ConfigDict(extra="forbid", strict=True)

    question: str = Field(min_length=1, max_length=2000)


class AskReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    question: str
    answer: str
    source: str = Field(description="llm, or diagnosis when the model was unavailable or unfaithful")
    note: str = ""


class DecideBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    by: str = Field(default="api", min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.@-]+$")


class RollbackBody(BaseModel):
    # Strict: {"all": "yes"} or {"all": 1} is not a request to roll everything back, and
    # {"change_id": true} is not change 1.
    model_config = ConfigDict(extra="forbid", strict=True)

    change_id: int | None = Field(default=None, ge=1, le=2**31)
    all: bool = False

    @model_validator(mode="after")
    def _one(self) -> RollbackBody:
        if (self.change_id is None) == (not self.all):
            raise ValueError("give either change_id or all: true")
        return self


class RollbackReply(BaseModel):
    model_config = ConfigDict(extra="forbid")

    results: list[ExecResult]


class ModeBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    mode: Mode
    by: str = Field(default="api", min_length=1, max_length=64, pattern=r"^[A-Za-z0-9_.@-]+$")


class ReloadBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    collectors: bool = Field(default=False, description="also reload the eBPF collectors in place")


class Outcome(BaseModel):
    model_config = ConfigDict(extra="forbid")

    ok: bool
    message: str


class ModeDoc(BaseModel):
    model_config = ConfigDict(extra="forbid")

    mode: Mode
    config: str | None = Field(description="the config file the daemon reads; null: defaults only")
    last_reload: Outcome
    collectors: Outcome | None = None


class ServiceStatus(BaseModel):
    model_config = ConfigDict(extra="forbid")

    snapshot_t: float
    interval_s: float
    last_error: str


def _json(data: bytes) -> Response:
    return Response(content=data, media_type=JSON)


def create_app(state: ServiceState, token: str) -> FastAPI:
    app = FastAPI(
        title="idletune",
        version="1",
        description="Why are my GPUs idle? Reports, diagnosis, guarded actions and per-cgroup features.",
        docs_url=None,  # Swagger UI loads from a CDN; the service serves nothing external
        redoc_url=None,
    )
    # Set before any route is added: every route parses its body with finite_json.
    app.router.route_class = FiniteJSONRoute
    app.add_exception_handler(RequestValidationError, invalid_request)
    app.add_middleware(GuardMiddleware, token=token)
    # Added last, so it runs first: snapshot reads never reach the router.
    app.add_middleware(SnapshotFastPath, state=state)
    # GuardMiddleware does the checking; this names the scheme in the OpenAPI document.
    secured: dict[str, object] = {"security": [{"HTTPBearer": []}]}
    # What every mutating request can get before its handler runs (422 the framework lists itself,
    # and _document_security describes): the body unreadable as text, no token, a body over the cap.
    unauthorized: dict[int | str, dict[str, Any]] = {
        400: {"description": "the body could not be read: not UTF-8, or a number past the parser's limits"},
        401: {"description": "missing or wrong bearer token"},
        413: {"description": f"request body over {MAX_BODY} bytes"},
    }

    @app.get("/v1/report", response_model=HealthReport, tags=["read"])
    def report() -> Response:
        return _json(state.snapshot().report_json)

    @app.get("/v1/diagnosis", response_model=Diagnosis, tags=["read"])
    def diagnosis() -> Response:
        state.asking("a reader of /v1/diagnosis")
        return _json(state.snapshot().diagnosis_json)

    @app.get("/v1/kpi", response_model=KpiSeries, tags=["read"])
    def kpi() -> Response:
        return _json(state.snapshot().kpi_json)

    @app.get("/v1/features", response_model=FeaturesDoc, tags=["read"])
    def features() -> Response:
        return _json(state.snapshot().features_json)

    @app.get("/v1/actions", response_model=ActionsDoc, tags=["actions"])
    def actions() -> ActionsDoc:
        return state.guard.actions()

    @app.get("/v1/audit", response_model=list[TimelineEvent], tags=["read"])
    def audit(
        since: Annotated[float | None, Query(ge=0, le=1e11)] = None,
        limit: Annotated[int, Query(ge=1, le=1000)] = 200,
    ) -> list[TimelineEvent]:
        return state.guard.timeline(since, limit)

    @app.get("/v1/status", response_model=ServiceStatus, tags=["read"])
    def status() -> ServiceStatus:
        snap = state.snapshot()
        return ServiceStatus(snapshot_t=snap.t, interval_s=state.interval_s, last_error=state.last_error)

    @app.post(
        "/v1/ask",
        response_model=AskReply,
        tags=["ask"],
        responses={**unauthorized, 503: {"description": "no answerer is configured"}},
        openapi_extra=secured,
    )
    def ask(body: AskBody) -> AskReply:
        if state.asker is None:
            raise HTTPException(503, "no answerer is configured")
        state.asking("a question to /v1/ask")
        snap = state.snapshot()
        text, source, note = state.asker(body.question, snap.report, snap.diagnosis)
        return AskReply(question=body.question, answer=text, source=source, note=note)

    def _decide(approval_id: str, approve: bool, body: DecideBody | None) -> Approval:
        a, problem = state.guard.decide(approval_id, approve, (body or DecideBody()).by)
        if a is None:
            raise HTTPException(404, problem)
        if problem:
            raise HTTPException(409, problem)
        return a

    decided: dict[int | str, dict[str, Any]] = {
        404: {"description": "no such request"},
        409: {"description": "already answered"},
    }

    @app.post(
        "/v1/actions/{approval_id}/approve",
        response_model=Approval,
        tags=["actions"],
        responses={**unauthorized, **decided},
        openapi_extra=secured,
    )
    def approve(approval_id: ApprovalId, body: DecideBody | None = None) -> Approval:
        return _decide(approval_id, True, body)

    @app.post(
        "/v1/actions/{approval_id}/reject",
        response_model=Approval,
        tags=["actions"],
        responses={**unauthorized, **decided},
        openapi_extra=secured,
    )
    def reject(approval_id: ApprovalId, body: DecideBody | None = None) -> Approval:
        return _decide(approval_id, False, body)

    @app.post(
        "/v1/rollback",
        response_model=RollbackReply,
        tags=["actions"],
        responses={**unauthorized, 404: {"description": "no such open change"}},
        openapi_extra=secured,
    )
    def rollback(body: RollbackBody) -> RollbackReply:
        results = state.guard.rollback(None if body.all else body.change_id)
        if results is None:
            raise HTTPException(404, f"no open change {body.change_id} in the journal")
        return RollbackReply(results=results)

    def _control() -> Daemon:
        if state.control is None:
            raise HTTPException(409, "no control loop runs here (a recorded incident is served)")
        return state.control

    def _mode_doc(d: Daemon, collectors: Outcome | None = None) -> ModeDoc:
        last = Outcome(ok=d.last_reload.ok, message=d.last_reload.message)
        path = str(d.path) if d.path is not None else None
        return ModeDoc(mode=d.mode, config=path, last_reload=last, collectors=collectors)

    no_loop: dict[int | str, dict[str, Any]] = {409: {"description": "no control loop runs here"}}

    @app.get("/v1/mode", response_model=ModeDoc, tags=["control"], responses=no_loop)
    def mode() -> ModeDoc:
        return _mode_doc(_control())

    @app.post(
        "/v1/mode",
        response_model=ModeDoc,
        tags=["control"],
        responses={**unauthorized, **no_loop},
        openapi_extra=secured,
    )
    def set_mode(body: ModeBody) -> ModeDoc:
        d = _control()
        out = d.submit(lambda: d.set_mode(body.mode, body.by))
        if not out.ok:
            raise HTTPException(503, out.message)
        return _mode_doc(d)

    @app.post(
        "/v1/reload",
        response_model=ModeDoc,
        tags=["control"],
        responses={**unauthorized, **no_loop},
        openapi_extra=secured,
    )
    def reload(body: ReloadBody) -> ModeDoc:
        d = _control()
        d.submit(d.reload)
        collectors = None
        if body.collectors:
            out = d.reload_collectors()
            collectors = Outcome(ok=out.ok, message=out.message)
        return _mode_doc(d, collectors)

    @app.get("/metrics", response_class=Response, tags=["read"])
    def prometheus() -> Response:
        snap = state.snapshot()
        return Response(content=snap.gauges + metrics.counters_text(), media_type=metrics.CONTENT_TYPE)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def page() -> HTMLResponse:
        state.asking("the dashboard")
        return HTMLResponse((DASHBOARD / "index.html").read_text(), headers=PAGE_HEADERS)

    @app.get("/static/{name}", include_in_schema=False)
    def static(name: str) -> FileResponse:
        if name not in STATIC:
            raise HTTPException(404, "no such file")
        return FileResponse(DASHBOARD / name, media_type=STATIC[name], headers=PAGE_HEADERS)

    _document_security(app)
    return app


def _document_security(app: FastAPI) -> None:
    """Add the bearer scheme to the OpenAPI components (the routes name it), and say what a 422
    of a secured (mutating) route means."""
    original = app.openapi

    def openapi() -> dict[str, object]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        doc = original()
        comps = doc.setdefault("components", {})
        assert isinstance(comps, dict)
        comps.setdefault("securitySchemes", {})["HTTPBearer"] = {
            "type": "http",
            "scheme": "bearer",
            "description": "the token in $IDLETUNE_STATE_DIR/token",
        }
        paths = doc.get("paths", {})
        assert isinstance(paths, dict)
        for item in paths.values():
            for op in item.values():
                if isinstance(op, dict) and op.get("security") and "422" in op.get("responses", {}):
                    op["responses"]["422"]["description"] = INVALID
        app.openapi_schema = doc
        return doc

    app.openapi = openapi  # type: ignore[method-assign]
