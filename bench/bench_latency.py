"""Source -> clean latency at a steady rate: a bare loop and the service in both modes.

Run: .venv/bin/python bench/bench_latency.py [--rate 20000] [--seconds 20] [--warmup 3]
     [--peers none,bare,service,service-eos] [--rounds 1]
     (a service peer may carry batch settings and a source tree: service:linger_s=0.005,
     service@/tmp/main; see bench/harness.py)

One broker (the project's local broker, or KAFKA_BOOTSTRAP_SERVERS). For each peer: a fresh
4-partition source, clean and DLQ topic and group; the peer (bench/peers.py) runs as its own
process pinned to one core (taskset); this process and the producer stay off that core (the
broker is not pinned). A paced producer process first sends one record per partition and
waits until they came through the peer (so its own start-up, the peer's and the group join
are not measured), then writes valid ticks at RATE msg/s for WARMUP + SECONDS (at each
wake-up the records due by then, then a sleep of at least 0.5 ms), each stamped with
time.time_ns() in a `bench.sent_ns` header when it is produced (the producer lingers 1 ms).
A reader assigned to the clean topic (read_committed) takes each record as soon as it arrives (poll,
never waiting for a batch to fill): latency = its receive time - the stamp. Records stamped
in the first WARMUP seconds are left out; the table gives p50/p90/p99/max over the rest, the
rate the producer achieved, and marks a peer whose clean topic did not receive every record.
CPU: the peer process's user + system time from its first record (the priming one) to its
exit, over the records of the paced run (warm-up included): µs per record, and as % of a
core at the achieved rate.

A second table lists each peer's stalls: runs of records that each took over 60 ms
(exactly-once: 60 ms + the commit interval, which a record may wait by design), stamped
less than 50 ms apart (how many, how many records they held back, the longest and
the worst latency, when): a p99 over 20 s is decided by them.

The topic the reader reads keeps the broker's LogAppendTime, so a second pair of columns
("appended") gives p50/p99 of append time - stamp: when the record reached the clean topic,
without the reader's own delay (on two shared cores the reader, the producer and the broker
compete for one core, which adds its own queueing). Whole milliseconds (the broker's clock).
For exactly-once it is not when the record became visible: that waits for the commit.
The `none` row reads the source topic itself: what producer, broker and reader add without
any peer. Figures are noisy on a shared machine.

A p99 over 20 s is decided by a few stalls (one 200 ms stall of the broker holds back 4,000
records at 20,000 msg/s, 1 % of them), so ``--rounds N`` runs the peers N times, interleaved
(every peer once per round, in order), prints a table per round and then issue 26's targets
checked per round against that round's bare loop: at-least-once p50 <= bare p50 + 5 ms,
p99 <= 1.5x bare p99, CPU <= 2x bare CPU; exactly-once p99 <= bare p99 + one commit interval
(the default, or the peer's ``commit_interval_s``) + 50 ms. With several rounds it then
gives each target over the rounds: in how many it was met, and the median of value - limit
(as the full-speed figures take the median of rounds; met when at most 0).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass

from confluent_kafka import (
    OFFSET_BEGINNING,
    TIMESTAMP_LOG_APPEND_TIME,
    Consumer,
    Producer,
    TopicPartition,
)
from harness import (
    Child,
    broker,
    create_topics,
    label,
    peer_command,
    pin_to_other_cores,
    topic_safe,
)

from stream_validator.config.model import ServiceConfig

PEERS = ("none", "bare", "service", "service-eos")
NO_PEER = "no peer: the reader on the source topic (the floor)"
STAMP = "bench.sent_ns"
PRIME = "bench.prime"
SOURCE_LINGER_MS = 1
#: The paced producer's shortest sleep: records due meanwhile go out together.
PACE_S = 0.0005


#: A record this late (ms) is held back by a stall; the bare loop's p99 without one is
#: about 45 ms here, its p50 about 24. Exactly-once: this plus the commit interval, which
#: every record may wait by design.
STALL_MS = 60.0
#: Late records whose stamps are this close (ns) belong to one stall.
STALL_GAP_NS = 50_000_000


@dataclass(frozen=True)
class Stall:
    """Records stamped in a row (gaps under STALL_GAP_NS) that each took over STALL_MS."""

    at_s: float  # its first record's stamp, from the first stamp measured
    span_ms: float  # from its first record's stamp to its last's
    records: int
    worst_ms: float


def stalls(in_order: list[tuple[int, float]], over_ms: float = STALL_MS) -> list[Stall]:
    """The stalls among (stamp ns, latency ms) pairs sorted by stamp: records over
    ``over_ms``."""
    if not in_order:
        return []
    start = in_order[0][0]
    runs: list[list[tuple[int, float]]] = []
    for stamp, latency in in_order:
        if latency <= over_ms:
            continue
        if runs and stamp - runs[-1][-1][0] < STALL_GAP_NS:
            runs[-1].append((stamp, latency))
        else:
            runs.append([(stamp, latency)])
    return [
        Stall(
            (run[0][0] - start) / 1e9,
            (run[-1][0] - run[0][0]) / 1e6,
            len(run),
            max(latency for _, latency in run),
        )
        for run in runs
    ]


@dataclass
class Result:
    latencies_ms: list[float]  # sorted, warm-up left out
    appended_ms: list[float]  # sorted: LogAppendTime - stamp, warm-up left out
    received: int
    expected: int
    rate: float  # what the producer achieved, msg/s
    drift_ms: float  # median of the last tenth measured - median of the first tenth
    cpu_s: float = math.nan  # the peer's CPU time from its first record on (the paced run)
    stalls: list[Stall] = dataclasses.field(default_factory=list)  # in stamp order

    def percentile(self, q: float, values: list[float] | None = None) -> float:
        """Nearest rank: the smallest latency at or above q % of the measured records
        (of ``values``, sorted, when given)."""
        if values is None:
            values = self.latencies_ms
        return values[max(0, math.ceil(q / 100 * len(values)) - 1)] if values else math.nan


def paced_producer(bootstrap: str, source: str, partitions: int, rate: float, records: int) -> None:
    """Produce RECORDS valid ticks at RATE msg/s, each stamped when it is produced."""
    from bench_validate import make_payloads

    # A healthy feed all the way: each symbol's seq and event time keep going up (a cycle
    # of a few thousand payloads would step every symbol back each round, and the service's
    # per-symbol state would report, and pay for, an event on every record).
    payloads = iter(make_payloads(records + partitions, 0.0)[0])
    producer = Producer(
        {"bootstrap.servers": bootstrap, "linger.ms": SOURCE_LINGER_MS, "enable.idempotence": True}
    )
    # One record per partition first warms up this producer (idempotence PID, metadata,
    # connections: a second or more, which would otherwise be stamped on the first ticks) and
    # the peer (every partition assigned and fetched); pacing starts when the driver has seen
    # them all come through and writes a line.
    for partition in range(partitions):
        producer.produce(
            source, next(payloads), b"SYM0", partition=partition, headers=[(PRIME, b"1")]
        )
    producer.flush(30)
    if sys.stdin.readline() != "go\n":  # the driver gave up (or ended) before the start
        raise SystemExit("paced producer: not started")
    keys = [f"SYM{i}".encode() for i in range(500)]
    started = time.perf_counter()
    i = 0
    while i < records:
        # Every record due by now goes out (absolute due times: a late wake-up is caught
        # up, never accumulated), each stamped as it is produced; then one sleep until the
        # next is due, at least PACE_S. A sleep per record (50 µs at 20,000 msg/s) cost
        # this process most of a core, taken from the broker and the peer it measures.
        due = min(records, int((time.perf_counter() - started) * rate) + 1)
        while i < due:
            value, key = next(payloads), keys[i % 500]
            while True:
                try:
                    stamp = str(time.time_ns()).encode()
                    producer.produce(source, value, key, headers=[(STAMP, stamp)])
                    break
                except BufferError:
                    producer.poll(0.01)
            i += 1
        producer.poll(0)
        time.sleep(max(PACE_S, started + i / rate - time.perf_counter()))
    if producer.flush(60) > 0:
        raise SystemExit(f"paced producer: {len(producer)} records not delivered within 60 s")


def _reader(bootstrap: str, clean: str, partitions: int) -> Consumer:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench-latency-reader",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }
    )
    consumer.assign([TopicPartition(clean, p, OFFSET_BEGINNING) for p in range(partitions)])
    return consumer


def _await_prime(reader: Consumer, primes: int, children: list[Child], timeout_s: float) -> None:
    """Wait until the priming records reached the topic the reader reads."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not any(c.exited() for c in children):
        message = reader.poll(0.1)
        if message is not None and message.error() is None:
            primes -= 1
            if primes == 0:
                return
    raise RuntimeError(f"the priming records did not come through within {timeout_s:g} s")


