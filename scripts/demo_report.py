"""Print what happened in a demo run: topic counts, a DLQ envelope, batch events, endpoints."""

from __future__ import annotations

import argparse
import json
import sys
import urllib.request
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, TopicPartition
from prometheus_client.parser import text_string_to_metric_families

from stream_validator.config.settings import load_config
from stream_validator.dlq.envelope_reader import dlq_document
from stream_validator.kafka.messages import source_record
from stream_validator.kafka.topics import topics_of


def end_offsets(consumer: Consumer, topic: str) -> int:
    meta = consumer.list_topics(topic=topic, timeout=10).topics[topic]
    return sum(
        consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
        for p in meta.partitions
    )


def sample_envelope(consumer: Consumer, topic: str) -> dict[str, Any] | None:
    meta = consumer.list_topics(topic=topic, timeout=10).topics[topic]
    consumer.assign([TopicPartition(topic, p, 0) for p in meta.partitions])
    for message in consumer.consume(num_messages=50, timeout=5):
        if message.error() is None:
            # Either DLQ form: a JSON envelope, or the original value with sv.dlq.* headers.
            envelope = dlq_document(source_record(message))
            violations = envelope.get("violations") if envelope else None
            if not envelope or not isinstance(violations, list) or not violations:
                continue
            if violations[0].get("kind") not in ("undecodable", "not_a_mapping"):
                return envelope
    return None


def get(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return str(response.read().decode())
    except OSError as exc:
        return f"(unreachable: {exc})"


def route_totals(metrics: str) -> dict[str, Counter[str]]:
    """Per route: the batches, records, clean and DLQ records delivered, from /metrics."""
    names = {
        "stream_validator_batches": "batches",
        "stream_validator_records_consumed": "records",
        "stream_validator_records_valid": "clean",
        "stream_validator_records_quarantined": "dlq",
    }
    totals: dict[str, Counter[str]] = defaultdict(Counter)
    if metrics.startswith("(unreachable"):
        return totals
    for family in text_string_to_metric_families(metrics):
        key = names.get(family.name)
        for sample in family.samples if key else ():
            if sample.name.endswith("_total") and "route" in sample.labels:
                totals[sample.labels["route"]][key] += int(sample.value)
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--health", required=True)
    parser.add_argument("--metrics", required=True)
    parser.add_argument("--simulator", nargs="*", default=[])
    args = parser.parse_args()
    config = load_config(args.config)

    print("\n=== what the simulators produced")
    for path in args.simulator:
        lines = Path(path).read_text().strip().splitlines()
        print(f"  {Path(path).stem}: {lines[-1] if lines else '(nothing)'}")

    consumer = Consumer(
        {
            "bootstrap.servers": config.kafka.bootstrap_servers,
            "group.id": "demo-report",
            "enable.auto.commit": False,
        }
    )
    print("\n=== records per topic")
    for topic in [*topics_of(config), "md.books.raw.xnas"]:
        print(f"  {topic:22} {end_offsets(consumer, topic):>7}")

    envelope = sample_envelope(consumer, "md.ticks.dlq")
    order = sample_envelope(consumer, "md.orders.dlq")
    consumer.close()
    print("\n=== a sample DLQ envelope (md.ticks.dlq)")
    print(json.dumps(envelope, indent=2)[:2500] if envelope else "  (none)")
    print("\n=== a sample order's violations (md.orders.dlq)")
    print(json.dumps(order["violations"], indent=2)[:1000] if order else "  (none)")

    metrics = get(args.metrics)
    # Batches with nothing to report are logged at DEBUG only: the totals come from the
    # metrics, which count every delivered batch.
    totals = route_totals(metrics)
    events = [
        json.loads(line)
        for line in Path(args.log).read_text().splitlines()
        if line.startswith("{") and '"msg":"batch"' in line
    ]
    kinds: dict[str, Counter[str]] = defaultdict(Counter)
    drift: dict[str, set[str]] = defaultdict(set)
    breaches: dict[str, int] = Counter()
    symbol_events: dict[str, Counter[str]] = defaultdict(Counter)
    examples: dict[str, dict[str, list[str]]] = defaultdict(dict)
    for event in events:
        state = event.get("symbol_state") or {}
        for kind, found in (state.get("events") or {}).items():
            symbol_events[event["route"]][kind] += found["count"]
            examples[event["route"]].setdefault(kind, found["examples"][:3])
        route = event["route"]
        kinds[route].update(event["violations_by_kind"])
        drift[route].update(event["unknown_fields"])
        breaches[route] += bool(event["null_breach_fields"])
    print(
        f"\n=== batch events ({len(events)} logged as JSON in {args.log}: the batches with"
        " something to report; totals from the metrics)"
    )
    for route in sorted(totals.keys() | kinds.keys()):
        print(f"  route {route}: {dict(totals[route])}")
        print(f"    violations by kind: {dict(kinds[route].most_common())}")
        print(
            f"    batches breaching the null ceiling: {breaches[route]}"
            f"   unknown fields (drift): {sorted(drift[route]) or '-'}"
        )
        if symbol_events[route]:
            print(f"    per-symbol state events: {dict(symbol_events[route])}")
            print(f"      e.g. symbols: {examples[route]}")
    breakers = [
        json.loads(line)
        for line in Path(args.log).read_text().splitlines()
        if line.startswith("{") and '"msg":"breaker"' in line
    ]
    print(f"\n=== DLQ circuit breaker events ({len(breakers)})")
    for event in breakers[:6]:
        keep = ("route", "before", "after", "cause", "breaker_action", "reason")
        print("  ", json.dumps({k: event.get(k) for k in keep}))
    interesting = [e for e in events if e["null_breach_fields"] or e["unknown_fields"]][:3]
    for event in interesting:
        keep = (
            "route",
            "records",
            "valid",
            "quarantined",
            "violations_by_kind",
            "null_breach_fields",
            "null_ceiling_action",
            "unknown_fields",
        )
        print("  e.g.", json.dumps({k: event[k] for k in keep}))

    print("\n=== endpoints")
    print(f"  liveness  {args.health}/healthz -> {get(args.health + '/healthz')}")
    print(f"  readiness {args.health}/readyz  -> {get(args.health + '/readyz')}")
    print(f"  status    {args.health}/status")
    print(f"  metrics   {args.metrics}")
    lines = metrics.splitlines()
    prefixes = (
        "stream_validator_records_",
        "stream_validator_drift_batches_total",
        "stream_validator_symbol_events_total",
        "stream_validator_breaker_",
    )
    shown = [m for m in lines if m.startswith(prefixes) and "_created" not in m]
    for line in shown[:30]:
        print(f"    {line}")


if __name__ == "__main__":
    sys.exit(main())
