"""Running the validator service against the real broker, in-process or as a subprocess:
the set-up of one route's topics and config (``new_stream``), waiting on conditions
(``wait_until``), and the service on a thread or as a process."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from kafka_helpers import (
    IsolationLevel,
    committed_offsets,
    create_topic,
    end_offsets,
    produce,
    read_topic,
    unique_group,
)

from stream_validator.config.settings import ServiceConfig, load_config
from stream_validator.registry.decoder import RecordDecoder
from stream_validator.service.loop import StreamService
from stream_validator.service.report.hooks import ServiceHooks
from tests.support.ticks import tick

REPO = Path(__file__).resolve().parents[2]
CONTRACTS = REPO / "config" / "contracts"


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def encode(record: object) -> bytes:
    """Compact JSON bytes of a record."""
    return json.dumps(record, separators=(",", ":")).encode()


def write_config(
    tmp_path: Path,
    bootstrap: str,
    routes: list[dict[str, Any]],
    *,
    group: str,
    **sections: Mapping[str, Any],
) -> Path:
    """A service config file for the test broker; returns its path."""
    document: dict[str, Any] = {
        "kafka": {
            "bootstrap_servers": bootstrap,
            "group_id": group,
            "settings": {},
            "producer": {"message.timeout.ms": "10000"},
        },
        "batch": {"max_records": 200, "timeout_s": 0.2},
        "service": {
            "health_port": free_port(),
            "shutdown_timeout_s": 20,
            "retry_backoff_s": 0.2,
            "retry_backoff_max_s": 1.0,
            "startup_check_timeout_s": 2.0,
        },
        "metrics": {"enabled": True, "port": 0},
        "routes": routes,
    }
    for name, values in sections.items():
        document.setdefault(name, {}).update(values)
    path = tmp_path / f"service-{group}.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def route(
    name: str, source: str, clean: str, dlq: str, contract: str = "tick.yaml", **extra: object
) -> dict[str, Any]:
    """One route entry."""
    return {
        "name": name,
        "source_topics": [source],
        "contract": str(CONTRACTS / contract),
        "clean_topic": clean,
        "dlq_topic": dlq,
        **extra,
    }


def all_consumed(bootstrap: str, group: str, source: str) -> bool:
    """True when the group committed the end offset of every source partition."""
    return committed_offsets(bootstrap, group, source) == end_offsets(bootstrap, source)


@dataclass(frozen=True)
class Stream:
    """One route on the test broker: its topics, a fresh consumer group, the config file."""

    bootstrap: str
    source: str
    clean: str
    dlq: str
    group: str
    config: Path

    def all_consumed(self) -> bool:
        """True when the group committed the end offset of every source partition."""
        return all_consumed(self.bootstrap, self.group, self.source)

    def produced(self, topic: str) -> int:
        """How many records `topic` holds (its end offsets, summed)."""
        return sum(end_offsets(self.bootstrap, topic).values())

    def fill(self, count: int) -> None:
        """`count` ticks keyed k0, k1, ...; every hundredth (i % 100 == 3) is garbage."""
        values = [b"garbage" if i % 100 == 3 else encode(tick(i)) for i in range(count)]
        messages = [(f"k{i}".encode(), v, None) for i, v in enumerate(values)]
        produce(self.bootstrap, self.source, messages)

    def outputs_by_source(
        self, isolation_level: IsolationLevel = "read_uncommitted"
    ) -> Counter[tuple[int, int]]:
        """How often each source (partition, offset) appears across clean and DLQ; every
        source record must appear (records are told apart by their unique keys)."""
        coords = {m.key: (m.partition, m.offset) for m in read_topic(self.bootstrap, self.source)}
        seen: Counter[tuple[int, int]] = Counter(
            coords[m.key]
            for m in read_topic(self.bootstrap, self.clean, isolation_level=isolation_level)
        )
        for message in read_topic(self.bootstrap, self.dlq, isolation_level=isolation_level):
            envelope = json.loads(message.value or b"")
            seen[(envelope["source"]["partition"], envelope["source"]["offset"])] += 1
        assert set(seen) == set(coords.values()), "some source records have no output"
        return seen


def new_stream(
    bootstrap: str,
    tmp_path: Path,
    *,
    partitions: int = 1,
    clean_config: Mapping[str, str] | None = None,
    dlq_config: Mapping[str, str] | None = None,
    route_options: Mapping[str, object] | None = None,
    **sections: Mapping[str, Any],
) -> Stream:
    """Fresh source and clean topics (`partitions` each), a one-partition DLQ topic, a fresh
    group and a config (write_config's, plus `sections`) routing them with the tick contract
    (or route_options["contract"])."""
    source = create_topic(bootstrap, partitions, prefix="src")
    clean = create_topic(bootstrap, partitions, prefix="clean", config=clean_config)
    dlq = create_topic(bootstrap, 1, prefix="dlq", config=dlq_config)
    group = unique_group("svc")
    routes = [route("ticks", source, clean, dlq, **(route_options or {}))]
    config = write_config(tmp_path, bootstrap, routes, group=group, **sections)
    return Stream(bootstrap, source, clean, dlq, group, config)


def wait_until(
    predicate: Callable[[], bool], timeout: float, what: str, interval: float = 0.2
) -> None:
    """Poll until predicate() is true; fail with `what` after timeout seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


class ServiceLog(logging.Handler):
    """The messages the service logs in this process while the block runs (attached to the
    service's own logger, so the CLI turning propagation off does not hide them)."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []
        self._logger = logging.getLogger("stream_validator.service")

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())

    def saw(self, text: str) -> bool:
        return any(text in message for message in list(self.messages))

    def __enter__(self) -> ServiceLog:
        self._logger.addHandler(self)
        return self

    def __exit__(self, *_: object) -> None:
        self._logger.removeHandler(self)


class ThreadedService:
    """StreamService on a background thread (no signal handlers, no HTTP)."""

    def __init__(
        self,
        config: ServiceConfig,
        hooks: ServiceHooks | None = None,
        decoders: Mapping[str, RecordDecoder] | None = None,
    ) -> None:
        self.service = StreamService(config, hooks=hooks, decoders=decoders)
        self.exit_code: int | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)

    @classmethod
    def from_file(cls, path: Path, hooks: ServiceHooks | None = None) -> ThreadedService:
        return cls(load_config(path, environ={}), hooks)

    def _run(self) -> None:
        self.exit_code = self.service.run()

    def finished(self) -> bool:
        """True once run() returned (exit_code is set)."""
        return not self._thread.is_alive()

    def __enter__(self) -> ThreadedService:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def stop(self, timeout: float = 30.0) -> int | None:
        self.service.stop()
        self._thread.join(timeout)
        assert not self._thread.is_alive(), "service thread did not stop"
        return self.exit_code


class ServiceProcess:
    """`python -m stream_validator run` as a real process, logs captured to a file."""

    def __init__(
        self, config_path: Path, log_path: Path, env: Mapping[str, str] | None = None
    ) -> None:
        self.config_path = config_path
        self.log_path = log_path
        self.health_port = int(yaml.safe_load(config_path.read_text())["service"]["health_port"])
        self._env = {**os.environ, **(env or {})}
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> ServiceProcess:
        log = self.log_path.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "stream_validator", "run", "--config", str(self.config_path)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=self._env,
            cwd=REPO,
        )
        log.close()
        return self

    def get(self, path: str) -> tuple[int, dict[str, Any]]:
        """GET a health endpoint: (status, JSON body); (0, {}) when not reachable."""
        url = f"http://127.0.0.1:{self.health_port}{path}"
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"{}")
        except OSError:
            return 0, {}

    def ready(self) -> bool:
        return self.get("/readyz")[0] == 200

    def status(self) -> dict[str, Any]:
        return self.get("/status")[1]

    def commits(self) -> int:
        """Offset commits (transactions in exactly-once mode) so far, from /status; 0 when
        the endpoint does not answer."""
        return int(self.status().get("commits", 0))

    def reports_not_ready(self) -> bool:
        """True when /status answers and says not ready (the service saw a broker error)."""
        return self.status().get("ready") is False

    def reports_stuck(self) -> bool:
        """True when /status answers and says not live: the loop has not come round within
        service.liveness_timeout_s (it is blocked)."""
        return self.status().get("live") is False

    def signal(self, signum: int) -> None:
        assert self.proc is not None
        self.proc.send_signal(signum)

    def wait(self, timeout: float) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def logs(self) -> str:
        return self.log_path.read_text(errors="replace")

    def log_events(self) -> Iterable[dict[str, Any]]:
        for line in self.logs().splitlines():
            if line.startswith("{"):
                yield json.loads(line)


def assigned(service: ServiceProcess) -> int:
    """How many partitions the instance holds, from its rebalance log events."""
    held: set[tuple[str, int]] = set()
    for event in service.log_events():
        keys = {(t, p) for t, p in event.get("partitions", [])}
        if event.get("msg") == "partitions assigned":
            held |= keys
        elif event.get("msg") in ("partitions revoked", "partitions lost"):
            held -= keys
    return len(held)
