"""Instructions per batch and per record of the service loop, counted by valgrind callgrind.

Run: .venv/bin/python bench/profile_batches.py [--records 20000] [--batches 5,500] [--top 25]
     [--shadow FILE]
     (or, one scripted run without valgrind, printing its CPU time: ... --run --batch 5)
``--shadow FILE``: the route also names FILE as its ``shadow_contract`` (bench/bench_shadow.py
compares the counts with and without one).

The service runs at its defaults, except no linger (metrics on, fed through the metrics hooks;
no log handler, as in bench/peers.py) on the in-memory fake broker
(stream_validator/kafka/fake): a 4-partition source, fed BATCH valid ticks at a time, spread
over the partitions, each time the loop finds nothing to read, so every consumed batch holds
BATCH records, as at a steady moderate rate (20,000 msg/s arrive ~5 at a time; ~100 in 5 ms,
the default ``batch.linger_s``); its last stable offset is looked up in O(1) (the fake scans
the log for open transactions, which would dominate the count). The commit interval is 60 s
(one commit at shutdown): commits cost per interval, not per batch. Counting starts when the
loop starts (callgrind ``--zero-before`` on the ``getppid`` the script calls just before) and
ends when it returns (``--dump-before`` on ``getpgrp``): imports and set-up are left out; the
fake broker's own work is in.

For each batch size it prints the instructions (Ir) of the run, per batch and per record;
then, from the first two sizes, the fixed cost of a batch and the cost of a record (the run's
Ir = batches x per-batch + records x per-record), and the top functions of the first size by
inclusive cost (callgrind_annotate; C functions of the interpreter and of the extensions).
Instruction counts are stable from run to run, unlike CPU time on a shared machine.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PARTITIONS = 4


def scripted_run(records: int, batch: int, shadow: str | None = None) -> tuple[int, float]:
    """Run the loop over RECORDS ticks arriving BATCH at a time (``shadow``: the route's
    shadow contract file); return the batches it made and the loop's CPU time (s)."""
    from bench_validate import make_payloads

    from stream_validator.config.settings import config_from_mapping
    from stream_validator.gcpolicy import collector_tuned
    from stream_validator.kafka.fake import FakeBroker, FakeClients
    from stream_validator.service.app import metrics_hooks, set_route_metrics
    from stream_validator.service.loop import StreamService
    from stream_validator.service.telemetry.integritymetrics import IntegrityMetrics
    from stream_validator.service.telemetry.metrics import CollectorRegistry, ServiceMetrics
    from stream_validator.service.telemetry.shadowmetrics import ShadowMetrics

    config = config_from_mapping(
        {
            "kafka": {"group_id": "profile"},
            # No linger: every build takes the same path (a linger on the fake finds nothing).
            "batch": {"commit_interval_s": 60.0, "linger_s": 0.0},
            "metrics": {"enabled": False},  # no HTTP server; the metrics are fed below
            "routes": [
                {
                    "name": "ticks",
                    "source_topics": ["src"],
                    "contract": str(HERE.parent / "config" / "contracts" / "tick.yaml"),
                    "clean_topic": "clean",
                    "dlq_topic": "dlq",
                    **({"shadow_contract": shadow} if shadow else {}),
                }
            ],
        }
    )

    class Broker(FakeBroker):
        """The fake broker, its last stable offset looked up in O(1): the fake scans the
        whole log for an open transaction, which made this run quadratic in the records
        (at-least-once writes none)."""

        def end(self, key: tuple[str, int], *, read_committed: bool = True) -> int:
            return len(self.logs[key[0]][key[1]])

    broker = Broker()
    for topic in ("src", "clean", "dlq"):
        broker.create_topic(topic, PARTITIONS)
    registry = CollectorRegistry()
    metrics, integrity = ServiceMetrics(registry), IntegrityMetrics(registry)
    set_route_metrics(metrics, integrity, config.routes[0])
    payloads = make_payloads(records, 0.0)[0]
    keys = [f"SYM{i:03d}".encode() for i in range(500)]
    fed = 0
    service: StreamService

    def feed() -> None:
        nonlocal fed
        if fed >= records:
            service.stop()
            return
        for i in range(fed, min(records, fed + batch)):
            broker.append("src", payloads[i], key=keys[i % 500], partition=i % PARTITIONS)
        fed = min(records, fed + batch)

    clients = FakeClients(broker, "profile", message_max_bytes=config.max_message_bytes)
    clients.on_idle = feed
    shadows = ShadowMetrics(registry, [r.name for r in config.routes if r.shadow_contract])
    hooks = metrics_hooks(metrics, integrity, shadows=shadows)
    service = StreamService(config, hooks=hooks, clients=clients)
    with collector_tuned():
        os.getppid()  # callgrind --zero-before: counting starts here
        cpu = time.process_time()
        code = service.run()
        cpu = time.process_time() - cpu
        os.getpgrp()  # callgrind --dump-before: and ends here
    if code != 0 or service.state.records != records:
        raise SystemExit(f"exit {code}, {service.state.records} of {records} records")
    return service.state.batches, cpu


