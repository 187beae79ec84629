"""A registry route's batch planned from decoded values: the schemas in the batch event, the
schema in each DLQ envelope, the per-symbol state fed from the decoded records."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from stream_validator.config.model import RouteConfig
from stream_validator.contracts import load_contract
from stream_validator.records import SourceRecord
from stream_validator.registry.outcome import Decoded, SchemaRef, Undecodable
from stream_validator.service.plan.planner import RouteProcessor
from tests.support.registryformats import TICK, TICK_CONTRACT

AT = "2026-12-03T12:00:01+00:00"


def processor(tmp_path: Path, contract_text: str = TICK_CONTRACT) -> RouteProcessor:
    path = tmp_path / "c.yaml"
    path.write_text(contract_text)
    route = RouteConfig("ticks", str(path), load_contract(path), "clean", "dlq", ("src",))
    return RouteProcessor(route, consumer_group="g", max_message_bytes=1_048_576, null_window=10)


def records(n: int) -> list[SourceRecord]:
    return [SourceRecord("src", 0, i, b"k", b"\x00framed%d" % i, [], 0) for i in range(n)]


def test_the_batch_event_names_the_schemas_and_the_envelope_its_schema(tmp_path: Path) -> None:
    """schemas: each writer schema with its record count, most frequent first; a DLQ
    envelope carries its record's schema id and version; undecodable keeps its reason."""
    v1, v2 = SchemaRef(7, None, 1), SchemaRef(9, None, 2)
    decoded = [
        Decoded(dict(TICK), v1),
        Decoded({**TICK, "size": 0}, v2),
        Decoded(dict(TICK), v2),
        Undecodable("payload does not decode as avro under schema id 9: EOFError", v2),
        None,
    ]
    plan = processor(tmp_path).plan(records(5), validated_at=AT, decoded_values=decoded)
    assert [o.kind for o in plan.outputs] == ["clean", "dlq", "clean", "dlq", "dlq"]
    event = plan.event(plan.violation_counts, (2, 3, 0))
    assert event["schemas"] == [
        {"id": 9, "version": 2, "records": 3},
        {"id": 7, "version": 1, "records": 1},
    ]
    envelopes = [json.loads(o.value or b"") for o in plan.outputs if o.kind == "dlq"]
    assert [e.get("schema") for e in envelopes] == [
        {"id": 9, "version": 2},
        {"id": 9, "version": 2},
        None,
    ]
    assert envelopes[1]["violations"][0]["kind"] == "undecodable"
    assert envelopes[1]["violation_reason"].endswith("EOFError")
    assert envelopes[2]["violations"][0]["kind"] == "not_a_mapping"  # a tombstone
    assert plan.report.violation_counts == Counter(
        {("size", "below_min"): 1, (None, "undecodable"): 1, (None, "not_a_mapping"): 1}
    )


def test_a_json_route_event_has_no_schemas(tmp_path: Path) -> None:
    """Plain JSON routes keep their event as it was (no schemas key)."""
    value = json.dumps(
        {**TICK, "ts": TICK["ts"].isoformat(), "recv": TICK["recv"].isoformat()}
    ).encode()
    plan = processor(tmp_path).plan(
        [SourceRecord("src", 0, 0, b"k", value, [], 0)], validated_at=AT
    )
    assert "schemas" not in plan.event(plan.violation_counts, (1, 0, 0))


def test_datetimes_meet_skew_windows(tmp_path: Path) -> None:
    """A decoded datetime is judged by a skew window like an ISO string is."""
    contract = TICK_CONTRACT.replace(
        "{name: ts, type: datetime}", "{name: ts, type: datetime, max_age_s: 60}"
    )
    old = {**TICK, "ts": datetime(2026, 12, 3, 11, 0, tzinfo=UTC)}
    decoded = [Decoded(dict(TICK), SchemaRef(1)), Decoded(old, SchemaRef(1))]
    plan = processor(tmp_path, contract).plan(records(2), validated_at=AT, decoded_values=decoded)
    assert [o.kind for o in plan.outputs] == ["clean", "dlq"]


def test_the_per_symbol_state_reads_decoded_records(tmp_path: Path) -> None:
    """tick.yaml's state on decoded ticks (event_ts a datetime): a sequence gap is seen."""
    from tests.support.ticks import TICK_YAML, tick

    route = RouteConfig("ticks", str(TICK_YAML), load_contract(TICK_YAML), "c", "d", ("src",))
    planner = RouteProcessor(route, consumer_group="g", max_message_bytes=1_048_576, null_window=10)
    ticks = [tick(seq, symbol="AAPL") for seq in (1, 2, 5)]
    for t in ticks:
        t["event_ts"] = datetime.fromisoformat(str(t["event_ts"]))
    decoded = [Decoded(t, SchemaRef(3, None, 1)) for t in ticks]
    plan = planner.plan(records(3), validated_at=AT, decoded_values=decoded)
    assert [o.kind for o in plan.outputs] == ["clean"] * 3
    assert plan.state is not None
    assert plan.state.counts.get("sequence_gap") == 1
