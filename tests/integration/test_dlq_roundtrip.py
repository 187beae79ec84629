"""The DLQ record format on the real broker: every quarantined record fits, stays
recoverable byte for byte, and replay's loop guard and target rules hold round trips."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from kafka_helpers import ReadMessage, create_topic, produce, read_topic
from service_helpers import CONTRACTS, ThreadedService, encode, new_stream, wait_until

from stream_validator.cli.replay import main as replay_main
from tests.support.ticks import tick

LIMIT = 1_048_576  # service.max_message_bytes default


class Setup:
    """Source, clean, DLQ and replay-target topics, a service config and a fixed contract."""

    def __init__(self, bootstrap: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
        self.bootstrap = bootstrap
        self.capsys = capsys
        self.stream = new_stream(bootstrap, tmp_path)
        self.source, self.clean, self.dlq = self.stream.source, self.stream.clean, self.stream.dlq
        self.config = self.stream.config
        self.target = create_topic(bootstrap, 1, prefix="target")
        contract = yaml.safe_load((CONTRACTS / "tick.yaml").read_text())
        contract["version"] = "2"
        for spec in contract["fields"]:
            if spec["name"] == "price":
                spec["min_value"] = -1000.0
        self.fixed = tmp_path / "tick-v2.yaml"
        self.fixed.write_text(yaml.safe_dump(contract))

    def replay(self, *args: str) -> tuple[int, dict[str, Any]]:
        """``replay`` of the DLQ with the fixed contract; (exit code, JSON summary)."""
        common = ["--config", str(self.config), "--dlq-topic", self.dlq, "--json"]
        code = replay_main([*common, "--contract", str(self.fixed), *args])
        out = self.capsys.readouterr().out
        return code, json.loads(out.strip().splitlines()[-1])

    def dlq_count(self) -> int:
        return self.stream.produced(self.dlq)


@pytest.fixture
def setup(kafka_bootstrap: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Setup:
    return Setup(kafka_bootstrap, tmp_path, capsys)


def record_bytes(message: ReadMessage) -> int:
    """Key + value + header names and values of a record read back."""
    headers = sum(len(n.encode()) + len(v or b"") for n, v in message.headers)
    return len(message.key or b"") + len(message.value or b"") + headers


def test_half_megabyte_key_reaches_the_dlq_and_the_batch_flows(setup: Setup) -> None:
    """A record with a 500 KB key is quarantined within the limit; the records around it
    flow and the service commits past it (it used to retry that batch forever)."""
    huge_key = os.urandom(500_000)
    messages: list[tuple[bytes | None, bytes | None, Any]] = [
        (f"k{i}".encode(), encode(tick(i)), None) for i in range(5)
    ]
    messages.append((huge_key, b"not json", [("h", b"1")]))
    messages += [(f"k{i}".encode(), encode(tick(i)), None) for i in range(5, 10)]
    produce(setup.bootstrap, setup.source, messages)
    with ThreadedService.from_file(setup.config):
        wait_until(setup.stream.all_consumed, 60, "commit")
    (dlq,) = read_topic(setup.bootstrap, setup.dlq)
    assert record_bytes(dlq) <= LIMIT
    assert len(read_topic(setup.bootstrap, setup.clean)) == 10
    _, summary = setup.replay("--to", setup.target)
    assert summary["unreplayable_by_reason"] == {}, summary
    assert summary["outcomes"]["still_failing"] == 1  # recovered intact, still not JSON


def test_escaping_heavy_payload_is_replayed_byte_for_byte(setup: Setup) -> None:
    """A 900 KB payload that doubles under JSON escaping (and a binary one) goes to the DLQ
    as the original bytes with sv.dlq.* headers; replay sends exactly those bytes on."""
    quoted = encode(tick(1, price=-1.0, note='"' * 450_000))
    produce(setup.bootstrap, setup.source, [(b"q", quoted, [("trace", b"\xff\x00")])])
    produce(setup.bootstrap, setup.source, [(b"b", os.urandom(900_000), None)])
    with ThreadedService.from_file(setup.config):
        wait_until(lambda: setup.dlq_count() >= 2, 60, "both records quarantined")
    dlq = read_topic(setup.bootstrap, setup.dlq)
    assert [dict(m.headers)["sv.dlq.format"] for m in dlq] == [b"headers", b"headers"]
    assert all(record_bytes(m) <= LIMIT for m in dlq)
    _, summary = setup.replay("--to", setup.target)
    assert summary["unreplayable_by_reason"] == {}, summary
    assert summary["outcomes"]["replayed"] == 1 and summary["outcomes"]["still_failing"] == 1
    (sent,) = read_topic(setup.bootstrap, setup.target, isolation_level="read_committed")
    assert (sent.key, sent.value) == (b"q", quoted)
    assert sent.headers[0] == ("trace", b"\xff\x00")


def test_replay_to_source_stops_at_max_replays(setup: Setup) -> None:
    """With the service still rejecting them, five --to source rounds with --max-replays 2
    send each of 100 records at most twice (it used to be five times)."""
    produce(
        setup.bootstrap,
        setup.source,
        [(f"k{i}".encode(), encode(tick(i, price=-1.0)), None) for i in range(100)],
    )
    with ThreadedService.from_file(setup.config):
        wait_until(lambda: setup.dlq_count() >= 100, 60, "100 quarantined")
        for _ in range(5):
            before = setup.dlq_count()
            _, summary = setup.replay("--to", "source", "--max-replays", "2")
            sent = summary["outcomes"]["replayed"]
            want = before + sent
            wait_until(lambda want=want: setup.dlq_count() >= want, 60, "re-quarantined")
    seqs = Counter(
        json.loads(m.value or b"")["seq"] for m in read_topic(setup.bootstrap, setup.source)
    )
    assert set(seqs.values()) == {3}  # the original and two replays, for each record
    envelopes = [json.loads(m.value or b"") for m in read_topic(setup.bootstrap, setup.dlq)]
    assert Counter(e["replay_count"] for e in envelopes) == {0: 100, 1: 100, 2: 100}


def test_source_target_refuses_a_forged_source_topic(setup: Setup) -> None:
    """--to source never sends to a topic the route does not read, whatever the envelope says."""
    produce(setup.bootstrap, setup.source, [(b"k", encode(tick(1, price=-1.0)), None)])
    with ThreadedService.from_file(setup.config):
        wait_until(lambda: setup.dlq_count() >= 1, 60, "quarantined")
    (message,) = read_topic(setup.bootstrap, setup.dlq)
    envelope = json.loads(message.value or b"")
    envelope["source"]["topic"] = setup.target  # e.g. another team's topic
    produce(setup.bootstrap, setup.dlq, [(b"k", json.dumps(envelope).encode(), None)])
    _, summary = setup.replay("--to", "source")
    assert summary["unreplayable_by_reason"] == {"not_a_route_source": 1}
    assert summary["outcomes"]["replayed"] == 1  # the genuine envelope
    assert read_topic(setup.bootstrap, setup.target) == []
