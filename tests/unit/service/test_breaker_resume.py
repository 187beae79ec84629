"""Operator resume: POST /breaker/resume on the health port and ``stream-validator resume``."""

from __future__ import annotations

import json
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from stream_validator.cli.main import main
from stream_validator.errors import ResumeExit, ServiceExit
from stream_validator.service.breaker import BreakerState, BreakerTransition
from stream_validator.service.breakermetrics import BreakerMetrics
from stream_validator.service.health import HealthServer
from stream_validator.service.metrics import CollectorRegistry
from stream_validator.service.state import ServiceState

from .fakeservice import Harness
from .test_breaker_service import BAD, consumer, gauge, harness, tick

CLOSED, OPEN = BreakerState.CLOSED, BreakerState.OPEN


@pytest.fixture
def paused_service() -> Iterator[tuple[Harness, HealthServer, threading.Event]]:
    """A service whose route tripped into pause (cool-down of an hour), running in a thread
    with its health server; it stops once idle after the breaker closed."""
    h, _ = harness("pause", cool_down_s=3600)
    h.feed([BAD] * 10 + [tick.json(i) for i in range(30)])
    paused = threading.Event()

    def idle() -> None:
        if consumer(h).paused:
            paused.set()
            threading.Event().wait(0.001)  # do not spin hot while the operator decides
        else:
            h.service.stop()

    h.on_idle = idle
    resume = h.service.breakers.request_resume
    server = HealthServer(
        h.state, host="127.0.0.1", port=0, liveness_timeout_s=60, resume=resume
    ).start()
    codes: list[int] = []
    finished = threading.Event()

    def run() -> None:
        codes.append(h.run())
        finished.set()

    runner = threading.Thread(target=run)
    runner.start()
    try:
        assert paused.wait(10)
        yield h, server, finished
    finally:
        h.service.stop()
        runner.join(10)
        server.close()
    assert codes == [ServiceExit.OK]


def post(server: HealthServer, query: str) -> tuple[int, dict[str, object]]:
    url = f"http://127.0.0.1:{server.port}/breaker/resume{query}"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, method="POST"), timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_resume_command_closes_the_breaker_and_the_backlog_flows(
    paused_service: tuple[Harness, HealthServer, threading.Event],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``stream-validator resume --route ticks``: exit 0, open -> closed, the paused backlog
    is delivered once, /status and the metrics show the resume."""
    h, server, _ = paused_service
    url = f"http://127.0.0.1:{server.port}"
    assert main(["resume", "--route", "ticks", "--url", url]) == ResumeExit.OK
    assert "route ticks: breaker open -> closed" in capsys.readouterr().out
    h.service.stop()  # (the fixture waits for the loop to finish)
    assert server.status()["breakers"]["ticks"]["state"] == "closed"  # type: ignore[index]
    assert gauge(h, "stream_validator_breaker_state") == 0
    assert gauge(h, "stream_validator_breaker_operator_resumes_total") == 1


def test_resume_over_http_then_the_backlog_is_delivered_once(
    paused_service: tuple[Harness, HealthServer, threading.Event],
) -> None:
    """POST /breaker/resume?route=ticks answers 200 with the states; every record lands once."""
    h, server, finished = paused_service
    assert post(server, "?route=ticks") == (
        200,
        {"route": "ticks", "before": "open", "state": "closed"},
    )
    assert finished.wait(10)  # the loop drained the backlog and stopped, idle and not paused
    assert sorted(r.value for r in h.topic("clean")) == sorted(tick.json(i) for i in range(30))
    assert len(h.topic("dlq")) == 10


def test_unknown_route_and_missing_route_are_clear_errors(
    paused_service: tuple[Harness, HealthServer, threading.Event],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An unknown route: HTTP 404 naming the routes with a breaker, exit 1; no route: 400."""
    _, server, _ = paused_service
    code, body = post(server, "?route=nope")
    assert code == 404
    assert body["error"] == "'nope' is not a route (routes with a breaker: ticks)"
    assert post(server, "")[0] == 400
    url = f"http://127.0.0.1:{server.port}"
    assert main(["resume", "--route", "nope", "--url", url]) == ResumeExit.UNKNOWN_ROUTE
    assert "is not a route" in capsys.readouterr().err


def test_resume_command_says_when_the_service_is_unreachable(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Nothing listening on the port: exit 3 and a message naming the address."""
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    assert main(["resume", "--route", "ticks", "--url", url]) == ResumeExit.UNREACHABLE
    assert f"service unreachable at {url}" in capsys.readouterr().err


def test_a_resume_the_loop_has_not_acted_on_is_answered_202_queued() -> None:
    """The loop did not take the request in time: 202 and ``queued``, never a false 200."""
    server = HealthServer(
        ServiceState(), host="127.0.0.1", port=0, liveness_timeout_s=1, resume=lambda r, t: None
    ).start()
    try:
        assert post(server, "?route=ticks") == (
            202,
            {"route": "ticks", "queued": True, "waited_s": 5.0},
        )
    finally:
        server.close()


def test_breaker_metrics_refuse_a_route_without_a_breaker() -> None:
    """A transition of a route that has no breaker is a programming error: ValueError, and
    nothing recorded."""
    registry = CollectorRegistry()
    metrics = BreakerMetrics(registry, ["ticks"])
    with pytest.raises(ValueError, match="'books' has no breaker"):
        metrics.observe(BreakerTransition("books", CLOSED, OPEN, "r", 0.0, "share"))
    assert registry.get_sample_value("stream_validator_breaker_state", {"route": "books"}) is None
