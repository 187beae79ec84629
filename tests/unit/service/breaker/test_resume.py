"""Operator resume: POST /breaker/resume on the health port and ``stream-validator resume``:
authorized by the resume token, refused to web pages, bounded so probes never wait."""

from __future__ import annotations

import json
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from stream_validator.cli.main import main
from stream_validator.errors import ResumeExit, ServiceExit
from stream_validator.service.breaker.machine import BreakerState, BreakerTransition
from stream_validator.service.http.health import MAX_RESUMES, HealthServer
from stream_validator.service.report.state import ServiceState
from stream_validator.service.telemetry.breakermetrics import BreakerMetrics
from stream_validator.service.telemetry.metrics import CollectorRegistry

from ..fakeservice import Harness
from .test_breaker_loop import BAD, consumer, gauge, harness, tick

CLOSED, OPEN = BreakerState.CLOSED, BreakerState.OPEN
TOKEN = "resume-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def token_file(tmp_path: Path) -> str:
    """A file holding TOKEN, as a Kubernetes Secret volume would (with a final newline)."""
    path = tmp_path / "resume-token"
    path.write_text(TOKEN + "\n")
    return str(path)


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
        h.state,
        host="127.0.0.1",
        port=0,
        liveness_timeout_s=60,
        resume=resume,
        resume_token=TOKEN,
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


