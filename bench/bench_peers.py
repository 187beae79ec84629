"""Side by side on the local broker: pass-through, naive json.loads, Quix Streams, the service.

Run: .venv/bin/python bench/bench_peers.py [--records 300000] [--core 1]
     (Quix Streams runs from its own virtualenv: bash bench/setup_quix.sh creates .venv-quix;
     without it the Quix row is left out and the table says so.)

One broker (the project's local broker, or KAFKA_BOOTSTRAP_SERVERS), RECORDS ticks (~1 % bad)
pre-loaded into a 4-partition topic. Each peer runs as its own process pinned to one core
(taskset), with a fresh consumer group and its own clean and DLQ topics. Those topics use
LogAppendTime, so "records/s" is measured the same way for every peer, by the broker: outputs
divided by the time from the first output to the last. CPU µs per record is the peer
process's user + system time (start-up included) over the records. Every peer must account
for every input (clean + DLQ == RECORDS) or its row is marked.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
QUIX_PYTHON = REPO / ".venv-quix" / "bin" / "python"
PEERS = ("passthrough", "naive", "quix", "service", "service-eos")
LABELS = {
    "passthrough": "pass-through: consume(1000) -> produce same bytes",
    "naive": "naive: json.loads + checks, DLQ via json.dumps",
    "quix": "Quix Streams + strict pydantic, DLQ topic",
    "service": "stream_validator, at-least-once, defaults",
    "service-eos": "stream_validator, exactly-once, defaults",
}


@dataclass
class Row:
    peer: str
    outputs: int
    span_s: float
    cpu_s: float
    wall_s: float

    def rate(self) -> float:
        return self.outputs / self.span_s if self.span_s > 0 else float("nan")


def _create(admin: AdminClient, names: list[str], partitions: int, log_append: bool) -> None:
    config = {"message.timestamp.type": "LogAppendTime"} if log_append else {}
    topics = [NewTopic(n, partitions, 1, config=config) for n in names]
    for future in admin.create_topics(topics).values():
        future.result(30)


def _read_outputs(bootstrap: str, topics: list[str], partitions: int) -> tuple[int, int, int]:
    """Count the records of the topics and their first and last broker timestamps (ms)."""
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "bench-reader", "enable.auto.commit": False}
    )
    count, first, last = 0, 2**63, 0
    try:
        tps = [TopicPartition(t, p, OFFSET_BEGINNING) for t in topics for p in range(partitions)]
        ends = {(tp.topic, tp.partition): consumer.get_watermark_offsets(tp, 10)[1] for tp in tps}
        remaining = {k for k, end in ends.items() if end > 0}
        consumer.assign(tps)
        while remaining:
            messages = consumer.consume(10_000, 1.0)
            if not messages:
                # Transactional outputs end with a control marker that is never delivered:
                # the position past it tells that a partition was read to its end.
                for tp in consumer.position([TopicPartition(t, p) for t, p in remaining]):
                    if tp.offset >= ends[(tp.topic, tp.partition)]:
                        remaining.discard((tp.topic, tp.partition))
            for message in messages:
                if message.error() is not None:
                    continue
                count += 1
                _, ts = message.timestamp()
                first, last = min(first, ts), max(last, ts)
                key = (message.topic(), message.partition())
                if message.offset() + 1 >= ends[key]:
                    remaining.discard(key)
    finally:
        consumer.close()
    return count, first, last


def _run_child(command: list[str], core: int, timeout_s: float) -> tuple[float, float, int]:
    """Run a peer pinned to one core; return (cpu seconds, wall seconds, exit status)."""
    if shutil.which("taskset"):
        command = ["taskset", "-c", str(core), *command]
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=REPO)
    # A peer that never finishes must not hang the bench: kill it after the time limit.
    killer = threading.Timer(timeout_s, process.kill)
    killer.start()
    try:
        _, status, usage = os.wait4(process.pid, 0)
    finally:
        killer.cancel()
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_utime + usage.ru_stime, time.perf_counter() - started, process.returncode


def run_peer(peer: str, bootstrap: str, source: str, args: argparse.Namespace) -> Row | str:
    suffix = f"{peer}-{time.time_ns()}"
    clean, dlq, group = f"bench-clean-{suffix}", f"bench-dlq-{suffix}", f"bench-{suffix}"
    _create(AdminClient({"bootstrap.servers": bootstrap}), [clean, dlq], args.partitions, True)
    common = [bootstrap, source, clean, dlq, group, str(args.records)]
    if peer == "quix":
        if not QUIX_PYTHON.exists():
            return "not installed (bash bench/setup_quix.sh)"
        command = [str(QUIX_PYTHON), str(HERE / "peers.py"), peer, *common]
    elif peer.startswith("service"):
        command = [sys.executable, str(Path(__file__)), "--child", peer, *common]
    else:
        command = [sys.executable, str(HERE / "peers.py"), peer, *common]
    cpu, wall, code = _run_child(command, args.core, args.peer_timeout)
    if code != 0:
        return f"exited {code}"
    count, first, last = _read_outputs(bootstrap, [clean, dlq], args.partitions)
    return Row(peer, count, (last - first) / 1000.0, cpu, wall)


def child_service(peer: str, argv: list[str]) -> None:
    """Run StreamService in this process until it has delivered every record, then stop it."""
    from stream_validator.config.settings import config_from_mapping
    from stream_validator.service.loop import StreamService

    bootstrap, source, clean, dlq, group, records = argv
    kafka: dict[str, object] = {"bootstrap_servers": bootstrap, "group_id": group}
    if peer == "service-eos":
        kafka["transactional_id"] = f"{group}-txn"
    config = config_from_mapping(
        {
            "kafka": kafka,
            "metrics": {"enabled": False},
            "routes": [
                {
                    "name": "ticks",
                    "source_topics": [source],
                    "contract": str(REPO / "config/contracts/tick.yaml"),
                    "clean_topic": clean,
                    "dlq_topic": dlq,
                }
            ],
        }
    )
    service = StreamService(config)
    thread = threading.Thread(target=service.run, daemon=True)
    thread.start()
    target = int(records)
    while service.state.records < target and thread.is_alive():
        time.sleep(0.05)
    service.stop()
    thread.join(60)
    if service.state.records < target:
        raise SystemExit(f"service stopped after {service.state.records} of {target} records")


def fill(bootstrap: str, topic: str, records: int) -> None:
    sys.path.insert(0, str(HERE))
    from bench_service import fill as produce_all
    from bench_validate import make_payloads

    produce_all(bootstrap, topic, make_payloads(records, 0.01)[0])


def print_table(rows: list[tuple[str, Row | str]], records: int) -> None:
    ceiling = next((r.rate() for p, r in rows if p == "passthrough" and isinstance(r, Row)), None)
    print(f"\n{records:,} ticks, ~1 % bad, 4 partitions; each peer pinned to one core\n")
    print("| peer | rec/s | vs pass-through | CPU µs/record | outputs |")
    print("|---|---:|---:|---:|---:|")
    for peer, row in rows:
        if isinstance(row, str):
            print(f"| {LABELS[peer]} | {row} | | | |")
            continue
        ratio = f"{row.rate() / ceiling:.2f}x" if ceiling else "-"
        mark = "" if row.outputs == records else f" (expected {records:,}!)"
        print(
            f"| {LABELS[peer]} | {row.rate():,.0f} | {ratio} | "
            f"{row.cpu_s / records * 1e6:.1f} | {row.outputs:,}{mark} |"
        )


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        child_service(sys.argv[2], sys.argv[3:])
        return
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--core", type=int, default=1, help="the core each peer is pinned to")
    parser.add_argument("--peer-timeout", type=float, default=300.0, help="seconds per peer")
    parser.add_argument("--peers", default=",".join(PEERS), help=f"subset of {','.join(PEERS)}")
    args = parser.parse_args()
    from stream_validator.devbroker.broker import LocalKafkaBroker

    with tempfile.TemporaryDirectory() as tmp:
        external = os.environ.get("KAFKA_BOOTSTRAP_SERVERS")
        broker = None if external else LocalKafkaBroker(Path(tmp) / "kafka")
        if broker is not None:
            broker.start()
        bootstrap = external or broker.bootstrap_servers  # type: ignore[union-attr]
        try:
            source = f"bench-src-{time.time_ns()}"
            _create(AdminClient({"bootstrap.servers": bootstrap}), [source], args.partitions, False)
            fill(bootstrap, source, args.records)
            rows: list[tuple[str, Row | str]] = []
            for peer in args.peers.split(","):
                print(f"==> {peer}", file=sys.stderr, flush=True)
                rows.append((peer, run_peer(peer, bootstrap, source, args)))
            print_table(rows, args.records)
        finally:
            if broker is not None:
                broker.stop()


if __name__ == "__main__":
    main()
