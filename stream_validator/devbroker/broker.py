"""A real single-node Apache Kafka broker (KRaft) run from cached Maven Central jars.

``LocalKafkaBroker`` owns one state directory and the one ``java`` process started for it (its
pid file, spawn, stop and kill: ``javaprocess.LocalJavaProcess``, shared with the local Schema
Registry). Before any signal the pid is checked to still be a Kafka broker run with this
directory's ``server.properties``, so a stale pid file never gets an unrelated process killed.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Mapping
from pathlib import Path

from stream_validator.devbroker.jars import KAFKA_VERSION, fetch_jars
from stream_validator.devbroker.javaprocess import LocalJavaProcess
from stream_validator.devbroker.process import (
    answers_metadata,
    find_java,
    is_broker_process,
    run_tool,
)
from stream_validator.devbroker.settings import (
    DEFAULT_HEAP,
    LOOPBACK,
    TOOL_JVM_OPTS,
    StateLayout,
    broker_jvm_opts,
    java_command,
    parse_ports,
    pick_free_ports,
    render_log4j2,
    render_properties,
    server_settings,
    tail,
)
from stream_validator.errors import DevBrokerError

_POLL_S = 0.1
_BIND_ATTEMPTS = 3


class _PortTakenError(DevBrokerError):
    """The broker could not bind a port that was free when it was picked."""


class LocalKafkaBroker(LocalJavaProcess):
    """One broker+controller node on loopback, its data and logs under ``state_dir``.

    ``settings`` override or add ``server.properties`` entries (say a smaller
    ``transaction.max.timeout.ms`` for a test); the ports and ``log.dirs`` are managed here.
    """

    def __init__(
        self,
        state_dir: Path | str,
        *,
        port: int | None = None,
        controller_port: int | None = None,
        heap: str = DEFAULT_HEAP,
        startup_timeout: float = 120.0,
        kafka_version: str = KAFKA_VERSION,
        jars_root: Path | None = None,
        settings: Mapping[str, str] | None = None,
    ) -> None:
        self.layout = StateLayout(Path(state_dir).absolute())
        self._port = port
        self._controller_port = controller_port
        self.heap = heap
        self.startup_timeout = startup_timeout
        self.kafka_version = kafka_version
        self._jars_root = jars_root
        self.extra_settings = dict(settings or {})

    @property
    def bootstrap_servers(self) -> str:
        """``127.0.0.1:<port>`` of the broker last started from this state directory."""
        try:
            return self.layout.bootstrap_file.read_text(encoding="utf-8").strip()
        except FileNotFoundError:
            raise DevBrokerError(f"no broker was started in {self.layout.root}") from None

    def start(self, *, keep_data: bool = False) -> str:
        """Start the broker and wait until it serves metadata; return the bootstrap address.

        Already running: returns its address. ``keep_data`` reuses a formatted data dir and
        its ports (a fresh one is formatted if there is none); otherwise the data dir is wiped
        and formatted anew.
        """
        if self.is_running():
            return self.bootstrap_servers
        libs = fetch_jars(self.kafka_version, root=self._jars_root)
        self.layout.root.mkdir(parents=True, exist_ok=True)
        if keep_data and self.layout.meta_properties.is_file():
            return self._launch(libs, *self._recorded_ports(), append_log=True)
        auto_ports = self._port is None or self._controller_port is None
        attempts_left = _BIND_ATTEMPTS if auto_ports else 1
        while True:
            port, controller_port = self._choose_ports()
            self._write_configs(port, controller_port)
            self._format(libs)
            try:
                return self._launch(libs, port, controller_port, append_log=False)
            except _PortTakenError:
                # Another process took a picked port before the broker bound it: pick again.
                attempts_left -= 1
                if attempts_left == 0:
                    raise

    def restart(self) -> str:
        """Stop (gracefully) if running, then start again on the same ports and data."""
        self.stop()
        return self.start(keep_data=True)

    def _choose_ports(self) -> tuple[int, int]:
        if self._port is not None and self._controller_port is not None:
            return self._port, self._controller_port
        free = iter(pick_free_ports(2))
        port = self._port if self._port is not None else next(free)
        controller = self._controller_port if self._controller_port is not None else next(free)
        if port == controller:
            controller = next(free)
        return port, controller

    def _recorded_ports(self) -> tuple[int, int]:
        try:
            recorded = parse_ports(self.layout.ports_file.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError) as exc:
            raise DevBrokerError(f"cannot reuse {self.layout.data_dir}: {exc}") from exc
        wanted = (self._port, self._controller_port)
        for want, have in zip(wanted, recorded, strict=True):
            if want is not None and want != have:
                raise DevBrokerError(
                    f"{self.layout.data_dir} was formatted for ports {recorded}; "
                    f"start without keeping data to use other ports"
                )
        return recorded

    def _write_configs(self, port: int, controller_port: int) -> None:
        settings = server_settings(port, controller_port, self.layout.data_dir)
        settings.update(self.extra_settings)
        self.layout.server_properties.write_text(render_properties(settings), encoding="utf-8")
        self.layout.broker_log4j.write_text(render_log4j2("INFO", to_stderr=False))
        self.layout.tools_log4j.write_text(render_log4j2("WARN", to_stderr=True))
        self.layout.ports_file.write_text(f"{port} {controller_port}\n", encoding="utf-8")

    def _format(self, libs: Path) -> None:
        data = self.layout.data_dir
        if data.exists() and any(data.iterdir()) and not self.layout.meta_properties.exists():
            # --state-dir pointed at the wrong place: never wipe what is not a Kafka data dir.
            raise DevBrokerError(f"{data} exists and is not a Kafka data dir; refusing to wipe it")
        shutil.rmtree(data, ignore_errors=True)
        cluster_id = self._storage_tool(libs, "random-uuid").strip()
        self._storage_tool(
            libs,
            "format",
            "--standalone",
            "--cluster-id",
            cluster_id,
            "--config",
            str(self.layout.server_properties),
        )

    def _storage_tool(self, libs: Path, *args: str) -> str:
        cmd = java_command(
            find_java(),
            libs,
            self.layout.tools_log4j,
            "kafka.tools.StorageTool",
            *args,
            jvm_opts=TOOL_JVM_OPTS,
        )
        return run_tool(cmd, f"kafka.tools.StorageTool {args[0]}")

    def _launch(self, libs: Path, port: int, controller_port: int, *, append_log: bool) -> str:
        if append_log:
            self._write_configs(port, controller_port)
        bootstrap = f"{LOOPBACK}:{port}"
        self._spawn_broker(libs, append_log=append_log)
        self.layout.bootstrap_file.write_text(bootstrap + "\n", encoding="utf-8")
        self._wait_until_ready(bootstrap)
        return bootstrap

    def _spawn_broker(self, libs: Path, *, append_log: bool) -> None:
        cmd = java_command(
            find_java(),
            libs,
            self.layout.broker_log4j,
            "kafka.Kafka",
            str(self.layout.server_properties),
            jvm_opts=broker_jvm_opts(self.heap),
        )
        self._spawn(cmd, self.layout.broker_log, self.layout.root, append_log=append_log)

    def _wait_until_ready(self, bootstrap: str) -> None:
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            code = self._exit_code()
            if code is not None:
                self.layout.pid_file.unlink(missing_ok=True)
                last = tail(self.layout.broker_log)
                error = _PortTakenError if "Address already in use" in last else DevBrokerError
                raise error(
                    f"Kafka broker exited with code {code} while starting; "
                    f"last lines of {self.layout.broker_log}:\n{last}"
                )
            if answers_metadata(bootstrap):
                return
            time.sleep(_POLL_S)
        self.kill()
        raise DevBrokerError(
            f"Kafka broker did not answer on {bootstrap} within {self.startup_timeout:.0f}s "
            f"(killed it); last lines of {self.layout.broker_log}:\n{tail(self.layout.broker_log)}"
        )

    def _pid_file(self) -> Path:
        return self.layout.pid_file

    def _runs_here(self, pid: int) -> bool:
        return is_broker_process(pid, self.layout.server_properties)
