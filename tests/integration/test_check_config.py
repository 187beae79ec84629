"""``check-config --connect`` against the real broker: missing topics, then all present."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from kafka_helpers import unique_name
from service_helpers import route, write_config

from stream_validator.cli.main import main

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def test_connect_names_the_missing_topics_until_create_topics_made_them(
    kafka_bootstrap: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before create-topics every topic is named missing (exit 2); after it, exit 0."""
    source, clean, dlq = (unique_name(p) for p in ("src", "clean", "dlq"))
    config = str(
        write_config(
            tmp_path, kafka_bootstrap, [route("r", source, clean, dlq)], group=unique_name("g")
        )
    )
    assert main(["check-config", config, "--connect", "--timeout", "20"]) == 2
    missing = ", ".join(sorted((source, clean, dlq)))
    assert capsys.readouterr().err == (
        f"stream-validator: error: Kafka at {kafka_bootstrap}: 3 of 3 topic(s) missing:"
        f" {missing} (create them with: stream-validator create-topics --config {config})\n"
    )
    assert main(["create-topics", "--config", config, "--partitions", "1"]) == 0
    capsys.readouterr()
    assert main(["check-config", config, "--connect", "--timeout", "20"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == f"OK Kafka at {kafka_bootstrap}: all 3 topic(s) exist"


def test_connect_asks_the_real_registry_and_names_a_closed_port(
    kafka_bootstrap: str,
    schema_registry_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A Protobuf route: the dev registry answers (exit 0, an OK line); the same config with
    the registry's URL on a closed port is exit 2 naming it, the broker still checked."""
    source, clean, dlq = (unique_name(p) for p in ("src", "clean", "dlq"))
    ticks = route("r", source, clean, dlq, format="protobuf")

    def config(url: str) -> str:
        return str(
            write_config(
                tmp_path, kafka_bootstrap, [ticks], group="g", schema_registry={"url": url}
            )
        )

    assert main(["create-topics", "--config", config(schema_registry_url)]) == 0
    capsys.readouterr()
    assert main(["check-config", config(schema_registry_url), "--connect"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-2] == f"OK Kafka at {kafka_bootstrap}: all 3 topic(s) exist"
    assert out[-1].startswith(f"OK the schema registry at {schema_registry_url}: answers, ")
    assert out[-1].endswith(" subject(s) (for protobuf routes)")

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/apis/ccompat/v7"
    assert main(["check-config", config(closed), "--connect", "--timeout", "5"]) == 2
    captured = capsys.readouterr()
    assert captured.out.splitlines()[-1] == f"OK Kafka at {kafka_bootstrap}: all 3 topic(s) exist"
    assert captured.err.startswith(
        f"stream-validator: error: the schema registry at {closed} cannot be reached: "
    )
