"""Liveness, readiness and status over HTTP (``/healthz``, ``/readyz``, ``/status``), and
the operator's ``POST /breaker/resume?route=NAME`` that closes a route's circuit breaker.

Bounded against slow or idle clients (``bounded.py``): a read timeout per request and a
cap on connection threads, the oldest half-sent request evicted when the cap is reached.

Resume changes state, so it needs ``Authorization: Bearer <token>`` (the token of
``service.resume_token_file``, compared in constant time); without a configured token it is
refused (403). A request carrying an ``Origin`` header comes from a web page, never from the
CLI, and is refused too. A resume waits for the loop (up to ``RESUME_WAIT_S``), so at most
``MAX_RESUMES`` wait at once and the rest are answered 429 at once: the probes never queue
behind them for a connection slot.
"""

from __future__ import annotations

import hmac
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from stream_validator.codec import encode_json
from stream_validator.errors import UnknownRouteError
from stream_validator.service.http.bounded import (
    MAX_CONNECTIONS,
    READ_TIMEOUT_S,
    BoundedHandler,
    BoundedHTTPServer,
)
from stream_validator.service.report.state import ServiceState

LIVENESS_PATH = "/healthz"
READINESS_PATH = "/readyz"
STATUS_PATH = "/status"
RESUME_PATH = "/breaker/resume"
#: How long POST /breaker/resume waits for the loop to close the breaker (it turns at least
#: every batch.timeout_s); past it the answer is 202: queued, not yet done.
RESUME_WAIT_S = 5.0
#: Resume requests waiting for the loop at once; well under MAX_CONNECTIONS, so the probes
#: always find a connection slot.
MAX_RESUMES = 2
NO_TOKEN = (
    "resume is disabled: no token is configured; set service.resume_token_file"
    " (SV_SERVICE__RESUME_TOKEN_FILE) to a file holding the token"
)
#: ``RouteBreakers.request_resume``: (state before, state after), None if not done in time.
ResumeCall = Callable[[str, float], "tuple[str, str] | None"]
#: An HTTP status and its JSON body.
Answer = tuple[int, dict[str, Any]]


class HealthServer:
    """A small HTTP server in a daemon thread; ``port`` is the bound port (0 picks one)."""

    def __init__(
        self,
        state: ServiceState,
        *,
        host: str,
        port: int,
        liveness_timeout_s: float,
        max_connections: int = MAX_CONNECTIONS,
        read_timeout_s: float = READ_TIMEOUT_S,
        resume: ResumeCall | None = None,
        resume_token: str | None = None,
        max_resumes: int = MAX_RESUMES,
    ) -> None:
        self.state = state
        self.resume = resume
        self._token = resume_token.encode("utf-8") if resume_token else None
        if not 0 < max_resumes < max_connections:  # else resumes could hold every slot
            raise ValueError(f"max_resumes must be 1 to {max_connections - 1}, got {max_resumes}")
        self._resumes = threading.BoundedSemaphore(max_resumes)
        self.liveness_timeout_s = liveness_timeout_s
        handler = _handler_for(self, read_timeout_s)
        self._server = BoundedHTTPServer((host, port), handler, max_connections=max_connections)
        self.host, self.port = host, int(self._server.server_address[1])
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="health", daemon=True
        )

    def start(self) -> HealthServer:
        """Start serving in the background."""
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and release the port."""
        self._server.shutdown()
        self._server.server_close()

    @property
    def peak_connections(self) -> int:
        """The most connections (each holding a thread) ever open at once."""
        return self._server.peak_connections

    @property
    def evicted(self) -> int:
        """Connections closed before they finished sending a request, to make room."""
        return self._server.evicted

    def live(self) -> bool:
        """True while the loop has run recently."""
        return time.monotonic() - self.state.last_loop < self.liveness_timeout_s

    def status(self) -> dict[str, Any]:
        """The JSON body of /status."""
        state = self.state
        return {
            "live": self.live(),
            "ready": state.ready,
            "uptime_s": round(time.monotonic() - state.started_at, 3),
            "batches": state.batches,
            "records": state.records,
            "clean": state.clean,
            "dlq": state.dlq,
            "failed_batches": state.failed_batches,
            "commits": state.commits,
            "hook_errors": state.hook_errors,
            "last_error": state.last_error,
            "recent_batches": state.recent_events[-5:],
            "breakers": dict(state.breakers),
            "contracts": {route: dict(entry) for route, entry in state.contracts.items()},
            "shadows": {route: dict(entry) for route, entry in state.shadows.items()},
        }

    def refusal(self, origin: str | None, authorization: str | None) -> Answer | None:
        """Why a state-changing request may not proceed (status, body), or None."""
        if origin is not None:
            return 403, {"error": "refused: a request with an Origin header (from a web page)"}
        if self._token is None:
            return 403, {"error": NO_TOKEN}
        scheme, _, given = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(
            given.strip().encode("utf-8", "replace"), self._token
        ):
            return 401, {"error": "missing or wrong token (Authorization: Bearer <token>)"}
        return None

    def resume_breaker(self, route: str | None) -> Answer:
        """The HTTP status and body of ``POST /breaker/resume?route=NAME`` (authorized)."""
        if route is None:
            return 400, {"error": "missing query parameter: route=NAME"}
        if self.resume is None:
            return 404, {"error": "this server does not control circuit breakers"}
        if not self._resumes.acquire(blocking=False):
            return 429, {"error": "too many resume requests in progress; retry in a few seconds"}
        try:
            done = self.resume(route, RESUME_WAIT_S)
        except UnknownRouteError as exc:
            return 404, {"error": str(exc)}
        finally:
            self._resumes.release()
        if done is None:
            return 202, {"route": route, "queued": True, "waited_s": RESUME_WAIT_S}
        return 200, {"route": route, "before": done[0], "state": done[1]}


def _handler_for(server: HealthServer, read_timeout_s: float) -> type[BaseHTTPRequestHandler]:
    class Handler(BoundedHandler):
        timeout = read_timeout_s

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == LIVENESS_PATH:
                ok = server.live()
                self._reply(200 if ok else 503, {"live": ok})
            elif path == READINESS_PATH:
                ok = server.state.ready
                self._reply(200 if ok else 503, {"ready": ok})
            elif path == STATUS_PATH:
                self._reply(200, server.status())
            else:
                self._reply(
                    404,
                    {"error": "not found", "paths": [LIVENESS_PATH, READINESS_PATH, STATUS_PATH]},
                )

        def do_POST(self) -> None:
            url = urlsplit(self.path)
            if url.path != RESUME_PATH:
                self._reply(404, {"error": "not found", "paths": [RESUME_PATH]})
                return
            refused = server.refusal(self.headers.get("Origin"), self.headers.get("Authorization"))
            if refused is not None:
                self._reply(*refused)
                return
            routes = parse_qs(url.query).get("route")
            self._reply(*server.resume_breaker(routes[0] if routes else None))

        def _reply(self, code: int, body: dict[str, Any]) -> None:
            data = encode_json(body)
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            if code == 401:
                self.send_header("WWW-Authenticate", "Bearer")
            elif code == 429:
                self.send_header("Retry-After", str(int(RESUME_WAIT_S)))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler
