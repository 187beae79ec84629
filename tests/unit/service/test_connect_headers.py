"""dlq.connect_headers in the service: every path that writes a DLQ record adds Kafka
Connect's ``__connect.errors.*`` headers, naming the source record."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from stream_validator.errors import ServiceExit
from stream_validator.records import SourceRecord

from .fakeservice import Harness, service_config, tick


def connect(record: SourceRecord) -> dict[str, bytes | None]:
    return {n: v for n, v in record.headers if n.startswith("__connect.errors.")}


@pytest.mark.parametrize("transactional", [False, True], ids=["at-least-once", "exactly-once"])
def test_every_dlq_path_writes_connect_headers(transactional: bool) -> None:
    """A contract violation, an undecodable value, unreadable headers, a record too large
    for the clean topic and one the clean topic refuses (isolated, then produced alone):
    each DLQ record carries the Connect headers of its source record and failure."""
    config = service_config(transactional=transactional)
    h = Harness(replace(config, dlq_connect_headers=True))
    h.feed([tick.json(0), tick.json(1, price=-1.0), b"garbage"])
    unreadable = h.broker.append("src", tick.json(3), key=b"k3")
    h.broker.mark_unreadable(unreadable, "header names are not valid UTF-8")
    h.broker.append("src", tick.json(4), key=b"k4", headers=[("big", b"x" * 1_100_000)])
    h.broker.append("src", tick.json(5), key=b"k5")
    h.broker.faults.refuse = lambda r: (
        "INVALID_RECORD" if r.topic == "clean" and b'"seq":5,' in (r.value or b"") else None
    )
    assert h.run() == ServiceExit.OK
    # At-least-once re-reads a refused batch: its DLQ entries land again, identical.
    dlq = h.topic("dlq")
    seen = {
        record.key: (
            headers["__connect.errors.offset"],
            headers["__connect.errors.stage"],
            headers["__connect.errors.exception.class.name"],
        )
        for record, headers in zip(dlq, map(connect, dlq), strict=True)
    }
    violation = b"stream_validator.violation."
    assert seen == {
        b"k1": (b"1", b"TRANSFORMATION", violation + b"below_min"),
        b"k2": (b"2", b"VALUE_CONVERTER", violation + b"undecodable"),
        b"k3": (b"3", b"HEADER_CONVERTER", violation + b"undecodable"),
        b"k4": (b"4", b"KAFKA_PRODUCE", violation + b"oversized"),
        b"k5": (b"5", b"KAFKA_PRODUCE", violation + b"delivery_rejected"),
    }
    for record in dlq:
        headers = connect(record)
        assert headers["__connect.errors.topic"] == b"src"
        assert headers["__connect.errors.partition"] == b"0"
        assert headers["__connect.errors.connector.name"] == b"ticks"
        envelope = json.loads(record.value or b"")
        reason = envelope["violation_reason"].encode()
        assert headers["__connect.errors.exception.message"] == reason
        assert dict(record.headers)["sv.dlq.route"] == b"ticks"  # sv.dlq.* stay


def test_off_by_default() -> None:
    """Without the option the service writes none."""
    h = Harness(service_config())
    h.feed([b"garbage"])
    assert h.run() == ServiceExit.OK
    (record,) = h.topic("dlq")
    assert connect(record) == {}
