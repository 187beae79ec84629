"""The /metrics HTTP server: the registry in the Prometheus text format, bounded like the
health server (a per-read timeout, a cap on connections)."""

from __future__ import annotations

import threading
from typing import NamedTuple
from wsgiref.simple_server import WSGIRequestHandler

import prometheus_client
from prometheus_client import CollectorRegistry

from stream_validator.service.http.bounded import MAX_CONNECTIONS, BoundedHandler, BoundedWSGIServer

__all__ = ["MetricsServer", "render_metrics", "start_http_server"]


class MetricsServer(NamedTuple):
    """The /metrics HTTP server and its thread; unpacks as ``(server, thread)``."""

    server: BoundedWSGIServer
    thread: threading.Thread

    @property
    def port(self) -> int:
        """The bound port (useful after asking for port 0)."""
        return int(self.server.server_port)

    def close(self) -> None:
        """Stop serving, release the socket and wait for the thread."""
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


def start_http_server(
    registry: CollectorRegistry,
    host: str = "127.0.0.1",
    port: int = 9464,
    *,
    max_connections: int = MAX_CONNECTIONS,
) -> MetricsServer:
    """Serve ``registry`` at http://host:port/metrics, bounded like the health server."""
    server = BoundedWSGIServer((host, port), _MetricsHandler, max_connections=max_connections)
    server.set_app(prometheus_client.make_wsgi_app(registry))
    thread = threading.Thread(target=server.serve_forever, name="metrics", daemon=True)
    thread.start()
    return MetricsServer(server, thread)


class _MetricsHandler(BoundedHandler, WSGIRequestHandler):
    """wsgiref's handler with the per-read timeout (prometheus_client's has none)."""


def render_metrics(registry: CollectorRegistry) -> str:
    """The registry in the Prometheus text exposition format."""
    return prometheus_client.generate_latest(registry).decode("utf-8")
