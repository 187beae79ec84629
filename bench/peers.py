"""The peers of the side-by-side benchmark, each run as its own (pinned) process.

Run by bench/bench_peers.py, bench_latency.py and bench_rss.py, never by hand:
    python bench/peers.py PEER BOOTSTRAP SOURCE CLEAN DLQ GROUP RECORDS

Each peer consumes RECORDS records from SOURCE and writes every one of them either to CLEAN
or to DLQ, then exits. Only confluent_kafka and the standard library are imported at module
level, so the Quix Streams peer can run from its own virtualenv (Quix pins an older
confluent-kafka than the service uses); the service peers import stream_validator when run.
"""

from __future__ import annotations

import json
import math
import os
import resource
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import datetime
from operator import is_not
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, Producer

TICK_FIELDS = ("symbol", "exchange", "event_ts", "seq", "price", "size", "bid", "ask")
TICK_NULLABLE = ("bid", "ask", "bid_sz", "ask_sz")
TICK_CONTRACT = Path(__file__).resolve().parents[1] / "config" / "contracts" / "tick.yaml"


def _consumer(bootstrap: str, group: str, source: str) -> Consumer:
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
        }
    )
    consumer.subscribe([source])
    return consumer


def _producer(bootstrap: str) -> Producer:
    return Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 5})


def _produce(
    producer: Producer,
    topic: str,
    value: bytes,
    key: bytes | None,
    headers: Any = None,
    on_delivery: Callable[[Any, Any], Any] | None = None,
) -> None:
    while True:
        try:
            if on_delivery is None:
                producer.produce(topic, value, key, headers=headers)
            else:
                producer.produce(topic, value, key, headers=headers, on_delivery=on_delivery)
            return
        except BufferError:
            producer.poll(0.05)


_marked = False


def mark_first_record() -> None:
    """Write this process's CPU time so far to $BENCH_CPU_MARK, once: bench_peers.py takes
    the CPU after it as the steady-state cost (start-up, imports and the group join left out)."""
    global _marked
    path = os.environ.get("BENCH_CPU_MARK")
    if _marked or not path:
        return
    _marked = True
    usage = resource.getrusage(resource.RUSAGE_SELF)  # every thread, librdkafka's included
    Path(path).write_text(f"{usage.ru_utime + usage.ru_stime}\n")


def _loop(
    bootstrap: str,
    source: str,
    group: str,
    records: int,
    handle: Callable[[Producer, Any], None],
    batch: tuple[int, float] = (1000, 0.5),
) -> None:
    """consume(*batch) -> handle each message -> async commit, until RECORDS were handled."""
    consumer = _consumer(bootstrap, group, source)
    producer = _producer(bootstrap)
    done = 0
    while done < records:
        messages = consumer.consume(*batch)
        for message in messages:
            if message.error() is None:
                if not done:
                    mark_first_record()
                handle(producer, message)
                done += 1
        producer.poll(0)
        if messages:
            consumer.commit(asynchronous=True)
    producer.flush(60)
    consumer.close()
    print(f"{done} records handled in all", flush=True)  # callgrind_peers divides by it


