"""Probes of the broker process and the machine: Java, process identity, memory, readiness."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from stream_validator.errors import DevBrokerError

_TOOL_TIMEOUT_S = 120.0


def find_java() -> str:
    """``$JAVA_HOME/bin/java`` if it exists, else ``java`` from ``PATH``."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        return str(Path(java_home) / "bin" / "java")
    found = shutil.which("java")
    if found is None:
        raise DevBrokerError("java is not on PATH (and JAVA_HOME is unset); Kafka needs Java 17+")
    return found


def run_tool(cmd: list[str], what: str) -> str:
    """Run a short-lived Kafka tool; its stdout, or an error carrying all it printed."""
    try:
        done = subprocess.run(
            cmd, capture_output=True, text=True, timeout=_TOOL_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise DevBrokerError(f"{what} failed: {exc}") from exc
    if done.returncode != 0:
        raise DevBrokerError(f"{what} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return done.stdout


def is_broker_process(pid: int, server_properties: Path) -> bool:
    """Whether ``pid`` is a live ``kafka.Kafka`` process started with ``server_properties``."""
    if not Path("/proc/self").exists():  # no procfs (macOS): trust the pid file
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    proc_dir = Path(f"/proc/{pid}")
    try:
        args = (proc_dir / "cmdline").read_bytes().split(b"\0")
        state = (proc_dir / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    ours = b"kafka.Kafka" in args and os.fsencode(server_properties) in args
    return ours and state != "Z"


def rss_bytes(pid: int) -> int | None:
    """Resident memory of ``pid`` (``VmRSS`` from procfs), or ``None`` if unknown."""
    try:
        status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return None


def answers_metadata(bootstrap: str) -> bool:
    """Whether the broker serves metadata (its PLAINTEXT port opens only once it serves)."""
    host, port = bootstrap.rsplit(":", 1)
    try:
        # Cheap first: an AdminClient aimed at a closed port would log connection errors.
        with socket.create_connection((host, int(port)), timeout=1.0):
            pass
    except OSError:
        return False
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        metadata = admin.list_topics(timeout=5.0)
    except KafkaException:
        return False
    return bool(metadata.brokers)
