"""The DLQ circuit breaker on the real broker: a bad-deploy burst trips it.

``alert``: an event and the metrics, records keep flowing. ``pause``: the route's partitions
stop being read (the backlog produced meanwhile waits, the service stays up and in the
group); ``stream-validator resume`` or a passing probe after the cool-down lets the backlog
through, and every source record ends up exactly once in clean or DLQ.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import yaml
from kafka_helpers import IsolationLevel, produce, read_topic, unique_group
from service_helpers import (
    REPO,
    ServiceLog,
    ServiceProcess,
    Stream,
    ThreadedService,
    assigned,
    encode,
    free_port,
    new_stream,
    tick,
    wait_until,
)

from stream_validator.config.settings import load_config
from stream_validator.service.app import metrics_hooks
from stream_validator.service.telemetry.breakermetrics import BreakerMetrics
from stream_validator.service.telemetry.metrics import CollectorRegistry, ServiceMetrics

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

GOOD_HEAD, BURST, BACKLOG = 300, 600, 900
RESUME = [sys.executable, "-m", "stream_validator", "resume", "--route", "ticks"]
RESUME_TOKEN = "integration-resume-token-0123456789"


def breaker(action: str, cool_down_s: float, **changes: object) -> dict[str, object]:
    """Trip on 50 quarantined records in a row (or over half of the last 100)."""
    spec: dict[str, object] = {
        "action": action,
        "window_records": 100,
        "max_quarantined_share": 0.5,
        "max_consecutive": 50,
        "cool_down_s": cool_down_s,
        "probe_records": 50,
    }
    return spec | changes


#: Judged only once 900 records are in the window (300 good + the 600 of the burst, share
#: 0.67): the breaker trips on the burst's last record, so the whole burst is delivered
#: before the pause and what waits is exactly the backlog produced afterwards.
AT_BURST_END = {"window_records": GOOD_HEAD + BURST, "max_consecutive": None}


def bad_deploy(i: int) -> bytes:
    """A tick with every key in PascalCase, as the simulator's ``bad_deploy`` writes them:
    every field is missing for the contract, so every record is quarantined."""
    record = tick(i)
    return encode({"".join(p.capitalize() for p in k.split("_")): v for k, v in record.items()})


def send(stream: Stream, start: int, values: list[bytes]) -> None:
    produce(
        stream.bootstrap,
        stream.source,
        [(f"k{start + i}".encode(), v, None) for i, v in enumerate(values)],
    )


def good_then_burst(stream: Stream) -> None:
    send(stream, 0, [encode(tick(i)) for i in range(GOOD_HEAD)])
    send(stream, GOOD_HEAD, [bad_deploy(i) for i in range(BURST)])


def backlog(stream: Stream) -> None:
    start = GOOD_HEAD + BURST
    send(stream, start, [encode(tick(i)) for i in range(start, start + BACKLOG)])


def pause_stream(
    bootstrap: str,
    tmp_path: Path,
    cool_down_s: float,
    kafka: dict[str, object] | None = None,
    **changes: object,
) -> Stream:
    options = {"circuit_breaker": breaker("pause", cool_down_s, **changes)}
    token_file = tmp_path / "resume-token"
    token_file.write_text(RESUME_TOKEN + "\n")
    return new_stream(
        bootstrap,
        tmp_path,
        partitions=3,
        route_options=options,
        kafka=kafka or {},
        service={"resume_token_file": str(token_file)},
    )


def breaker_status(service: ServiceProcess) -> dict[str, Any]:
    return dict(service.status().get("breakers", {}).get("ticks", {}))


def paused_with_backlog_waiting(stream: Stream, service: ServiceProcess) -> int:
    """Wait for the trip (all 3 partitions paused), produce the backlog, check it waits;
    return how many records the service had processed."""
    wait_until(lambda: breaker_status(service).get("paused_partitions") == 3, 90, "the pause", 0.05)
    assert breaker_status(service)["state"] == "open"
    backlog(stream)
    before = service.status()["records"]
    time.sleep(2.0)  # ten batch timeouts: a consuming service would have read the backlog
    status = service.status()
    assert status["records"] == before == GOOD_HEAD + BURST
    assert status["live"] and not stream.all_consumed()
    return int(before)


def assert_each_record_once(
    stream: Stream, isolation_level: IsolationLevel = "read_uncommitted"
) -> None:
    seen = stream.outputs_by_source(isolation_level)
    assert len(seen) == GOOD_HEAD + BURST + BACKLOG
    assert set(seen.values()) == {1}, "no failures: nothing may be duplicated"
    clean = read_topic(stream.bootstrap, stream.clean, isolation_level=isolation_level)
    dlq = read_topic(stream.bootstrap, stream.dlq, isolation_level=isolation_level)
    assert (len(clean), len(dlq)) == (GOOD_HEAD + BACKLOG, BURST)


def test_alert_trips_and_records_keep_flowing(kafka_bootstrap: str, tmp_path: Path) -> None:
    """alert: one trip (metric, state gauge, log event, /status), every record delivered."""
    options = {"circuit_breaker": breaker("alert", 600)}
    stream = new_stream(kafka_bootstrap, tmp_path, partitions=3, route_options=options)
    good_then_burst(stream)
    backlog(stream)
    registry = CollectorRegistry()
    hooks = metrics_hooks(ServiceMetrics(registry), breakers=BreakerMetrics(registry, ["ticks"]))
    with ServiceLog() as logged, ThreadedService(load_config(stream.config, {}), hooks) as run:
        wait_until(stream.all_consumed, 90, "all committed")
        status = dict(run.service.state.breakers["ticks"])
    assert run.exit_code == 0
    assert_each_record_once(stream)
    assert (status["state"], status["trips"], status["paused_partitions"]) == ("open", 1, 0)
    trips = sum(
        registry.get_sample_value(
            "stream_validator_breaker_trips_total", {"route": "ticks", "reason": reason}
        )
        or 0
        for reason in ("share", "consecutive")
    )
    assert trips == 1
    assert registry.get_sample_value("stream_validator_breaker_state", {"route": "ticks"}) == 1
    assert logged.saw("breaker")


def test_pause_then_resume_command_lets_the_backlog_through(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """pause: the burst pauses the route, the backlog waits; ``stream-validator resume``
    closes the breaker, the backlog is processed, each record exactly once."""
    stream = pause_stream(kafka_bootstrap, tmp_path, cool_down_s=3600, **AT_BURST_END)
    good_then_burst(stream)
    service = ServiceProcess(stream.config, tmp_path / "run.log").start()
    try:
        wait_until(service.ready, 60, "readiness")
        paused_with_backlog_waiting(stream, service)
        done = subprocess.run(
            [*RESUME, "--config", str(stream.config)],
            capture_output=True,
            text=True,
            timeout=60,
            cwd=REPO,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert "route ticks: breaker open -> closed" in done.stdout
        wait_until(stream.all_consumed, 90, "the backlog committed")
        assert breaker_status(service)["state"] == "closed"
        assert breaker_status(service)["paused_partitions"] == 0
    finally:
        service.kill()
    assert_each_record_once(stream)
    assert not any(e.get("msg") == "partitions revoked" for e in service.log_events())


def test_pause_then_a_passing_probe_after_the_cool_down_resumes(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """pause with a short cool-down: half-open reads the backlog as its probe, the probe
    passes, the breaker closes by itself, each record exactly once."""
    stream = pause_stream(kafka_bootstrap, tmp_path, cool_down_s=6, **AT_BURST_END)
    good_then_burst(stream)
    service = ServiceProcess(stream.config, tmp_path / "run.log").start()
    try:
        wait_until(service.ready, 60, "readiness")
        paused_with_backlog_waiting(stream, service)
        wait_until(stream.all_consumed, 90, "the backlog committed")
        assert breaker_status(service)["state"] == "closed"
    finally:
        service.kill()
    assert_each_record_once(stream)
    events = [e for e in service.log_events() if e.get("msg") == "breaker"]
    assert [(e["before"], e["after"]) for e in events] == [
        ("closed", "open"),
        ("open", "half_open"),
        ("half_open", "closed"),
    ]


def post_resume(service: ServiceProcess) -> tuple[int, dict[str, Any]]:
    url = f"http://127.0.0.1:{service.health_port}/breaker/resume?route=ticks"
    headers = {"Authorization": f"Bearer {RESUME_TOKEN}"}
    request = urllib.request.Request(url, method="POST", headers=headers)
    with urllib.request.urlopen(request, timeout=30) as r:
        return r.status, json.loads(r.read())


@pytest.mark.parametrize("mode", ["at-least-once", "exactly-once"])
def test_a_pause_mid_burst_loses_and_duplicates_nothing(
    kafka_bootstrap: str, tmp_path: Path, mode: str
) -> None:
    """Tripped on 50 in a row, the pause comes mid-burst, with records fetched and not yet
    processed: each resume (POST /breaker/resume) re-trips on the burst's rest until it is
    drained; every source record still lands exactly once (read_committed in exactly-once).

    Batches submitted before the trip was known are delivered as usual: in exactly-once mode
    one transaction spans a commit interval (100 ms), so a fast run may deliver the whole
    stream in the transaction whose outcome trips the breaker, and then no record is left
    to wait for a resume (the test once took that for "never tripped" and failed)."""
    exactly_once = mode == "exactly-once"
    kafka: dict[str, object] = {"transactional_id": unique_group("txn")} if exactly_once else {}
    stream = pause_stream(kafka_bootstrap, tmp_path, cool_down_s=3600, kafka=kafka)
    good_then_burst(stream)
    backlog(stream)
    service = ServiceProcess(stream.config, tmp_path / "run.log").start()
    resumes = 0
    try:
        wait_until(service.ready, 60, "readiness")
        while True:
            wait_until(
                lambda: stream.all_consumed() or breaker_status(service).get("state") == "open",
                90,
                "a pause or the end",
                0.05,
            )
            if breaker_status(service).get("state") == "open":
                assert post_resume(service) == (
                    200,
                    {"route": "ticks", "before": "open", "state": "closed"},
                )
                resumes += 1
            elif stream.all_consumed():
                break
            assert resumes < 20
        trips = breaker_status(service).get("trips")
    finally:
        service.kill()
    assert resumes >= 1
    assert trips == resumes
    assert_each_record_once(stream, "read_committed" if exactly_once else "read_uncommitted")


@pytest.mark.parametrize("resume_while_away", [False, True], ids=["paused-back", "resumed-away"])
def test_partitions_assigned_back_follow_the_breaker(
    kafka_bootstrap: str, tmp_path: Path, resume_while_away: bool
) -> None:
    """A second instance joins the group and leaves again. Partitions the paused first
    instance gets back are paused too (the backlog waits until the resume); when the
    breaker was resumed while they were away, they come back resumed (librdkafka kept
    their pause flag through the revocation) and the backlog flows."""
    stream = pause_stream(kafka_bootstrap, tmp_path, cool_down_s=3600, **AT_BURST_END)
    good_then_burst(stream)
    second_config = tmp_path / "second.yaml"
    document = yaml.safe_load(stream.config.read_text())
    document["service"]["health_port"] = free_port()
    second_config.write_text(yaml.safe_dump(document))
    first = ServiceProcess(stream.config, tmp_path / "first.log").start()
    second = ServiceProcess(second_config, tmp_path / "second.log")
    try:
        wait_until(first.ready, 60, "readiness")
        wait_until(
            lambda: breaker_status(first).get("paused_partitions") == 3, 90, "the pause", 0.05
        )
        second.start()
        wait_until(lambda: assigned(second) > 0, 60, "the second's share")
        wait_until(second.ready, 30, "the second's readiness")
        if resume_while_away:
            assert post_resume(first)[0] == 200
        second.signal(signal.SIGTERM)
        assert second.wait(30) == 0, second.logs()[-3000:]
        wait_until(lambda: assigned(first) == 3, 90, "the partitions back at the first")
        if not resume_while_away:
            wait_until(
                lambda: breaker_status(first).get("paused_partitions") == 3, 30, "all paused"
            )
            backlog(stream)
            time.sleep(2.0)  # ten batch timeouts: a consuming service would read the backlog
            assert first.status()["records"] == GOOD_HEAD + BURST
            assert not stream.all_consumed()
            assert post_resume(first)[0] == 200
        else:
            backlog(stream)
        wait_until(stream.all_consumed, 90, "the backlog committed")
    finally:
        first.kill()
        second.kill()
    assert_each_record_once(stream)
