"""Health endpoints: liveness from the loop heartbeat, readiness from the service state;
probes answer whatever other clients do."""

from __future__ import annotations

import contextlib
import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from stream_validator.codec import encode_json
from stream_validator.service.http.health import MAX_RESUMES, HealthServer
from stream_validator.service.report.state import ServiceState
from tests.support.flood import flood_plan
from tests.support.http import half_sent
from tests.support.ticks import planned_event


@pytest.fixture
def served() -> Iterator[tuple[HealthServer, ServiceState]]:
    state = ServiceState()
    server = HealthServer(state, host="127.0.0.1", port=0, liveness_timeout_s=1.0).start()
    try:
        yield server, state
    finally:
        server.close()


def get(server: HealthServer, path: str) -> tuple[int, dict[str, object]]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{server.port}{path}", timeout=5) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_readiness_follows_state(served: tuple[HealthServer, ServiceState]) -> None:
    """/readyz is 503 until the service is ready, then 200."""
    server, state = served
    assert get(server, "/readyz") == (503, {"ready": False})
    state.ready = True
    assert get(server, "/readyz") == (200, {"ready": True})


def test_liveness_fails_when_loop_stalls(served: tuple[HealthServer, ServiceState]) -> None:
    """/healthz is 200 while the loop beats and 503 once it stalls past the timeout."""
    server, state = served
    assert get(server, "/healthz")[0] == 200
    state.last_loop = time.monotonic() - 5
    assert get(server, "/healthz") == (503, {"live": False})


def test_status_and_unknown_path(served: tuple[HealthServer, ServiceState]) -> None:
    """/status reports counters and recent batches; other paths are 404."""
    server, state = served
    state.batches, state.records = 3, 30
    state.remember({"event": "batch", "records": 10})
    code, body = get(server, "/status")
    assert (
        code == 200
        and body["batches"] == 3
        and body["recent_batches"] == [{"event": "batch", "records": 10}]
    )
    assert get(server, "/nope")[0] == 404


def test_status_stays_small_with_90000_unique_keys(
    served: tuple[HealthServer, ServiceState],
) -> None:
    """Batch events of a 90,000-unique-key batch keep /status and the kept events small."""
    server, state = served
    event = planned_event(flood_plan())
    for _ in range(state.max_events + 5):
        state.remember(event)
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/status", timeout=5) as reply:
        body = reply.read()
    assert len(body) < 100_000
    assert sum(len(encode_json(e)) for e in state.recent_events) < 400_000


def health_threads() -> int:
    return sum(1 for t in threading.enumerate() if "process_request_thread" in t.name)


def test_half_sent_requests_do_not_grow_threads_past_the_cap() -> None:
    """100 half-sent requests hold at most the cap of threads, and a probe still answers."""
    server = HealthServer(
        ServiceState(), host="127.0.0.1", port=0, liveness_timeout_s=60, max_connections=8
    ).start()
    stalled = [half_sent(server.port) for _ in range(100)]
    try:
        assert get(server, "/healthz") == (200, {"live": True})
        assert server.peak_connections <= 8
        assert server.evicted >= 100 - 8
        assert health_threads() < 20  # the cap, plus evicted threads still unwinding
    finally:
        for conn in stalled:
            conn.close()
        server.close()


def test_an_idle_connection_is_closed_after_the_read_timeout() -> None:
    """A request that stops half way is dropped after read_timeout_s (the server closes it)."""
    server = HealthServer(
        ServiceState(), host="127.0.0.1", port=0, liveness_timeout_s=60, read_timeout_s=0.2
    ).start()
    try:
        with half_sent(server.port) as conn:
            assert (
                conn.recv(1024) == b""
            )  # EOF from the server, well before the 30 s client timeout
    finally:
        server.close()


RESUME_TOKEN = "flood-test-token-0123456789"
FLOOD_CLIENTS, PROBES, PROBE_TIMEOUT_S = 64, 6, 3.0  # the kubelet's timeoutSeconds: 3


def test_probes_answer_in_time_while_64_clients_flood_resume() -> None:
    """64 clients posting an authorized resume, which the loop never acts on: every /healthz
    probe still answers 200 within the probe timeout, and at most MAX_RESUMES wait at once."""
    stop = threading.Event()
    waiting, most_waiting, lock = 0, 0, threading.Lock()

    def never_acts(route: str, wait_s: float) -> None:
        nonlocal waiting, most_waiting
        with lock:
            waiting += 1
            most_waiting = max(most_waiting, waiting)
        stop.wait(wait_s)
        with lock:
            waiting -= 1

    server = HealthServer(
        ServiceState(),
        host="127.0.0.1",
        port=0,
        liveness_timeout_s=60,
        resume=never_acts,
        resume_token=RESUME_TOKEN,
    ).start()
    started = threading.Semaphore(0)
    url = f"http://127.0.0.1:{server.port}/breaker/resume?route=ticks"

    def flood() -> None:
        started.release()
        while not stop.is_set():
            request = urllib.request.Request(
                url, method="POST", headers={"Authorization": f"Bearer {RESUME_TOKEN}"}
            )
            with contextlib.suppress(OSError):  # HTTPError (429) included: keep posting
                urllib.request.urlopen(request, timeout=10).close()

    clients = [threading.Thread(target=flood) for _ in range(FLOOD_CLIENTS)]
    for client in clients:
        client.start()
    probes: list[tuple[int, float]] = []
    try:
        for _ in range(FLOOD_CLIENTS):
            assert started.acquire(timeout=10)
        for _ in range(PROBES):
            began = time.monotonic()
            with urllib.request.urlopen(
                f"http://127.0.0.1:{server.port}/healthz", timeout=PROBE_TIMEOUT_S
            ) as reply:
                probes.append((reply.status, time.monotonic() - began))
    finally:
        stop.set()
        for client in clients:
            client.join(15)
        server.close()
    assert [code for code, _ in probes] == [200] * PROBES
    assert max(seconds for _, seconds in probes) < PROBE_TIMEOUT_S
    assert most_waiting <= MAX_RESUMES