def callgrind(
    records: int, batch: int, out_dir: Path, shadow: str | None = None
) -> tuple[int, int, Path]:
    """Run the scripted loop under callgrind: (instructions, batches, the loop's dump)."""
    out = out_dir / f"callgrind.{batch}.{Path(shadow).stem if shadow else 'none'}"
    command = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={out}",
        "--zero-before=getppid",
        "--dump-before=getpgrp",
        sys.executable,
        __file__,
        "--run",
        "--records",
        str(records),
        "--batch",
        str(batch),
        *(["--shadow", shadow] if shadow else []),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    batches = int(re.findall(r"^batches (\d+)$", done.stdout, re.M)[-1])
    dump = out.with_name(out.name + ".1")  # the first dump: zeroed at getppid, taken at getpgrp
    totals = re.search(r"^(?:totals|summary): (\d+)", dump.read_text(), re.M)
    assert totals is not None, f"no totals in {dump}"
    return int(totals.group(1)), batches, dump


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--batches", default="5,500", help="batch sizes, comma-separated")
    parser.add_argument("--top", type=int, default=25, help="functions listed")
    parser.add_argument("--run", action="store_true", help="one scripted run, no valgrind")
    parser.add_argument("--batch", type=int, default=5, help="with --run")
    parser.add_argument("--shadow", help="the route's shadow_contract file")
    args = parser.parse_args()
    if args.run:
        batches, cpu = scripted_run(args.records, args.batch, args.shadow)
        print(f"batches {batches}\nloop CPU {cpu:.3f} s")
        return
    sizes = [int(s) for s in args.batches.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        rows = [callgrind(args.records, size, Path(tmp), args.shadow) for size in sizes]
        print(f"\n{args.records:,} records through the service loop on the fake broker\n")
        print("| records per batch | batches | Ir (millions) | Ir per batch | Ir per record |")
        print("|---:|---:|---:|---:|---:|")
        for size, (ir, batches, _) in zip(sizes, rows, strict=True):
            print(
                f"| {size} | {batches:,} | {ir / 1e6:,.1f} | {ir / batches:,.0f}"
                f" | {ir / args.records:,.0f} |"
            )
        if len(rows) >= 2 and rows[0][1] != rows[1][1]:
            (ir_a, b_a, _), (ir_b, b_b, _) = rows[0], rows[1]
            per_batch = (ir_a - ir_b) / (b_a - b_b)
            per_record = (ir_b - b_b * per_batch) / args.records
            print(
                f"\nfixed cost of a batch: {per_batch:,.0f} Ir; cost of a record: "
                f"{per_record:,.0f} Ir"
            )
        annotate = subprocess.run(
            ["callgrind_annotate", "--inclusive=yes", str(rows[0][2])],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        lines = [line for line in annotate.splitlines() if re.match(r"^\s*[\d,]+ \(", line)]
        print(f"\ntop {args.top} functions by inclusive Ir, batches of {sizes[0]}:\n")
        print("\n".join(lines[: args.top + 1]))


if __name__ == "__main__":
    main()
