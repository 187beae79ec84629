"""A real Schema Registry (Apicurio Registry 3, Confluent-compatible API) for development.

``LocalSchemaRegistry`` owns one state directory and the one ``java`` process started for it
(its pid file, spawn, stop and kill: ``javaprocess.LocalJavaProcess``, as for the local Kafka
broker). The pid file is trusted only while that pid still runs ``quarkus-run.jar`` with this
directory's ``registry.properties``; nothing here looks processes up by name.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
import urllib.error
import urllib.request
from pathlib import Path

from stream_validator.devbroker.javaprocess import LocalJavaProcess
from stream_validator.devbroker.process import find_java, is_java_process
from stream_validator.devbroker.registryapp import (
    APICURIO_VERSION,
    MIN_JAVA,
    RUN_JAR,
    fetch_registry_app,
)
from stream_validator.devbroker.registrysettings import (
    CCOMPAT_PATH,
    DEFAULT_REGISTRY_HEAP,
    RegistryLayout,
    ccompat_url,
    config_location_arg,
    parse_registry_ports,
    registry_command,
    registry_jvm_opts,
    registry_settings,
    render_registry_properties,
)
from stream_validator.devbroker.settings import LOOPBACK, pick_free_ports, tail
from stream_validator.errors import DevBrokerError

_POLL_S = 0.2
_BIND_ATTEMPTS = 3
_PORT_TAKEN = ("Address already in use", "Port already bound")
# Loopback probes never go through an http_proxy from the environment.
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class _PortTakenError(DevBrokerError):
    """The registry could not bind a port that was free when it was picked."""


class LocalSchemaRegistry(LocalJavaProcess):
    """One Apicurio Registry on loopback, its configuration, log and pid file under ``state_dir``.

    A restart on the same state directory reuses the ports of the last start while they are
    free, so the URL stays the same. Schemas live in memory unless started with
    ``keep_data`` (an H2 file in ``<state_dir>/data``, kept across restarts).
    """

    def __init__(
        self,
        state_dir: Path | str,
        *,
        port: int | None = None,
        management_port: int | None = None,
        heap: str = DEFAULT_REGISTRY_HEAP,
        startup_timeout: float = 180.0,
        version: str = APICURIO_VERSION,
        cache_root: Path | None = None,
    ) -> None:
        self.layout = RegistryLayout(Path(state_dir).absolute())
        self._port = port
        self._management_port = management_port
        self.heap = heap
        self.startup_timeout = startup_timeout
        self.version = version
        self._cache_root = cache_root

    @property
    def url(self) -> str:
        """The Confluent-compatible API URL of the registry last started from this directory."""
        return ccompat_url(self._recorded_ports()[0])

    @property
    def management_url(self) -> str:
        """Where ``/health/ready`` and ``/metrics`` are served."""
        return f"http://{LOOPBACK}:{self._recorded_ports()[1]}"

    def start(self, *, keep_data: bool = False) -> str:
        """Start the registry and wait until its API answers; return the API URL.

        Already running: returns its URL. Java 21+ is looked for before anything is fetched.
        """
        if self.is_running():
            return self.url
        java = find_java(MIN_JAVA)
        app = fetch_registry_app(self.version, root=self._cache_root)
        self.layout.root.mkdir(parents=True, exist_ok=True)
        attempts_left = _BIND_ATTEMPTS if self._port is None or self._management_port is None else 1
        while True:
            port, management_port = self._choose_ports()
            data_dir = self.layout.data_dir if keep_data else None
            if data_dir is not None:
                data_dir.mkdir(exist_ok=True)
            settings = registry_settings(port, management_port, data_dir=data_dir)
            self.layout.properties.write_text(
                render_registry_properties(settings), encoding="utf-8"
            )
            self.layout.ports_file.write_text(f"{port} {management_port}\n", encoding="utf-8")
            try:
                self._spawn_registry(java, app / RUN_JAR)
                self._wait_until_ready(port, management_port)
            except _PortTakenError:
                self.layout.ports_file.unlink(missing_ok=True)  # pick fresh ones next time
                attempts_left -= 1
                if attempts_left == 0:
                    raise
                continue
            return ccompat_url(port)

    def restart(self, *, keep_data: bool = False) -> str:
        """Stop (gracefully) if running, then start again on the same ports."""
        self.stop()
        return self.start(keep_data=keep_data)

    def _recorded_ports(self) -> tuple[int, int]:
        try:
            return parse_registry_ports(self.layout.ports_file.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            raise DevBrokerError(f"no registry was started in {self.layout.root}") from None

    def _choose_ports(self) -> tuple[int, int]:
        if self._port is not None and self._management_port is not None:
            return self._port, self._management_port
        wanted = (self._port, self._management_port)
        with contextlib.suppress(DevBrokerError):
            recorded = self._recorded_ports()
            if all(_bindable(p) for p in recorded):
                chosen = tuple(
                    w if w is not None else r for w, r in zip(wanted, recorded, strict=True)
                )
                if chosen[0] != chosen[1]:
                    return chosen[0], chosen[1]
        free = iter(pick_free_ports(3))
        port = self._port if self._port is not None else next(free)
        management = self._management_port if self._management_port is not None else next(free)
        if management == port:
            management = next(free)
        return port, management

    def _spawn_registry(self, java: str, run_jar: Path) -> None:
        cmd = registry_command(
            java, run_jar, self.layout.properties, jvm_opts=registry_jvm_opts(self.heap)
        )
        self._spawn(cmd, self.layout.log, self.layout.root, append_log=True)

    def _wait_until_ready(self, port: int, management_port: int) -> None:
        health = f"http://{LOOPBACK}:{management_port}/health/ready"
        subjects = f"http://{LOOPBACK}:{port}{CCOMPAT_PATH}/subjects"
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            code = self._exit_code()
            if code is not None:
                self.layout.pid_file.unlink(missing_ok=True)
                last = tail(self.layout.log)
                taken = any(marker in last for marker in _PORT_TAKEN)
                raise (_PortTakenError if taken else DevBrokerError)(
                    f"the Schema Registry exited with code {code} while starting; "
                    f"last lines of {self.layout.log}:\n{last}"
                )
            if _answers(health) and _answers(subjects):
                return
            time.sleep(_POLL_S)
        self.kill()
        raise DevBrokerError(
            f"the Schema Registry was not ready on {health} within {self.startup_timeout:.0f}s "
            f"(killed it); last lines of {self.layout.log}:\n{tail(self.layout.log)}"
        )

    def _pid_file(self) -> Path:
        return self.layout.pid_file

    def _runs_here(self, pid: int) -> bool:
        marker = os.fsencode(config_location_arg(self.layout.properties))
        return is_java_process(pid, b"-jar", marker)


def _answers(url: str) -> bool:
    """Whether ``url`` answers 200 within two seconds."""
    try:
        with _DIRECT.open(url, timeout=2.0) as response:
            return int(response.status) == 200
    except urllib.error.HTTPError as exc:  # 503 while starting: it holds an open response
        exc.close()
        return False
    except (OSError, ValueError):
        return False


def _bindable(port: int) -> bool:
    """Whether a listener could bind ``port`` now (as the JVM does: SO_REUSEADDR, so the
    TIME_WAIT connections of the registry just stopped do not count)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((LOOPBACK, port))
        except OSError:
            return False
    return True
