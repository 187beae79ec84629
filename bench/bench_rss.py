"""The service's resident memory over a long run: flat, or growing with the records?

Run: .venv/bin/python bench/bench_rss.py [--records 10000000] [--interval 2] [--warmup 0.1]

One broker (the project's local broker, or KAFKA_BOOTSTRAP_SERVERS). RECORDS ticks (~1 % bad;
one block of 100,000 generated payloads produced over and over) are pre-loaded into a
4-partition topic, then the service (bench/peers.py, at its defaults; --peer service-eos for
exactly-once) runs as its own process pinned to one core until it has handled them all.
Every INTERVAL seconds this reads the service's VmRSS from /proc/<pid>/status and the
group's committed offsets. "start" is the first sample taken once WARMUP (a fraction of
RECORDS) was committed (librdkafka's fetch queue and the first batches' allocations fill
up before that), "end" the last sample before every record was committed (after it the
service shuts down), "max" the largest in between. The run passes when
both end and max are within --limit % (default 10) of start; it exits 1 when not.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from dataclasses import dataclass

from confluent_kafka import Consumer, KafkaException, TopicPartition
from harness import Child, broker, create_topics, fill, peer_command

BLOCK = 100_000


@dataclass(frozen=True)
class Sample:
    seconds: float
    committed: int
    rss_kib: int


def rss_kib(pid: int) -> int | None:
    """VmRSS of a live process in KiB; None once it has ended (a zombie has no VmRSS)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except FileNotFoundError:
        return None
    return None


def committed(consumer: Consumer, topic: str, partitions: int) -> int:
    """How many source records the group has committed (-1 while the coordinator loads)."""
    tps = [TopicPartition(topic, p) for p in range(partitions)]
    try:
        return sum(max(tp.offset, 0) for tp in consumer.committed(tps, timeout=10))
    except KafkaException:
        return -1


def sample_until_exit(
    child: Child, consumer: Consumer, args: argparse.Namespace, source: str
) -> list[Sample]:
    samples: list[Sample] = []
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        seconds, rss = time.perf_counter() - child.started, rss_kib(child.process.pid)
        if rss is None:
            return samples
        done = committed(consumer, source, args.partitions)
        samples.append(Sample(seconds, done, rss))
        print(
            f"{samples[-1].seconds:7.1f} s {done:>12,} committed {rss / 1024:8.1f} MiB",
            file=sys.stderr,
            flush=True,
        )
        time.sleep(args.interval)
    child.process.kill()
    return samples


def report(samples: list[Sample], args: argparse.Namespace, cpu_s: float, code: int) -> bool:
    # The samples after the last record are taken while the service shuts down: left out.
    warm = [s for s in samples if args.warmup * args.records <= s.committed < args.records]
    if code != 0 or len(warm) < 2:
        print(f"\nno result: service exited {code}, {len(warm)} samples after the warm-up")
        return False
    start, end = warm[0], warm[-1]
    peak = max(s.rss_kib for s in warm)
    grew_end = (end.rss_kib / start.rss_kib - 1) * 100
    grew_max = (peak / start.rss_kib - 1) * 100
    passed = grew_end <= args.limit and grew_max <= args.limit
    span = end.seconds - start.seconds
    rate = (end.committed - start.committed) / span if span > 0 else float("nan")
    print(
        f"\n{args.peer}: {args.records:,} records, {len(samples)} samples "
        f"every {args.interval:g} s, {rate:,.0f} rec/s between start and end, "
        f"CPU {cpu_s / args.records * 1e6:.1f} µs/record\n"
    )
    print("| | committed | RSS MiB | vs start |")
    print("|---|---:|---:|---:|")
    print(
        f"| start (after {args.warmup:.0%} warm-up) | {start.committed:,} | "
        f"{start.rss_kib / 1024:.1f} | |"
    )
    print(f"| max | | {peak / 1024:.1f} | {grew_max:+.1f} % |")
    print(f"| end | {end.committed:,} | {end.rss_kib / 1024:.1f} | {grew_end:+.1f} % |")
    print(f"\n{'PASS' if passed else 'FAIL'}: end and max within +{args.limit:g} % of start")
    return passed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between samples")
    parser.add_argument("--warmup", type=float, default=0.1, help="fraction of the records")
    parser.add_argument("--limit", type=float, default=10.0, help="allowed growth, %%")
    parser.add_argument("--peer", default="service", choices=("service", "service-eos"))
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--core", type=int, default=1, help="the core the service is pinned to")
    parser.add_argument("--timeout", type=float, default=3600.0, help="seconds for the service")
    args = parser.parse_args()
    from bench_validate import make_payloads

    with broker() as bootstrap:
        suffix = f"{args.peer}-{time.time_ns()}"
        source, clean, dlq = (f"rss-{t}-{suffix}" for t in ("src", "clean", "dlq"))
        group = f"rss-{suffix}"
        create_topics(bootstrap, [source, clean, dlq], args.partitions, False)
        block = make_payloads(min(args.records, BLOCK), 0.01)[0]
        print(f"==> pre-loading {args.records:,} records", file=sys.stderr, flush=True)
        fill(bootstrap, source, itertools.islice(itertools.cycle(block), args.records))
        command = peer_command(args.peer, bootstrap, source, clean, dlq, group, args.records)
        assert isinstance(command, list)  # only Quix can be missing
        consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False}
        )
        try:
            child = Child.start(command, args.core)
            samples = sample_until_exit(child, consumer, args, source)
            cpu, _, code = child.wait(60)
        finally:
            consumer.close()
        passed = report(samples, args, cpu, code)
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
