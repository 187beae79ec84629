"""The service's resident memory over a long run: flat, or growing with the records?

Run: .venv/bin/python bench/bench_rss.py [--records 10000000] [--interval 2] [--warmup 0.1]
     [--bad 0.01]

One broker (the project's local broker, or KAFKA_BOOTSTRAP_SERVERS). RECORDS + TAIL ticks
(~1 % bad, or the share --bad gives; one block of 100,000 generated payloads produced over
and over) are pre-loaded into a 4-partition topic, then the service (bench/peers.py, at its
defaults; --peer service-eos for exactly-once) runs as its own process pinned to one core
until it has handled RECORDS. The TAIL (default 500,000, ~100 MB) keeps librdkafka's fetch
queue (up to 64 MiB by default) as full at the end as in the middle: without it the RSS
falls while the queue drains near the end of the topic, which would hide growth.
Every INTERVAL seconds this reads the service's VmRSS from /proc/<pid>/status and the
group's committed offsets. The first WARMUP (a fraction of RECORDS) is the warm-up: the fetch
queue and the first batches' allocations grow the RSS to its working size. "start" is the
highest sample in the warm-up (the queue's fill moves the RSS by several % from sample to
sample, so one sample is no baseline), "end" the last sample before the service said it had
handled every record (then it shuts down), "max" the highest after the warm-up. The run passes when
both end and max are within --limit % (default 10) of start; it exits 1 when not.
"""

from __future__ import annotations

import argparse
import itertools
import select
import subprocess
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
    """Sample until the service says it handled every record (its first line on stdout):
    after that it shuts down and frees memory, which is no part of the run."""
    samples: list[Sample] = []
    deadline = time.monotonic() + args.timeout
    while time.monotonic() < deadline:
        if select.select([child.process.stdout], [], [], 0)[0]:
            return samples
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
    warming = [s for s in samples if s.committed < args.warmup * args.records]
    steady = [s for s in samples if s.committed >= args.warmup * args.records]
    if code != 0 or not warming or len(steady) < 2:
        print(f"\nno result: service exited {code}, {len(steady)} samples after the warm-up")
        return False
    # The fetch queue's fill moves the RSS by several %: the warm-up's highest sample is the
    # working size reached, the baseline that later samples must not outgrow.
    start = max(warming, key=lambda s: s.rss_kib)
    end = steady[-1]
    peak = max(s.rss_kib for s in steady)
    grew_end = (end.rss_kib / start.rss_kib - 1) * 100
    grew_max = (peak / start.rss_kib - 1) * 100
    passed = grew_end <= args.limit and grew_max <= args.limit
    span = end.seconds - steady[0].seconds
    rate = (end.committed - steady[0].committed) / span if span > 0 else float("nan")
    print(
        f"\n{args.peer}: {args.records:,} records, {len(samples)} samples "
        f"every {args.interval:g} s, {rate:,.0f} rec/s after the warm-up, "
        f"CPU {cpu_s / args.records * 1e6:.1f} µs/record\n"
    )
    print("| | committed | RSS MiB | vs start |")
    print("|---|---:|---:|---:|")
    print(
        f"| start (highest in the {args.warmup:.0%} warm-up) | {start.committed:,} | "
        f"{start.rss_kib / 1024:.1f} | |"
    )
    print(f"| max after the warm-up | | {peak / 1024:.1f} | {grew_max:+.1f} % |")
    print(f"| end | {end.committed:,} | {end.rss_kib / 1024:.1f} | {grew_end:+.1f} % |")
    print(f"\n{'PASS' if passed else 'FAIL'}: end and max within +{args.limit:g} % of start")
    return passed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between samples")
    parser.add_argument("--warmup", type=float, default=0.1, help="fraction of the records")
    parser.add_argument("--limit", type=float, default=10.0, help="allowed growth, %%")
    parser.add_argument(
        "--tail",
        type=int,
        default=500_000,
        help="records pre-loaded beyond RECORDS, so the fetch queue stays full to the end",
    )
    parser.add_argument("--peer", default="service", choices=("service", "service-eos"))
    parser.add_argument(
        "--bad", type=float, default=0.01, help="fraction of bad ticks (1.0: a vendor incident)"
    )
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
        block = make_payloads(min(args.records, BLOCK), args.bad)[0]
        total = args.records + args.tail
        print(f"==> pre-loading {total:,} records", file=sys.stderr, flush=True)
        fill(bootstrap, source, itertools.islice(itertools.cycle(block), total))
        command = peer_command(args.peer, bootstrap, source, clean, dlq, group, args.records)
        assert isinstance(command, list)  # only Quix can be missing
        consumer = Consumer(
            {"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False}
        )
        try:
            child = Child.start(command, args.core, stdout=subprocess.PIPE)
            samples = sample_until_exit(child, consumer, args, source)
            cpu, _, code = child.wait(60)
        finally:
            consumer.close()
        passed = report(samples, args, cpu, code)
    sys.exit(0 if passed else 1)


if __name__ == "__main__":
    main()
