"""``check-config``: every problem of a config and its contracts, and with --connect its topics."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from stream_validator.cli.main import main
from stream_validator.errors import KafkaClientError, KafkaErrorInfo
from stream_validator.kafka import clients
from stream_validator.kafka.fake import FakeAdmin, FakeBroker

REPO = Path(__file__).resolve().parents[3]
TICK = str(REPO / "config" / "contracts" / "tick.yaml")


def write(tmp_path: Path, **changes: Any) -> str:
    route = {
        "name": "ticks",
        "source_topics": ["in"],
        "contract": TICK,
        "clean_topic": "out",
        "dlq_topic": "dlq",
    }
    document: dict[str, Any] = {"kafka": {"bootstrap_servers": "k:9092"}, "routes": [route]}
    document.update(changes)
    path = tmp_path / "service.yaml"
    path.write_text(yaml.safe_dump(document))
    return str(path)


def fake_admin(monkeypatch: pytest.MonkeyPatch, *topics: str) -> None:
    broker = FakeBroker()
    for topic in topics:
        broker.create_topic(topic, 1)
    monkeypatch.setattr(clients, "create_admin", lambda config, overrides=None: FakeAdmin(broker))


def test_a_good_config_exits_0_with_a_summary_of_its_routes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A valid config prints its routes, topics and contracts and exits 0."""
    path = write(tmp_path)
    assert main(["check-config", path]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"OK {path}: 1 route(s), 3 topic(s)"
    assert out[1].startswith("  ticks: in -> out (DLQ dlq); contract 'tick' version '1'")


def test_every_problem_is_listed_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three problems of three sections are three lines of one error, exit 2."""
    path = write(tmp_path, batch={"max_records": 0}, service={"health_port": -1}, metrics={"x": 1})
    assert main(["check-config", path]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"stream-validator: error: {path}: 3 problems:"
    assert [line.split(":")[0].strip() for line in err[1:]] == [
        "batch.max_records",
        "service.health_port",
        "metrics",
    ]


def test_connect_with_every_topic_present_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--connect finds the source, clean and DLQ topics and says so."""
    fake_admin(monkeypatch, "in", "out", "dlq")
    assert main(["check-config", write(tmp_path), "--connect"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "OK Kafka at k:9092: all 3 topic(s) exist"


def test_a_missing_topic_names_it_and_create_topics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A missing DLQ topic is exit 2 with its name and the command that creates it."""
    fake_admin(monkeypatch, "in", "out")
    path = write(tmp_path)
    assert main(["check-config", path, "--connect"]) == 2
    assert capsys.readouterr().err == (
        "stream-validator: error: Kafka at k:9092: 1 of 3 topic(s) missing: dlq"
        f" (create them with: stream-validator create-topics --config {path})\n"
    )


def test_an_unreachable_broker_is_exit_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A broker that does not answer within --timeout is exit 2 with its address."""

    class Down(FakeAdmin):
        def topics(self, timeout_s: float) -> dict[str, int]:
            raise KafkaClientError(KafkaErrorInfo("_TRANSPORT", "down"), "list_topics")

    monkeypatch.setattr(clients, "create_admin", lambda config, overrides=None: Down(FakeBroker()))
    assert main(["check-config", write(tmp_path), "--connect", "--timeout", "0.5"]) == 2
    assert capsys.readouterr().err.startswith("stream-validator: error: Kafka at k:9092: ")
