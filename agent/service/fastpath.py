"""Snapshot reads straight from the ASGI layer, before routing.

GET /v1/report and its siblings are the hot paths (dashboards, schedulers and
scrapers poll them); their bodies are bytes made once per refresh. Serving them here
skips routing, dependency solving and response objects, which is most of the cost
of a request on a small host. The routes stay declared in the app for the OpenAPI
document and answer whatever this layer passes on (HEAD, a query string).
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

from agent.service.state import ServiceState

ROUTES = {
    "/v1/report": "report_json",
    "/v1/diagnosis": "diagnosis_json",
    "/v1/kpi": "kpi_json",
    "/v1/features": "features_json",
}


class SnapshotFastPath:
    def __init__(self, app: ASGIApp, state: ServiceState) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        attr = ROUTES.get(scope.get("path", "")) if scope["type"] == "http" else None
        if attr is None or scope["method"] != "GET" or scope.get("query_string"):
            await self.app(scope, receive, send)
            return
        if attr == "diagnosis_json":
            self.state.asking("a reader of /v1/diagnosis")  # the dashboard polls it while open
        body: bytes = getattr(self.state.snapshot(), attr)
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})
