"""/metrics leaves out prometheus_client's ``_created`` series unless ``metrics.created_series``."""

from __future__ import annotations

import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import CollectorRegistry

from stream_validator.service import app
from stream_validator.service.http.metricsserver import render_metrics, start_http_server
from stream_validator.service.telemetry.metrics import ServiceMetrics

TICK = str(Path(__file__).resolve().parents[4] / "config" / "contracts" / "tick.yaml")
OPENMETRICS = "application/openmetrics-text; version=1.0.0"


def scrape(port: int, query: str = "", accept: str | None = None) -> str:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics{query}")
    if accept is not None:
        request.add_header("Accept", accept)
    with urllib.request.urlopen(request, timeout=5) as response:
        return str(response.read().decode())


def created_lines(text: str) -> list[str]:
    """The exposition's lines naming a ``_created`` series (samples, HELP or TYPE)."""
    return [line for line in text.splitlines() if "_created" in line]


@pytest.fixture
def registry() -> CollectorRegistry:
    """A registry with counters, the batch-fed latency histogram and gauges, all with data."""
    registry = CollectorRegistry()
    metrics = ServiceMetrics(registry)
    metrics.declare_route("ticks", "tick")
    metrics.inc_rebalance("assigned")
    metrics.observe_end_to_end_latency("ticks", [0.01, 0.2])
    metrics.set_ready(True)
    return registry


@pytest.mark.parametrize("accept", [None, OPENMETRICS], ids=["text", "openmetrics"])
def test_metrics_endpoint_has_no_created_series_by_default(
    registry: CollectorRegistry, accept: str | None
) -> None:
    """A scrape (either format) has the counters and histograms, and no _created series."""
    server = start_http_server(registry, port=0)
    try:
        body = scrape(server.port, accept=accept)
    finally:
        server.close()
    assert 'stream_validator_rebalances_total{event="assigned"} 1.0' in body
    assert 'stream_validator_end_to_end_latency_seconds_count{route="ticks"} 2.0' in body
    assert created_lines(body) == []


def test_created_series_kept_when_asked(registry: CollectorRegistry) -> None:
    """created_series=True exposes them, for the batch-fed histogram too."""
    server = start_http_server(registry, port=0, created_series=True)
    try:
        body = scrape(server.port)
    finally:
        server.close()
    names = {line.split("{")[0] for line in created_lines(body) if not line.startswith("#")}
    assert "stream_validator_rebalances_created" in names
    assert "stream_validator_end_to_end_latency_seconds_created" in names


def test_a_restricted_scrape_has_no_created_series(registry: CollectorRegistry) -> None:
    """/metrics?name[]=... answers with the named series only, still without _created."""
    server = start_http_server(registry, port=0)
    try:
        body = scrape(server.port, "?name[]=stream_validator_rebalances_total")
    finally:
        server.close()
    samples = [line for line in body.splitlines() if not line.startswith("#")]
    assert samples and all(s.startswith("stream_validator_rebalances_total") for s in samples)
    assert created_lines(body) == []


def test_render_metrics_matches_the_endpoint(registry: CollectorRegistry) -> None:
    """render_metrics leaves them out too, and keeps them when asked; the registry's own
    families are left as they were."""
    assert created_lines(render_metrics(registry)) == []
    assert created_lines(render_metrics(registry, created_series=True))
    samples = [s.name for family in registry.collect() for s in family.samples]
    assert "stream_validator_rebalances_created" in samples


@pytest.mark.parametrize(("setting", "expected"), [({}, False), ({"created_series": True}, True)])
def test_the_service_serves_created_series_as_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: dict[str, Any], expected: bool
) -> None:
    """run_service's /metrics: no _created series unless metrics.created_series is true (no
    broker needed: the loop is replaced by one that scrapes the endpoint)."""
    servers: list[Any] = []
    bodies: list[str] = []
    real = app.start_http_server

    def spy(*args: Any, **kwargs: Any) -> Any:
        servers.append(real(*args, **kwargs))
        return servers[-1]

    def run(self: object) -> int:
        bodies.append(scrape(servers[0].port))
        return 0

    monkeypatch.setattr(app, "start_http_server", spy)
    monkeypatch.setattr(app.StreamService, "run", run)
    monkeypatch.setattr(app, "_install_signal_handlers", lambda *_: None)
    monkeypatch.setattr(app, "configure_logging", lambda *_, **__: None)
    route = {"name": "ticks", "contract": TICK, "clean_topic": "c", "dlq_topic": "d"}
    document = {
        "kafka": {"bootstrap_servers": "127.0.0.1:1"},
        "service": {"health_host": "127.0.0.1", "health_port": 0},
        "metrics": {"enabled": True, "host": "127.0.0.1", "port": 0, **setting},
        "routes": [dict(route, source_topics=["s"])],
    }
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(document))
    assert app.run_service(str(path), {}) == 0
    (body,) = bodies
    assert 'stream_validator_records_consumed_total{contract="tick",route="ticks"} 0.0' in body
    assert bool(created_lines(body)) is expected