Collected = tuple[list[int], list[int], list[int]]


def _collect(reader: Consumer, expected: int, children: list[Child], timeout_s: float) -> Collected:
    """Read until EXPECTED stamped records came, or the children ended and nothing came for
    5 s; return their stamps, latencies and append latencies (ns; the last empty unless the
    topic keeps LogAppendTime)."""
    stamps: list[int] = []
    latencies: list[int] = []
    appended: list[int] = []
    deadline = time.monotonic() + timeout_s
    last_seen = time.monotonic()
    while len(stamps) < expected and time.monotonic() < deadline:
        message = reader.poll(0.1)
        received = time.time_ns()
        if message is None:
            if all(c.exited() for c in children) and time.monotonic() - last_seen > 5:
                break
            continue
        if message.error() is not None:
            continue
        last_seen = time.monotonic()
        for name, value in message.headers() or ():
            if name == STAMP:
                stamps.append(int(value))
                latencies.append(received - stamps[-1])
                kind, append_ms = message.timestamp()
                if kind == TIMESTAMP_LOG_APPEND_TIME:
                    appended.append(append_ms * 1_000_000 - stamps[-1])
    return stamps, latencies, appended


def _paced(
    bootstrap: str,
    source: str,
    reader: Consumer,
    expected: int,
    peers: list[Child],
    args: argparse.Namespace,
) -> Collected:
    """Prime, then run the paced producer and read what comes through: stamps, latencies."""
    command = [sys.executable, __file__, "--produce", bootstrap, source, str(args.partitions)]
    producer = Child.start([*command, str(args.rate), str(expected)], None, stdin=subprocess.PIPE)
    assert producer.process.stdin is not None
    try:
        _await_prime(reader, args.partitions, [producer, *peers], args.peer_timeout)
        producer.process.stdin.write(b"go\n")
        producer.process.stdin.close()
        return _collect(reader, expected, [producer, *peers], args.peer_timeout)
    except RuntimeError:
        producer.process.kill()
        raise
    finally:
        producer.wait(60)


