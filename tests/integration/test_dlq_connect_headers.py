"""dlq.connect_headers on the real broker: the service writes Kafka Connect's
``__connect.errors.*`` headers on its DLQ records (both forms), and replay reads those
records, and requeues still-failing ones with the headers too."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kafka_helpers import ReadMessage, create_topic, produce, read_topic
from service_helpers import ThreadedService, encode, new_stream, wait_until

from stream_validator.cli.replay import main as replay_main
from tests.support.ticks import tick


def connect(message: ReadMessage) -> dict[str, bytes | None]:
    return {n: v for n, v in message.headers if n.startswith("__connect.errors.")}


def test_service_writes_connect_headers_and_replay_reads_them(
    kafka_bootstrap: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With dlq.connect_headers each DLQ record names its source record and failure in
    Connect's headers, beside the sv.dlq.* ones; replay reads every one of them."""
    stream = new_stream(kafka_bootstrap, tmp_path, dlq={"connect_headers": True})
    # Valid, below min, not JSON, and one whose envelope would not fit (JSON escaping doubles
    # 450,000 quotes): the headers form.
    quoted = encode(tick(3, price=-1.0, note='"' * 450_000))
    messages: list[tuple[bytes | None, bytes | None, Any]] = [
        (b"k0", encode(tick(0)), None),
        (b"k1", encode(tick(1, price=-1.0)), [("trace", b"t1")]),
        (b"k2", b"garbage", None),
        (b"k3", quoted, None),
    ]
    produce(kafka_bootstrap, stream.source, messages)
    with ThreadedService.from_file(stream.config):
        wait_until(stream.all_consumed, 60, "commit")
    dlq = {m.key: m for m in read_topic(kafka_bootstrap, stream.dlq)}
    assert sorted(dlq) == [b"k1", b"k2", b"k3"]
    assert dict(dlq[b"k3"].headers)["sv.dlq.format"] == b"headers"
    expected = {
        b"k1": (b"1", b"TRANSFORMATION", b"below_min"),
        b"k2": (b"2", b"VALUE_CONVERTER", b"undecodable"),
        b"k3": (b"3", b"TRANSFORMATION", b"below_min"),
    }
    for key, (offset, stage, kind) in expected.items():
        headers = connect(dlq[key])
        assert headers["__connect.errors.topic"] == stream.source.encode()
        assert headers["__connect.errors.partition"] == b"0"
        assert headers["__connect.errors.offset"] == offset
        assert headers["__connect.errors.connector.name"] == b"ticks"
        assert headers["__connect.errors.stage"] == stage
        assert headers["__connect.errors.exception.class.name"] == (
            b"stream_validator.violation." + kind
        )
        message = headers["__connect.errors.exception.message"] or b""
        assert 0 < len(message) <= 1000 and message.decode("utf-8")
        assert dict(dlq[key].headers)["sv.dlq.source.offset"] == offset  # sv.dlq.* stay

    target = create_topic(kafka_bootstrap, 1, prefix="target")
    args = ["--config", str(stream.config), "--dlq-topic", stream.dlq, "--to", target, "--json"]
    replay_main(args)
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["unreplayable_by_reason"] == {}, summary
    assert summary["outcomes"]["still_failing"] == 3, summary
    # Requeued (the route's contract still rejects them): new envelopes, Connect headers too.
    wait_until(lambda: stream.produced(stream.dlq) >= 6, 30, "three requeued envelopes")
    requeued = read_topic(kafka_bootstrap, stream.dlq, isolation_level="read_committed")[3:]
    assert sorted(m.key or b"" for m in requeued) == [b"k1", b"k2", b"k3"]
    for message in requeued:
        headers = connect(message)
        assert headers["__connect.errors.topic"] == stream.source.encode()
        assert headers["__connect.errors.offset"] == expected[message.key or b""][0]
        assert dict(message.headers)["sv.dlq.replay.count"] == b"1"
