"""The /metrics HTTP server: the registry in the Prometheus text format, bounded like the
health server (a per-read timeout, a cap on connections).

Without the ``_created`` series by default (``metrics.created_series``): one more series per
counter and histogram child that dashboards and alerts do not read. They are dropped when
the registry is exposed, per registry, rather than with prometheus_client's process-wide
``disable_created_metrics()`` switch, which would also change every other registry in the
process (and misses the service's own batch-fed histogram).
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterable, Iterator
from typing import NamedTuple
from wsgiref.simple_server import WSGIRequestHandler

import prometheus_client
from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from stream_validator.service.http.bounded import MAX_CONNECTIONS, BoundedHandler, BoundedWSGIServer

__all__ = ["MetricsServer", "WithoutCreated", "render_metrics", "start_http_server"]


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
    created_series: bool = False,
) -> MetricsServer:
    """Serve ``registry`` at http://host:port/metrics, bounded like the health server;
    ``created_series``: keep prometheus_client's ``_created`` series."""
    server = BoundedWSGIServer((host, port), _MetricsHandler, max_connections=max_connections)
    exposed = registry if created_series else WithoutCreated(registry)
    server.set_app(prometheus_client.make_wsgi_app(exposed))
    thread = threading.Thread(target=server.serve_forever, name="metrics", daemon=True)
    thread.start()
    return MetricsServer(server, thread)


class _MetricsHandler(BoundedHandler, WSGIRequestHandler):
    """wsgiref's handler with the per-read timeout (prometheus_client's has none)."""


def render_metrics(registry: CollectorRegistry, *, created_series: bool = False) -> str:
    """The registry in the Prometheus text exposition format, as /metrics serves it."""
    exposed = registry if created_series else WithoutCreated(registry)
    return prometheus_client.generate_latest(exposed).decode("utf-8")


# The metric types whose families carry a ``<name>_created`` sample per child.
_WITH_CREATED = frozenset({"counter", "histogram", "summary"})


class WithoutCreated(Collector):
    """A registry's metrics without the ``_created`` samples (what /metrics exposes).

    Answers ``restricted_registry`` (``/metrics?name[]=...``) as the registry does.
    """

    def __init__(self, registry: CollectorRegistry, names: Iterable[str] | None = None) -> None:
        self._registry = registry
        self._names = None if names is None else frozenset(names)

    def collect(self) -> Iterator[Metric]:
        source: Iterable[Metric] = (
            self._registry.collect()
            if self._names is None
            else self._registry.restricted_registry(self._names).collect()
        )
        for family in source:
            created = family.name + "_created"
            if family.type in _WITH_CREATED and any(s.name == created for s in family.samples):
                family = copy.copy(family)  # the collector's own family is left as it is
                family.samples = [sample for sample in family.samples if sample.name != created]
            yield family

    def restricted_registry(self, names: Iterable[str]) -> WithoutCreated:
        """The same view, of the metrics ``names`` only."""
        return WithoutCreated(self._registry, names)