def stall_ms(peer: str) -> float:
    """How late a record of this peer is when a stall held it back."""
    name = peer.partition("@")[0]
    return STALL_MS + (interval_s(name) * 1000 if name.startswith("service-eos") else 0.0)


def _result(collected: Collected, expected: int, warmup_s: float, over_ms: float) -> Result:
    stamps, latencies, appended = collected
    first, last = min(stamps, default=0), max(stamps, default=0)
    steady = first + int(warmup_s * 1e9)
    in_order = sorted(
        (s, lat / 1e6) for s, lat in zip(stamps, latencies, strict=True) if s >= steady
    )
    appended_ms = sorted(lat / 1e6 for s, lat in zip(stamps, appended, strict=False) if s >= steady)
    tenth = max(1, len(in_order) // 10)
    drift = (
        statistics.median(lat for _, lat in in_order[-tenth:])
        - statistics.median(lat for _, lat in in_order[:tenth])
        if in_order
        else math.nan
    )
    rate = (len(stamps) - 1) / ((last - first) / 1e9) if last > first else math.nan
    return Result(
        sorted(lat for _, lat in in_order),
        appended_ms,
        len(stamps),
        expected,
        rate,
        drift,
        stalls=stalls(in_order, over_ms),
    )


def run_peer(peer: str, bootstrap: str, args: argparse.Namespace) -> Result | str:
    suffix = f"{topic_safe(peer)}-{time.time_ns()}"
    source, clean, dlq = (f"lat-{t}-{suffix}" for t in ("src", "clean", "dlq"))
    # The topic the reader reads keeps LogAppendTime (the "appended" columns); the source
    # of a peer keeps its producer's CreateTime, as a feed's does.
    read = source if peer == "none" else clean
    create_topics(bootstrap, [t for t in (source, clean, dlq) if t != read], args.partitions, False)
    create_topics(bootstrap, [read], args.partitions, True)
    expected = round(args.rate * (args.warmup + args.seconds))
    if peer == "none":  # the reader on the source itself: what the measuring alone costs
        reader = _reader(bootstrap, source, args.partitions)
        try:
            collected = _paced(bootstrap, source, reader, expected, [], args)
        except RuntimeError as exc:
            return str(exc)
        finally:
            reader.close()
        return _result(collected, expected, args.warmup, stall_ms(peer))
    command = peer_command(
        peer, bootstrap, source, clean, dlq, f"lat-{suffix}", expected + args.partitions
    )
    if isinstance(command, str):
        return command
    reader = _reader(bootstrap, clean, args.partitions)
    with tempfile.NamedTemporaryFile("r", suffix=".cpu") as mark:
        os.environ["BENCH_CPU_MARK"] = mark.name  # peers.py writes it at its first record
        child = Child.start(command, args.core)
        try:
            collected = _paced(bootstrap, source, reader, expected, [child], args)
        except RuntimeError as exc:
            child.process.kill()
            return str(exc)
        finally:
            reader.close()
            cpu, _, code = child.wait(args.peer_timeout)
        startup = float(mark.read().strip() or "nan")
    if code != 0:
        return f"exited {code}"
    result = _result(collected, expected, args.warmup, stall_ms(peer))
    result.cpu_s = cpu - startup
    return result


def print_table(rows: list[tuple[str, Result | str]], args: argparse.Namespace) -> None:
    print(
        f"\nsource -> clean at {args.rate:,.0f} msg/s, {args.seconds:g} s measured after "
        f"{args.warmup:g} s warm-up, {args.partitions} partitions; each peer pinned to one core; "
        "drift: median latency of the last tenth measured - of the first (a peer falling "
        "behind the rate drifts up)\n"
    )
    print(
        "| peer | p50 ms | p90 ms | p99 ms | max ms | drift ms | appended p50 ms"
        " | appended p99 ms | CPU µs/record | CPU % of a core | measured | source msg/s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for peer, row in rows:
        if isinstance(row, str):
            print(f"| {row_label(peer)} | {row} | | | | | | | | | | |")
            continue
        mark = "" if row.received == row.expected else f" ({row.received:,} of {row.expected:,}!)"
        quantiles = [row.percentile(q) for q in (50, 90, 99, 100)]
        appended = [row.percentile(q, row.appended_ms) for q in (50, 99)]
        # Over every record of the paced run (warm-up included; shutdown too, a few ms).
        per_record = row.cpu_s / row.expected * 1e6
        cpu = [per_record, per_record * row.rate / 1e4]
        figures = " | ".join(f"{v:.1f}" for v in [*quantiles, row.drift_ms, *appended, *cpu])
        text, measured = row_label(peer), f"{len(row.latencies_ms):,}{mark}"
        print(f"| {text} | {figures} | {measured} | {row.rate:,.0f} |")
    print(
        f"\nstalls: runs of records each over {STALL_MS:g} ms (exactly-once: {STALL_MS:g} ms "
        f"+ the commit interval), stamps under {STALL_GAP_NS / 1e6:g} ms apart; a p99 is "
        "decided by them\n"
    )
    print("| peer | stalls | records in them | longest ms | worst ms | at s (first five) |")
    print("|---|---:|---:|---:|---:|---|")
    for peer, row in rows:
        if isinstance(row, str):
            continue
        found = row.stalls
        held = sum(stall.records for stall in found)
        longest = max((stall.span_ms for stall in found), default=0.0)
        worst = max((stall.worst_ms for stall in found), default=0.0)
        at = ", ".join(f"{stall.at_s:.1f}" for stall in found[:5])
        figures = f"{len(found)} | {held:,} | {longest:.0f} | {worst:.0f}"
        print(f"| {row_label(peer)} | {figures} | {at} |")


@dataclass(frozen=True)
class Target:
    """One of issue 26's targets in one round: ``value`` <= ``limit`` (``rule``)."""

    what: str
    value: float
    limit: float
    rule: str


def targets(rows: list[tuple[str, Result | str]]) -> list[Target]:
    """Issue 26's targets at a steady rate, each against the same round's bare loop."""
    measured = {peer: row for peer, row in rows if isinstance(row, Result)}
    bare = measured.get("bare")
    if bare is None:
        return []
    b50, b99, bcpu = bare.percentile(50), bare.percentile(99), bare.cpu_s
    out = []
    for peer, row in measured.items():
        name = peer.partition("@")[0]
        p50, p99 = row.percentile(50), row.percentile(99)
        if name.startswith("service-eos"):
            interval = interval_s(name)
            limit = b99 + interval * 1000 + 50
            out.append(Target(f"{peer} p99", p99, limit, f"bare p99 + {interval:g} s + 50 ms"))
        elif name.startswith("service"):
            out.append(Target(f"{peer} p50", p50, b50 + 5, "bare p50 + 5 ms"))
            out.append(Target(f"{peer} p99", p99, 1.5 * b99, "1.5x bare p99"))
            out.append(Target(f"{peer} CPU s", row.cpu_s, 2 * bcpu, "2x bare CPU"))
    return out


def over_rounds(rounds: list[list[Target]]) -> list[str]:
    """Each target over the rounds: how many rounds met it, and the median of its
    value - limit (a p99 is decided by the few stalls of the broker and the machine that
    fall in one round's window, in one peer's run and not in another's)."""
    by_what: dict[str, list[Target]] = {}
    for found in rounds:
        for target in found:
            by_what.setdefault(target.what, []).append(target)
    lines = []
    for what, seen in by_what.items():
        met = sum(t.value <= t.limit for t in seen)
        margin = statistics.median(t.value - t.limit for t in seen)
        verdict = "met" if margin <= 0 else "NOT met"
        lines.append(
            f"- {what} ({seen[0].rule}): met in {met} of {len(seen)} rounds; median of "
            f"value - limit {margin:+.1f}: {verdict}"
        )
    return lines


def interval_s(peer: str) -> float:
    """The peer's commit interval: ``commit_interval_s=`` in its settings, or the default."""
    _, _, settings = peer.partition(":")
    for item in filter(None, settings.split(",")):
        key, _, value = item.partition("=")
        if key == "commit_interval_s":
            return float(value)
    defaults = {field.name: field.default for field in dataclasses.fields(ServiceConfig)}
    return float(defaults["batch_commit_interval_s"])  # type: ignore[arg-type]


def check(target: Target) -> str:
    verdict = "met" if target.value <= target.limit else "NOT met"
    return f"- {target.what} {target.value:.1f} <= {target.limit:.1f} ({target.rule}): {verdict}"


def print_targets(rounds: list[list[tuple[str, Result | str]]]) -> None:
    found = [targets(rows) for rows in rounds]
    for number, checked in enumerate(found, 1):
        if checked:
            print(f"\ntargets, round {number} (each against this round's bare loop):")
            print("\n".join(check(target) for target in checked))
    if len(found) > 1 and any(found):
        print(f"\ntargets over the {len(found)} rounds:")
        print("\n".join(over_rounds(found)))


def row_label(peer: str) -> str:
    return NO_PEER if peer == "none" else label(peer)


def main() -> None:
    if len(sys.argv) == 7 and sys.argv[1] == "--produce":
        bootstrap, source, partitions, rate, records = sys.argv[2:]
        paced_producer(bootstrap, source, int(partitions), float(rate), int(records))
        return
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rate", type=float, default=20_000.0, help="msg/s")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured, per peer")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds left out, per peer")
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--core", type=int, default=1, help="the core each peer is pinned to")
    parser.add_argument("--peer-timeout", type=float, default=120.0, help="seconds per peer")
    parser.add_argument("--peers", default=",".join(PEERS), help=f"subset of {','.join(PEERS)}")
    parser.add_argument("--rounds", type=int, default=1, help="every peer once per round")
    args = parser.parse_args()
    with broker() as bootstrap:
        pin_to_other_cores(args.core)  # after the broker started: it may use every core
        rounds: list[list[tuple[str, Result | str]]] = []
        for number in range(1, args.rounds + 1):
            rows: list[tuple[str, Result | str]] = []
            for peer in args.peers.split(","):
                print(f"==> round {number}: {peer}", file=sys.stderr, flush=True)
                rows.append((peer, run_peer(peer, bootstrap, args)))
            rounds.append(rows)
        for number, rows in enumerate(rounds, 1):
            if args.rounds > 1:
                print(f"\n### round {number} of {args.rounds}")
            print_table(rows, args)
        print_targets(rounds)


if __name__ == "__main__":
    main()