def post(
    server: HealthServer, query: str, headers: dict[str, str] | None = None
) -> tuple[int, dict[str, object]]:
    url = f"http://127.0.0.1:{server.port}/breaker/resume{query}"
    request = urllib.request.Request(
        url, method="POST", headers=AUTH if headers is None else headers
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def resume_server(resume: object, token: str | None = TOKEN) -> HealthServer:
    """A health server whose resume calls ``resume`` (route, wait_s)."""
    return HealthServer(
        ServiceState(),
        host="127.0.0.1",
        port=0,
        liveness_timeout_s=60,
        resume=resume,  # type: ignore[arg-type]
        resume_token=token,
    ).start()


def test_resume_command_closes_the_breaker_and_the_backlog_flows(
    paused_service: tuple[Harness, HealthServer, threading.Event],
    token_file: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``stream-validator resume --route ticks``: exit 0, open -> closed, the paused backlog
    is delivered once, /status and the metrics show the resume."""
    h, server, _ = paused_service
    url = f"http://127.0.0.1:{server.port}"
    args = ["resume", "--route", "ticks", "--url", url, "--token-file", token_file]
    assert main(args) == ResumeExit.OK
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
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An unknown route: HTTP 404 naming the routes with a breaker, exit 1; no route: 400."""
    _, server, _ = paused_service
    code, body = post(server, "?route=nope")
    assert code == 404
    assert body["error"] == "'nope' is not a route (routes with a breaker: ticks)"
    assert post(server, "")[0] == 400
    url = f"http://127.0.0.1:{server.port}"
    monkeypatch.setenv("SV_RESUME_TOKEN", TOKEN)
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
    server = resume_server(lambda r, t: None)
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


class Calls:
    """A resume callable that records its calls and closes at once."""

    def __init__(self) -> None:
        self.routes: list[str] = []

    def __call__(self, route: str, wait_s: float) -> tuple[str, str]:
        self.routes.append(route)
        return "open", "closed"


def test_without_a_configured_token_resume_is_refused_saying_how_to_configure_it() -> None:
    """No service.resume_token_file: 403 naming the key and its variable; the loop untouched."""
    calls = Calls()
    server = resume_server(calls, token=None)
    try:
        code, body = post(server, "?route=ticks")
    finally:
        server.close()
    assert code == 403
    assert "service.resume_token_file" in str(body["error"])
    assert "SV_SERVICE__RESUME_TOKEN_FILE" in str(body["error"])
    assert calls.routes == []


@pytest.mark.parametrize(
    "headers",
    [{}, {"Authorization": "Bearer wrong-token-0123456789"}, {"Authorization": TOKEN}],
    ids=["none", "wrong", "no-scheme"],
)
def test_a_missing_or_wrong_token_is_answered_401(headers: dict[str, str]) -> None:
    """Without ``Authorization: Bearer <the token>``: 401 with WWW-Authenticate, nothing done."""
    calls = Calls()
    server = resume_server(calls)
    url = f"http://127.0.0.1:{server.port}/breaker/resume?route=ticks"
    try:
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(urllib.request.Request(url, method="POST", headers=headers))
        assert info.value.code == 401
        assert info.value.headers["WWW-Authenticate"] == "Bearer"
        info.value.close()
    finally:
        server.close()
    assert calls.routes == []


def test_a_request_from_a_web_page_is_refused_even_with_the_token() -> None:
    """A POST carrying an Origin header (every browser POST does) is 403, nothing done."""
    calls = Calls()
    server = resume_server(calls)
    try:
        code, body = post(server, "?route=ticks", {**AUTH, "Origin": "http://evil.example"})
    finally:
        server.close()
    assert code == 403 and "Origin" in str(body["error"])
    assert calls.routes == []


def test_resumes_beyond_the_budget_are_answered_429_at_once() -> None:
    """While MAX_RESUMES wait for the loop, another resume is 429 with Retry-After, at once."""
    release, entered = threading.Event(), threading.Semaphore(0)

    def slow(route: str, wait_s: float) -> None:
        entered.release()
        release.wait(wait_s)

    server = resume_server(slow)
    waiting = [threading.Thread(target=post, args=(server, "?route=ticks")) for _ in range(2)]
    try:
        for thread in waiting:
            thread.start()
        for _ in range(MAX_RESUMES):
            assert entered.acquire(timeout=10)
        code, body = post(server, "?route=ticks")
        assert code == 429 and "retry" in str(body["error"])
    finally:
        release.set()
        for thread in waiting:
            thread.join(10)
        server.close()


def test_resume_command_reaches_every_url_given(
    token_file: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--url`` repeated (one per pod): every server is resumed, each line names its URL."""
    calls = [Calls(), Calls()]
    servers = [resume_server(c) for c in calls]
    urls = [f"http://127.0.0.1:{s.port}" for s in servers]
    try:
        args = ["resume", "--route", "ticks", "--url", urls[0], "--url", urls[1]]
        assert main([*args, "--token-file", token_file]) == ResumeExit.OK
    finally:
        for server in servers:
            server.close()
    assert [c.routes for c in calls] == [["ticks"], ["ticks"]]
    out = capsys.readouterr().out
    assert all(f"{url}: route ticks: breaker open -> closed" in out for url in urls)


def test_resume_command_exits_with_the_first_failure_of_several_urls(
    token_file: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """One pod resumed, the next unreachable: both are tried, the exit code is 3."""
    calls = Calls()
    server = resume_server(calls)
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{free.getsockname()[1]}"
    try:
        args = [
            "resume",
            "--route",
            "ticks",
            "--url",
            dead,
            "--url",
            f"http://127.0.0.1:{server.port}",
        ]
        assert main([*args, "--token-file", token_file]) == ResumeExit.UNREACHABLE
    finally:
        server.close()
    assert calls.routes == ["ticks"]
    assert f"service unreachable at {dead}" in capsys.readouterr().err


def test_resume_command_without_a_token_shows_the_service_refusal(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No token given: the service's 401 is shown and the exit code is 2 (usage)."""
    monkeypatch.delenv("SV_RESUME_TOKEN", raising=False)
    server = resume_server(Calls())
    try:
        url = f"http://127.0.0.1:{server.port}"
        assert main(["resume", "--route", "ticks", "--url", url]) == ResumeExit.USAGE
    finally:
        server.close()
    assert "missing or wrong token" in capsys.readouterr().err


def test_resume_command_takes_the_token_file_of_the_config(
    tmp_path: Path, token_file: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--config``: the health host/port and service.resume_token_file of the service config."""
    calls = Calls()
    server = resume_server(calls)
    contract = Path(__file__).resolve().parents[4] / "config" / "contracts" / "tick.yaml"
    config = tmp_path / "service.yaml"
    config.write_text(
        json.dumps(
            {
                "service": {
                    "health_host": "0.0.0.0",
                    "health_port": server.port,
                    "resume_token_file": token_file,
                },
                "routes": [
                    {
                        "name": "ticks",
                        "source_topics": ["t"],
                        "contract": str(contract),
                        "clean_topic": "tc",
                        "dlq_topic": "td",
                    }
                ],
            }
        )
    )
    try:
        assert main(["resume", "--route", "ticks", "--config", str(config)]) == ResumeExit.OK
    finally:
        server.close()
    assert calls.routes == ["ticks"]


def test_resume_command_refuses_a_token_file_that_is_no_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A --token-file with a short token: exit 2 naming the flag, nothing sent."""
    path = tmp_path / "token"
    path.write_text("short")
    args = ["resume", "--route", "ticks", "--url", "http://127.0.0.1:1", "--token-file", str(path)]
    assert main(args) == ResumeExit.USAGE
    assert "--token-file: the token in" in capsys.readouterr().err
