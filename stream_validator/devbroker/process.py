"""Probes of the broker process and the machine: Java, process identity, memory, readiness."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
from pathlib import Path

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from stream_validator.errors import DevBrokerError

_TOOL_TIMEOUT_S = 120.0
_JVM_DIR = Path("/usr/lib/jvm")


def find_java(min_version: int | None = None) -> str:
    """``$JAVA_HOME/bin/java`` if it exists, else ``java`` from ``PATH``.

    With ``min_version`` each of those must be at least that feature release, and when
    neither is, the newest JDK under ``/usr/lib/jvm`` that is; none: a DevBrokerError
    naming what was found.
    """
    candidates: list[str] = []
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / "java").is_file():
        candidates.append(str(Path(java_home) / "bin" / "java"))
    on_path = shutil.which("java")
    if on_path is not None:
        candidates.append(on_path)
    if min_version is None:
        if not candidates:
            raise DevBrokerError(
                "java is not on PATH (and JAVA_HOME is unset); Kafka needs Java 17+"
            )
        return candidates[0]
    candidates += _jvm_dir_javas()
    seen: list[str] = []
    for java in candidates:
        version = java_feature_version(java)
        if version is not None and version >= min_version:
            return java
        seen.append(f"{java} ({'unknown version' if version is None else version})")
    found = "; found: " + ", ".join(seen) if seen else "; no java found at all"
    raise DevBrokerError(
        f"Java {min_version} or newer is needed: set JAVA_HOME to such a JDK{found}"
    )


def _jvm_dir_javas() -> list[str]:
    """``/usr/lib/jvm/*/bin/java``, newest release first (Debian's and Temurin's layout)."""
    javas = [str(p) for p in _JVM_DIR.glob("*/bin/java") if p.is_file()]
    return sorted(javas, key=lambda j: java_feature_version(j) or 0, reverse=True)


def java_feature_version(java: str) -> int | None:
    """The feature release (17, 21, 25 ...) of a ``java`` binary from its JDK's ``release``
    file (no JVM started), or ``None`` when it cannot be read."""
    home = Path(java).resolve().parent.parent
    try:
        text = (home / "release").read_text(encoding="utf-8")
    except OSError:
        return None
    match = re.search(r'^JAVA_VERSION="(\d+)', text, re.MULTILINE)
    return int(match.group(1)) if match else None


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
    return is_java_process(pid, b"kafka.Kafka", os.fsencode(server_properties))


def is_java_process(pid: int, *markers: bytes) -> bool:
    """Whether ``pid`` is alive (not a zombie) and has every one of ``markers`` among its
    command-line arguments: how a pid file is trusted before any signal is sent."""
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
    return all(marker in args for marker in markers) and state != "Z"


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