def naive_errors(value: bytes) -> list[str]:
    """json.loads plus isinstance/bounds checks of the tick contract: what a hand-written
    pipeline would do (no duplicate-key, 64-bit or ISO-8601 edge handling)."""
    try:
        record = json.loads(value)
    except ValueError as exc:
        return [f"undecodable: {exc}"]
    if not isinstance(record, dict):
        return ["not an object"]
    errors = [f"missing {name}" for name in TICK_FIELDS if record.get(name) is None]
    price = record.get("price")
    if price is not None and (
        isinstance(price, bool)
        or not isinstance(price, int | float)
        or not math.isfinite(price)
        or not 1e-9 <= price <= 1e7
    ):
        errors.append("bad price")
    size = record.get("size")
    if size is not None and (isinstance(size, bool) or not isinstance(size, int) or size < 0):
        errors.append("bad size")
    for name in ("seq",):
        v = record.get(name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            errors.append(f"bad {name}")
    for name in ("bid", "ask"):
        v = record.get(name)
        if v is not None and (isinstance(v, bool) or not isinstance(v, int | float)):
            errors.append(f"bad {name}")
    ts = record.get("event_ts")
    if ts is not None:
        try:
            datetime.fromisoformat(ts)
        except (TypeError, ValueError):
            errors.append("bad event_ts")
    return errors


def run_passthrough(bootstrap: str, source: str, clean: str, group: str, records: int) -> None:
    """The ceiling: consume -> produce the same bytes, no validation."""

    def handle(producer: Producer, message: Any) -> None:
        _produce(producer, clean, message.value(), message.key())

    _loop(bootstrap, source, group, records, handle)


def run_passthrough_reported(
    bootstrap: str, source: str, clean: str, group: str, records: int
) -> None:
    """The pass-through asking the client for a delivery report per record and ignoring it
    (``operator.is_not``, a C function: no Python frame): what learning that each output was
    delivered costs in confluent-kafka before any use is made of it. The pass-through learns
    nothing of its outputs (it commits whether or not they arrived); a service that must not
    lose a record needs the reports."""

    def handle(producer: Producer, message: Any) -> None:
        _produce(producer, clean, message.value(), message.key(), on_delivery=is_not)

    _loop(bootstrap, source, group, records, handle)


def run_bare(bootstrap: str, source: str, clean: str, group: str, records: int) -> None:
    """Waiting for a batch and nothing else: consume(500, 0.1) -> produce the same bytes and
    headers (the latency bench reads its stamp from them), no validation, no flush per batch."""

    def handle(producer: Producer, message: Any) -> None:
        _produce(producer, clean, message.value(), message.key(), message.headers())

    _loop(bootstrap, source, group, records, handle, batch=(500, 0.1))


def run_naive(bootstrap: str, source: str, clean: str, dlq: str, group: str, records: int) -> None:
    """json.loads + checks; bad records to the DLQ as a json.dumps envelope."""

    def handle(producer: Producer, message: Any) -> None:
        value = message.value()
        errors = naive_errors(value)
        if not errors:
            _produce(producer, clean, value, message.key())
        else:
            envelope = {"payload": value.decode("utf-8", "replace"), "errors": errors}
            _produce(producer, dlq, json.dumps(envelope).encode(), message.key())

    _loop(bootstrap, source, group, records, handle)


def run_quix(bootstrap: str, source: str, clean: str, dlq: str, group: str, records: int) -> None:
    """Quix Streams with a strict pydantic model; invalid records to a DLQ topic."""
    from pydantic import BaseModel, ConfigDict, Field, ValidationError
    from quixstreams import Application

    class Tick(BaseModel):
        model_config = ConfigDict(strict=True)
        symbol: str
        exchange: str
        event_ts: datetime
        seq: int = Field(ge=0)
        price: float = Field(ge=1e-9, le=1e7)
        size: int = Field(ge=0, le=1_000_000_000)
        bid: float | None = Field(ge=1e-9, le=1e7)
        ask: float | None = Field(ge=1e-9, le=1e7)
        bid_sz: int | None = Field(ge=0)
        ask_sz: int | None = Field(ge=0)

    def check(value: bytes) -> tuple[bytes, str | None]:
        mark_first_record()
        try:
            # The model is strict: a call-level strict=False would override it and let a
            # string price or a bool size through (it did until 2026-12-01).
            Tick.model_validate_json(value)
        except ValidationError as exc:
            return value, str(exc.errors(include_url=False)[:3])
        return value, None

    app = Application(
        broker_address=bootstrap,
        consumer_group=group,
        auto_offset_reset="earliest",
        processing_guarantee="at-least-once",
        auto_create_topics=False,
        state_dir=tempfile.mkdtemp(prefix="quix-state-"),
    )
    source_topic = app.topic(source, value_deserializer="bytes", key_deserializer="bytes")
    clean_topic = app.topic(clean, value_serializer="bytes", key_serializer="bytes")
    dlq_topic = app.topic(dlq, value_serializer="json", key_serializer="bytes")
    sdf = app.dataframe(source_topic).apply(check)
    sdf.filter(lambda pair: pair[1] is None).apply(lambda pair: pair[0]).to_topic(clean_topic)
    sdf.filter(lambda pair: pair[1] is not None).apply(
        lambda pair: {"payload": pair[0].decode("utf-8", "replace"), "errors": pair[1]}
    ).to_topic(dlq_topic)
    app.run(timeout=3.0, collect=False)


def run_service(
    peer: str, bootstrap: str, source: str, clean: str, dlq: str, group: str, records: int
) -> None:
    """StreamService at its defaults (exactly-once for service-eos; metrics and health server
    on, as by default; the collector tuned as ``run_service`` tunes it), stopped once it has
    handled RECORDS records. ``service:key=value,...``
    changes those ``batch`` settings (e.g. ``service:linger_s=0.005``)."""
    from harness import batch_settings

    from stream_validator.config.settings import config_from_mapping
    from stream_validator.gcpolicy import collector_tuned
    from stream_validator.service.loop import StreamService

    kafka: dict[str, object] = {"bootstrap_servers": bootstrap, "group_id": group}
    if peer.startswith("service-eos"):
        kafka["transactional_id"] = f"{group}-txn"
    config = config_from_mapping(
        {
            "kafka": kafka,
            # The defaults: metrics and the health server on (on free ports).
            "metrics": {"port": 0},
            "service": {"health_port": 0},
            "batch": batch_settings(peer),
            "routes": [
                {
                    "name": "ticks",
                    "source_topics": [source],
                    "contract": str(TICK_CONTRACT),
                    "clean_topic": clean,
                    "dlq_topic": dlq,
                }
            ],
        }
    )
    service = StreamService(config)
    thread = threading.Thread(target=service.run, daemon=True)
    with collector_tuned():  # as run_service runs the loop
        thread.start()
        while service.state.records == 0 and thread.is_alive():
            time.sleep(0.001)
        mark_first_record()
        while service.state.records < records and thread.is_alive():
            time.sleep(0.05)
        state = service.state
        print(  # bench_rss waits for this line
            f"{peer}: handled {state.records} records in {state.batches} batches "
            f"({state.failed_batches} failed), stopping",
            flush=True,
        )
        service.stop()
        thread.join(60)
    # Batches finished after the count was seen are handled too: callgrind_peers divides by it.
    print(f"{service.state.records} records handled in all", flush=True)
    if service.state.records < records:
        raise SystemExit(f"service stopped after {service.state.records} of {records} records")


def main(argv: list[str]) -> None:
    peer, bootstrap, source, clean, dlq, group, records = argv
    n = int(records)
    if peer == "passthrough":
        run_passthrough(bootstrap, source, clean, group, n)
    elif peer == "passthrough-reported":
        run_passthrough_reported(bootstrap, source, clean, group, n)
    elif peer == "bare":
        run_bare(bootstrap, source, clean, group, n)
    elif peer == "naive":
        run_naive(bootstrap, source, clean, dlq, group, n)
    elif peer == "quix":
        run_quix(bootstrap, source, clean, dlq, group, n)
    elif peer.partition(":")[0] in ("service", "service-eos"):
        run_service(peer, bootstrap, source, clean, dlq, group, n)
    else:
        raise SystemExit(f"unknown peer {peer!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
