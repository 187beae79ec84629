"""``check-config --connect`` also asks the schema registry when a route has a registry format."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from stream_validator.cli.main import main
from stream_validator.kafka import clients
from stream_validator.kafka.fake import FakeAdmin, FakeBroker
from tests.support.registryformats import TICK_CONTRACT

SECRET = "s3cret-pw"


def write(tmp_path: Path, registry: dict[str, Any], fmt: str = "avro") -> str:
    contract = tmp_path / "tick.yaml"
    contract.write_text(TICK_CONTRACT)
    route = {
        "name": "ticks",
        "source_topics": ["in"],
        "contract": str(contract),
        "clean_topic": "out",
        "dlq_topic": "dlq",
        "format": fmt,
    }
    document = {
        "kafka": {"bootstrap_servers": "k:9092"},
        "schema_registry": registry,
        "routes": [route],
    }
    path = tmp_path / "service.yaml"
    path.write_text(yaml.safe_dump(document))
    return str(path)


@pytest.fixture(autouse=True)
def topics_exist(monkeypatch: pytest.MonkeyPatch) -> None:
    broker = FakeBroker()
    for topic in ("in", "out", "dlq"):
        broker.create_topic(topic, 1)
    monkeypatch.setattr(clients, "create_admin", lambda config, overrides=None: FakeAdmin(broker))


class _Refusing(BaseHTTPRequestHandler):
    """A registry that refuses every client, quoting what it was sent (as some proxies do)."""

    def do_GET(self) -> None:
        body = f'{{"error_code": 40101, "message": "refused {self.headers["Authorization"]}'
        body += f' ({SECRET})"}}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def refusing_registry() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_registry_that_answers_is_reported_ok(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A registry that lists its subjects: exit 0, one OK line naming it and the formats."""
    path = write(tmp_path, {"url": "mock://check-ok"})
    assert main(["check-config", path, "--connect"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[-1] == "OK the schema registry at mock://check-ok: answers, 0 subject(s)" + (
        " (for avro routes)"
    )


def test_an_unreachable_registry_is_exit_2_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing listening: exit 2, the registry's URL and what failed; the topics still OK."""
    url = f"http://127.0.0.1:{closed_port()}"
    path = write(tmp_path, {"url": url, "basic_auth_user": "u", "basic_auth_password": SECRET})
    assert main(["check-config", path, "--connect", "--timeout", "2"]) == 2
    captured = capsys.readouterr()
    assert captured.out.splitlines()[-1] == "OK Kafka at k:9092: all 3 topic(s) exist"
    assert captured.err.startswith(
        f"stream-validator: error: the schema registry at {url} cannot be reached: "
    )
    assert SECRET not in captured.err + captured.out


def test_refused_credentials_are_exit_2_and_scrubbed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], refusing_registry: str
) -> None:
    """A 401: exit 2 saying the credentials were refused; the answer (here echoing the
    Authorization header) and the password are never printed."""
    path = write(
        tmp_path,
        {"url": refusing_registry, "basic_auth_user": "u", "basic_auth_password": SECRET},
        fmt="protobuf",
    )
    assert main(["check-config", path, "--connect"]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        f"stream-validator: error: the schema registry at {refusing_registry} refused the"
        " credentials (HTTP 401)\n"
    )


def test_json_routes_do_not_ask_the_registry(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only JSON routes: the registry section is not contacted (nothing listens there)."""
    path = write(tmp_path, {"url": f"http://127.0.0.1:{closed_port()}"}, fmt="json")
    assert main(["check-config", path, "--connect", "--timeout", "2"]) == 0
    assert "schema registry" not in capsys.readouterr().out
