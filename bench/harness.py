"""What the broker benchmarks share: the broker, topics, the source fill and pinned peer processes.

Used by bench_peers.py, bench_latency.py, bench_rss.py and bench_service.py (run them as
scripts: bench/ is on their sys.path). Every peer is `python bench/peers.py PEER ...` in its
own process, pinned to one core with taskset when taskset is installed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
QUIX_PYTHON = REPO / ".venv-quix" / "bin" / "python"
LABELS = {
    "passthrough": "pass-through: consume(1000) -> produce same bytes",
    "passthrough-reported": "pass-through with a delivery report per record (ignored)",
    "bare": "bare loop: consume(500, 0.1) -> produce same bytes",
    "naive": "naive: json.loads + checks, DLQ via json.dumps",
    "quix": "Quix Streams + strict pydantic, DLQ topic",
    "service": "stream_validator, at-least-once, defaults",
    "service-eos": "stream_validator, exactly-once, defaults",
}


def label(peer: str) -> str:
    """A peer's row label; ``service:linger_s=0.005,max_records=2000`` runs the service with
    those ``batch`` settings (bench/peers.py) and says so; ``...@DIR`` runs the service from
    the source tree DIR (e.g. ``git worktree add /tmp/main main``: before/after in one run)."""
    peer, _, tree = peer.partition("@")
    base, _, settings = peer.partition(":")
    text = LABELS.get(base, base)
    text = f"{text}, batch {settings.replace(',', ', ')}" if settings else text
    return f"{text}, from {tree}" if tree else text


def topic_safe(peer: str) -> str:
    """The peer name as a topic-name part (``service:linger_s=0.005`` has ':' and '=')."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in peer)


def batch_settings(peer: str) -> dict[str, float]:
    """The ``batch`` settings of a ``service:key=value,...`` peer name."""
    settings = peer.partition(":")[2]
    out: dict[str, float] = {}
    for item in filter(None, settings.split(",")):
        key, _, value = item.partition("=")
        out[key] = int(value) if value.isdigit() else float(value)
    return out


@contextlib.contextmanager
def broker() -> Iterator[str]:
    """Yield the bootstrap servers: KAFKA_BOOTSTRAP_SERVERS, else a local broker started here."""
    external = os.environ.get("KAFKA_BOOTSTRAP_SERVERS")
    if external:
        yield external
        return
    from stream_validator.devbroker.broker import LocalKafkaBroker

    with tempfile.TemporaryDirectory() as tmp:
        local = LocalKafkaBroker(Path(tmp) / "kafka")
        local.start()
        try:
            yield local.bootstrap_servers
        finally:
            local.stop()


def create_topics(bootstrap: str, names: list[str], partitions: int, log_append: bool) -> None:
    config = {"message.timestamp.type": "LogAppendTime"} if log_append else {}
    topics = [NewTopic(n, partitions, 1, config=config) for n in names]
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the results came
    for future in admin.create_topics(topics).values():
        future.result(30)


def fill(bootstrap: str, topic: str, payloads: Iterable[bytes]) -> int:
    """Produce every payload (keys SYM0..SYM499 in turn), flush, and return how many."""
    producer = Producer(
        {"bootstrap.servers": bootstrap, "linger.ms": 20, "enable.idempotence": True}
    )
    count = 0
    for count, value in enumerate(payloads, 1):
        while True:
            try:
                producer.produce(topic, value, f"SYM{count % 500}".encode())
                break
            except BufferError:
                producer.poll(0.1)
    if producer.flush(60) > 0:
        raise RuntimeError(f"fill: {len(producer)} records to {topic} not delivered within 60 s")
    return count


def peer_command(
    peer: str, bootstrap: str, source: str, clean: str, dlq: str, group: str, records: int
) -> list[str] | str:
    """The command line of one peer, or why it cannot run."""
    python = sys.executable
    if peer == "quix":
        if not QUIX_PYTHON.exists():
            return "not installed (bash bench/setup_quix.sh)"
        python = str(QUIX_PYTHON)
    peer, _, tree = peer.partition("@")
    prefix: list[str] = []
    if tree:  # env execs python: the same process, so its CPU time is still read
        if not (Path(tree) / "stream_validator").is_dir():
            return f"no stream_validator package in {tree}"
        prefix = ["env", f"PYTHONPATH={Path(tree).resolve()}"]
    return [
        *prefix,
        python,
        str(HERE / "peers.py"),
        peer,
        bootstrap,
        source,
        clean,
        dlq,
        group,
        str(records),
    ]


def pin_to_other_cores(core: int) -> None:
    """Keep this process (and the children it starts unpinned) off the peer's core, if it can."""
    others = os.sched_getaffinity(0) - {core}
    if others:
        os.sched_setaffinity(0, others)


@dataclass
class Child:
    """A process started pinned to one core; `wait` gives its CPU time from the kernel."""

    process: subprocess.Popen[bytes]
    started: float

    @classmethod
    def start(
        cls,
        command: list[str],
        core: int | None,
        stdin: int | None = None,
        stdout: int | None = None,
    ) -> Child:
        if core is not None and shutil.which("taskset"):
            command = ["taskset", "-c", str(core), *command]  # taskset execs: same pid
        process = subprocess.Popen(command, cwd=REPO, stdin=stdin, stdout=stdout)
        return cls(process, time.perf_counter())

    def exited(self) -> bool:
        """Whether it has ended, without reaping it (wait still reads its CPU time)."""
        flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
        return os.waitid(os.P_PID, self.process.pid, flags) is not None

    def wait(self, timeout_s: float) -> tuple[float, float, int]:
        """Wait (killing it after timeout_s); return (cpu seconds, wall seconds, exit status)."""
        # A peer that never finishes must not hang the bench.
        killer = threading.Timer(timeout_s, self.process.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(self.process.pid, 0)
        finally:
            killer.cancel()
        self.process.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - self.started
        return usage.ru_utime + usage.ru_stime, wall, self.process.returncode
