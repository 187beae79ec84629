"""HTTP servers that slow or idle clients cannot exhaust (/healthz & co. and /metrics).

Each read of a request times out after ``READ_TIMEOUT_S``, and at most ``max_connections``
connections hold a thread. When all are taken, the oldest connection that has not finished
sending its request is closed to make room: half-sent requests can neither grow threads past
the cap nor lock the probes and scrapes out.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from socketserver import TCPServer, ThreadingMixIn
from typing import Any
from wsgiref.simple_server import WSGIServer

MAX_CONNECTIONS = 16
READ_TIMEOUT_S = 5.0


class BoundedThreadingMixIn(ThreadingMixIn, TCPServer):
    """Thread per connection, at most ``max_connections`` at once; stalled ones evicted."""

    daemon_threads = True
    request_queue_size = 64  # a burst of probes and scrapes must not be dropped by the kernel
    max_connections = MAX_CONNECTIONS

    def __init__(
        self, address: tuple[str, int], handler: Any, *, max_connections: int | None = None
    ) -> None:
        if max_connections is not None:
            self.max_connections = max_connections
        self._slots = threading.BoundedSemaphore(self.max_connections)
        self._lock = threading.Lock()
        self._reading: dict[Any, None] = {}  # connections still sending, oldest first
        self._open = 0
        self.peak_connections = 0
        self.evicted = 0
        if ":" in address[0]:  # an IPv6 literal such as "::"; names keep resolving to IPv4
            self.address_family = socket.AF_INET6
        super().__init__(address, handler)

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


class BoundedHTTPServer(BoundedThreadingMixIn, HTTPServer):
    """http.server with bounded connection threads."""


class BoundedWSGIServer(BoundedThreadingMixIn, WSGIServer):
    """wsgiref's server with bounded connection threads (for prometheus_client's WSGI app)."""


class BoundedHandler(BaseHTTPRequestHandler):
    """Request handler with a per-read timeout that tells the server when a request is in."""

    timeout = READ_TIMEOUT_S  # per read: an idle or half-sent request is dropped

    def parse_request(self) -> bool:
        complete = super().parse_request()
        if complete and isinstance(self.server, BoundedThreadingMixIn):
            self.server.request_read(self.request)
        return complete

    def log_message(self, format: str, *args: Any) -> None:
        return  # probes and scrapes every few seconds would flood the log
