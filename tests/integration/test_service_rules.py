"""Record rules and timestamp checks on the real broker: a crossed book is quarantined with
its rule named in the envelope, a locked book and a wide spread are flagged yet delivered
clean, a naive timestamp is quarantined, and the counters agree with the topics."""

from __future__ import annotations

import json
from pathlib import Path

from kafka_helpers import produce, read_topic
from service_helpers import ThreadedService, encode, new_stream, tick, wait_until

from stream_validator.config.settings import load_config
from stream_validator.service.app import metrics_hooks
from stream_validator.service.telemetry.metrics import CollectorRegistry, ServiceMetrics


def test_rules_quarantine_or_flag_as_declared(kafka_bootstrap: str, tmp_path: Path) -> None:
    stream = new_stream(kafka_bootstrap, tmp_path)
    good = [tick(i) for i in range(20)]
    crossed = {**tick(100), "bid": 101.0, "ask": 100.0}  # bid > ask: quarantine
    locked = {**tick(101), "bid": 100.0, "ask": 100.0}  # bid == ask: flag
    wide = {**tick(102), "bid": 90.0, "ask": 100.0}  # spread 10 % of ask: flag
    naive = {**tick(103), "event_ts": "2026-11-30T14:30:00"}  # no offset: quarantine
    records = [*good, crossed, locked, wide, naive]
    produce(
        kafka_bootstrap,
        stream.source,
        [(f"k{i}".encode(), encode(r), None) for i, r in enumerate(records)],
    )
    registry = CollectorRegistry()
    with ThreadedService(
        load_config(stream.config, environ={}), metrics_hooks(ServiceMetrics(registry))
    ) as running:
        wait_until(stream.all_consumed, 60, "every record committed")
        events = list(running.service.state.recent_events)

    clean = {m.key for m in read_topic(kafka_bootstrap, stream.clean)}
    assert clean == {f"k{i}".encode() for i in [*range(20), 21, 22]}  # good, locked, wide
    envelopes = {m.key: json.loads(m.value or b"") for m in read_topic(kafka_bootstrap, stream.dlq)}
    assert set(envelopes) == {b"k20", b"k23"}
    [rule] = envelopes[b"k20"]["violations"]
    assert (rule["kind"], rule["rule"]) == ("rule_violation", "crossed_book")
    assert "bid <= ask" in rule["message"]
    [naive_ts] = envelopes[b"k23"]["violations"]
    assert (naive_ts["field"], naive_ts["kind"]) == ("event_ts", "type_mismatch")
    assert "offset" in naive_ts["message"] or "timezone" in naive_ts["message"]

    flagged: dict[str, int] = {}
    for event in events:
        for name, count in event.get("flagged_by_rule", {}).items():
            flagged[name] = flagged.get(name, 0) + count
    assert flagged == {"locked_book": 1, "spread_band": 1}
    labels = {"route": "ticks", "contract": "tick"}
    assert registry.get_sample_value("stream_validator_records_valid_total", labels) == 22
    assert registry.get_sample_value("stream_validator_records_quarantined_total", labels) == 2
    rule_labels = {
        "contract": "tick",
        "field": "_record",
        "kind": "rule_violation",
        "rule": "crossed_book",
    }
    assert registry.get_sample_value("stream_validator_violations_total", rule_labels) == 1
