"""Liveness, readiness and status over HTTP (``/healthz``, ``/readyz``, ``/status``).

Bounded against slow or idle clients: each read of a request times out after
``read_timeout_s``, and at most ``max_connections`` connections hold a thread. When all
are taken, the oldest connection that has not finished sending its request is closed to
make room, so half-sent requests cannot lock probes out and threads never grow past the
cap.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from stream_validator.codec import encode_json
from stream_validator.runtime import ServiceState

LIVENESS_PATH = "/healthz"
READINESS_PATH = "/readyz"
STATUS_PATH = "/status"
MAX_CONNECTIONS = 16
READ_TIMEOUT_S = 5.0


class _BoundedServer(ThreadingHTTPServer):
    """ThreadingHTTPServer with a cap on connection threads and eviction of stalled ones."""

    daemon_threads = True
    request_queue_size = 64  # a burst of probes and scrapes must not be dropped by the kernel

    def __init__(
        self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], cap: int
    ) -> None:
        super().__init__(address, handler)
        self._slots = threading.BoundedSemaphore(cap)
        self._lock = threading.Lock()
        self._reading: dict[Any, None] = {}  # connections still sending, oldest first
        self._open = 0
        self.peak_connections = 0
        self.evicted = 0

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self._evict_oldest()
            if not self._slots.acquire(timeout=1.0):
                self.shutdown_request(request)  # every slot is busy answering: drop this one
                return
        with self._lock:
            self._reading[request] = None
            self._open += 1
            self.peak_connections = max(self.peak_connections, self._open)
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._done(request)
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._done(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        return  # a client that went away (or was evicted) is not worth a traceback on stderr

    def request_read(self, request: Any) -> None:
        """The request is complete: its connection may no longer be evicted."""
        with self._lock:
            self._reading.pop(request, None)

    def _done(self, request: Any) -> None:
        with self._lock:
            self._reading.pop(request, None)
            self._open -= 1
        self._slots.release()

    def _evict_oldest(self) -> None:
        with self._lock:
            oldest = next(iter(self._reading), None)
            if oldest is None:
                return
            del self._reading[oldest]
            self.evicted += 1
        with contextlib.suppress(OSError):  # already closed by its own thread
            oldest.shutdown(socket.SHUT_RDWR)  # its thread's blocked read returns at once


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
    ) -> None:
        self.state = state
        self.liveness_timeout_s = liveness_timeout_s
        handler = _handler_for(self, read_timeout_s)
        self._server = _BoundedServer((host, port), handler, max_connections)
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
            "last_error": state.last_error,
            "recent_batches": state.recent_events[-5:],
        }


def _handler_for(server: HealthServer, read_timeout_s: float) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = read_timeout_s  # per read: an idle or half-sent request is dropped

        def do_GET(self) -> None:
            server._server.request_read(self.request)
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

        def _reply(self, code: int, body: dict[str, Any]) -> None:
            data = encode_json(body)
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            return  # probes every few seconds would flood the log

    return Handler
