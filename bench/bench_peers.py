"""Side by side on the local broker: pass-through, naive json.loads, Quix Streams, the service.

Run: .venv/bin/python bench/bench_peers.py [--records 300000] [--core 1] [--rounds 1]
     (Quix Streams runs from its own virtualenv: bash bench/setup_quix.sh creates .venv-quix;
     without it the Quix row is left out and the table says so.)

One broker (the project's local broker, or KAFKA_BOOTSTRAP_SERVERS), RECORDS ticks (~1 % bad;
``--bad 1.0``: every one bad, as in a vendor incident) pre-loaded into a 4-partition topic.
Each peer runs as its own process pinned to one core (taskset), with a fresh consumer group
and its own clean and DLQ topics. Those topics use
LogAppendTime, so "records/s" is measured the same way for every peer, by the broker: outputs
divided by the time from the first output to the last. CPU µs per record is the peer
process's user + system time (start-up included) over the records; "after start-up" leaves
out the CPU spent until the peer handled its first record (imports, clients, group join).
Every peer must account
for every input (clean + DLQ == RECORDS) or its row is marked. With ``--rounds N`` every peer
runs N times, the peers interleaved, a table per round, then the median ratio of each peer to
the same round's pass-through (machines shared with other jobs move a single run by a fifth).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass

from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
from harness import Child, broker, create_topics, fill, label, peer_command, topic_safe

PEERS = ("passthrough", "naive", "quix", "service", "service-eos")


@dataclass
class Row:
    peer: str
    outputs: int
    span_s: float
    cpu_s: float
    wall_s: float
    startup_cpu_s: float  # CPU when the peer handled its first record

    def rate(self) -> float:
        return self.outputs / self.span_s if self.span_s > 0 else float("nan")


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


def run_peer(peer: str, bootstrap: str, source: str, args: argparse.Namespace) -> Row | str:
    suffix = f"{topic_safe(peer)}-{time.time_ns()}"
    clean, dlq, group = f"bench-clean-{suffix}", f"bench-dlq-{suffix}", f"bench-{suffix}"
    create_topics(bootstrap, [clean, dlq], args.partitions, True)
    command = peer_command(peer, bootstrap, source, clean, dlq, group, args.records)
    if isinstance(command, str):
        return command
    with tempfile.NamedTemporaryFile("r", suffix=".cpu") as mark:
        os.environ["BENCH_CPU_MARK"] = mark.name  # peers.py writes it at its first record
        cpu, wall, code = Child.start(command, args.core).wait(args.peer_timeout)
        startup = float(mark.read().strip() or "nan")
    if code != 0:
        return f"exited {code}"
    count, first, last = _read_outputs(bootstrap, [clean, dlq], args.partitions)
    return Row(peer, count, (last - first) / 1000.0, cpu, wall, startup)


def print_table(rows: list[tuple[str, Row | str]], records: int, bad: float) -> None:
    ceiling = next((r.rate() for p, r in rows if p == "passthrough" and isinstance(r, Row)), None)
    print(f"\n{records:,} ticks, ~{bad:.0%} bad, 4 partitions; each peer pinned to one core\n")
    print("| peer | rec/s | vs pass-through | CPU µs/record | after start-up | outputs |")
    print("|---|---:|---:|---:|---:|---:|")
    for peer, row in rows:
        if isinstance(row, str):
            print(f"| {label(peer)} | {row} | | | | |")
            continue
        ratio = f"{row.rate() / ceiling:.2f}x" if ceiling else "-"
        mark = "" if row.outputs == records else f" (expected {records:,}!)"
        print(
            f"| {label(peer)} | {row.rate():,.0f} | {ratio} | "
            f"{row.cpu_s / records * 1e6:.1f} | "
            f"{(row.cpu_s - row.startup_cpu_s) / records * 1e6:.1f} | {row.outputs:,}{mark} |"
        )


def print_summary(rounds: list[list[tuple[str, Row | str]]], records: int) -> None:
    """Per peer over the rounds: the median ratio to the same round's pass-through, its
    range, and the median CPU µs per record after start-up."""
    print(f"\n{len(rounds)} rounds, peers interleaved; ratios to each round's pass-through\n")
    print("| peer | median vs pass-through | range | CPU µs/record after start-up (median) |")
    print("|---|---:|---:|---:|")
    for peer, _ in rounds[0]:
        ratios, cpus = [], []
        for rows in rounds:
            found = dict(rows)
            row, ceiling = found.get(peer), found.get("passthrough")
            if isinstance(row, Row):
                cpus.append((row.cpu_s - row.startup_cpu_s) / records * 1e6)
                if isinstance(ceiling, Row):
                    ratios.append(row.rate() / ceiling.rate())
        if not cpus:
            print(f"| {label(peer)} | - | - | - |")
            continue
        spread = f"{min(ratios):.2f}-{max(ratios):.2f}x" if ratios else "-"
        middle = f"{statistics.median(ratios):.2f}x" if ratios else "-"
        print(f"| {label(peer)} | {middle} | {spread} | {statistics.median(cpus):.1f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--core", type=int, default=1, help="the core each peer is pinned to")
    parser.add_argument("--peer-timeout", type=float, default=300.0, help="seconds per peer")
    parser.add_argument("--peers", default=",".join(PEERS), help=f"subset of {','.join(PEERS)}")
    parser.add_argument(
        "--rounds", type=int, default=1, help="run every peer this many times, interleaved"
    )
    parser.add_argument(
        "--bad",
        type=float,
        default=0.01,
        help="fraction of bad ticks (1.0: a vendor incident, every record to the DLQ)",
    )
    args = parser.parse_args()
    from bench_validate import make_payloads

    with broker() as bootstrap:
        source = f"bench-src-{time.time_ns()}"
        create_topics(bootstrap, [source], args.partitions, False)
        fill(bootstrap, source, make_payloads(args.records, args.bad)[0])
        rounds: list[list[tuple[str, Row | str]]] = []
        for number in range(1, args.rounds + 1):
            rows: list[tuple[str, Row | str]] = []
            for peer in args.peers.split(","):
                print(f"==> {peer} (round {number})", file=sys.stderr, flush=True)
                rows.append((peer, run_peer(peer, bootstrap, source, args)))
            print_table(rows, args.records, args.bad)
            rounds.append(rows)
        if len(rounds) > 1:
            print_summary(rounds, args.records)


if __name__ == "__main__":
    main()
