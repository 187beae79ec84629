"""The service end to end on an Avro route against the JSON route, same records, real broker
and real Schema Registry: records/s and CPU per record, side by side.

Run: .venv/bin/python bench/bench_formats_service.py [--records 100000] [--rounds 2]

The ticks of ``tests/support/registryformats.py`` (the records and contract of
``bench_formats.py``) are written once as JSON to one topic and once in the Confluent wire
format (Avro, schema registered in the registry) to another. Each round runs ``StreamService``
in this process on the JSON topic, then on the Avro topic (fresh group each time), from start
until every source offset is committed; CPU is this process's (the loop and librdkafka's
threads). Uses KAFKA_BOOTSTRAP_SERVERS / SCHEMA_REGISTRY_URL, else starts the local broker /
registry. Issue 29's target: the Avro route's throughput >= 0.5x the JSON route's.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from bench_service import committed_all
from harness import REPO, broker, create_topics, fill

sys.path.insert(0, str(REPO))
from stream_validator.codec import encode_json
from stream_validator.config.model import SchemaRegistryConfig
from stream_validator.config.settings import config_from_mapping
from stream_validator.devbroker.registry import LocalSchemaRegistry
from stream_validator.registry.client import registry_client
from stream_validator.service.loop import StreamService
from tests.support.registryformats import TICK, TICK_CONTRACT, serializer

PARTITIONS = 3


@contextlib.contextmanager
def registry() -> Iterator[str]:
    external = os.environ.get("SCHEMA_REGISTRY_URL", "").strip()
    if external:
        yield external
        return
    with tempfile.TemporaryDirectory() as state, LocalSchemaRegistry(state) as local:
        yield local.url


def run(
    bootstrap: str, url: str, fmt: str, topic: str, contract: Path, n: int
) -> tuple[float, float]:
    """(records/s, CPU µs per record) of one service run over ``topic``."""
    group = f"bench-fmt-{fmt}-{time.time_ns()}"
    config = config_from_mapping(
        {
            "kafka": {"bootstrap_servers": bootstrap, "group_id": group},
            "schema_registry": {"url": url},
            "metrics": {"port": 0},
            "routes": [
                {
                    "name": "ticks",
                    "format": fmt,
                    "source_topics": [topic],
                    "contract": str(contract),
                    "clean_topic": f"{topic}-clean",
                    "dlq_topic": f"{topic}-dlq",
                }
            ],
        }
    )
    service = StreamService(config)
    cpu, started = time.process_time(), time.perf_counter()
    thread = threading.Thread(target=service.run, daemon=True)
    thread.start()
    while not committed_all(bootstrap, group, topic, PARTITIONS):
        time.sleep(0.1)
    elapsed, used = time.perf_counter() - started, time.process_time() - cpu
    service.stop()
    thread.join(30)
    if service.state.records != n or service.state.dlq != 0:
        raise SystemExit(f"{fmt}: {service.state.records} records, {service.state.dlq} in the DLQ")
    return n / elapsed, used / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    n = args.records
    ticks = [{**TICK, "size": 1 + i % 5000, "symbol": f"S{i % 500}"} for i in range(n)]
    with broker() as bootstrap, registry() as url, tempfile.TemporaryDirectory() as tmp:
        contract = Path(tmp) / "tick.yaml"
        contract.write_text(TICK_CONTRACT, encoding="utf-8")
        suffix = str(int(time.time()))
        topics = {"json": f"bench-fmt-json-{suffix}", "avro": f"bench-fmt-avro-{suffix}"}
        create_topics(
            bootstrap,
            [t + s for t in topics.values() for s in ("", "-clean", "-dlq")],
            PARTITIONS,
            False,
        )
        as_json = (
            encode_json({**t, "ts": t["ts"].isoformat(), "recv": t["recv"].isoformat()})
            for t in ticks
        )
        fill(bootstrap, topics["json"], as_json)
        write = serializer("avro", registry_client(SchemaRegistryConfig(url=url)))
        fill(bootstrap, topics["avro"], (write(topics["avro"], t)[0] for t in ticks))
        rows: dict[str, list[tuple[float, float]]] = {"json": [], "avro": []}
        for _ in range(args.rounds):
            for fmt, topic in topics.items():
                rows[fmt].append(run(bootstrap, url, fmt, topic, contract, n))
        print(f"\n{n:,} ticks, {PARTITIONS} partitions, {args.rounds} rounds, best shown\n")
        print("| route | records/s | vs JSON route | CPU µs/record | CPU vs JSON |")
        print("|---|---:|---:|---:|---:|")
        best = {fmt: (max(r for r, _ in v), min(c for _, c in v)) for fmt, v in rows.items()}
        for fmt, (rate, cpu) in best.items():
            print(
                f"| {fmt} | {rate:,.0f} | {rate / best['json'][0]:.2f}x | {cpu:.1f} | "
                f"{best['json'][1] / cpu:.2f}x |"
            )


if __name__ == "__main__":
    main()
