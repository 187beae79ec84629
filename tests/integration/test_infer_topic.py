"""``stream-validator infer --bootstrap --topic`` on a real broker: the newest records of
every partition, drafted into a contract that validates them all."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_validator.cli.main import main
from stream_validator.codec import encode_json
from stream_validator.contracts import load_contract
from stream_validator.errors import InferExit
from stream_validator.lifecycle.topic import plan_ranges
from stream_validator.verify import DataSchemaContractVerifier
from tests.integration.kafka_helpers import create_topic, produce


def test_infer_drafts_a_contract_from_a_topic_sample(
    kafka_bootstrap: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """100 records in each of 3 partitions, then a tombstone and a non-JSON value in
    partition 0: --sample 200 reads the newest of each partition as planned, reports the
    two non-records, and the draft passes every sampled record."""
    topic = create_topic(kafka_bootstrap, 3, prefix="infer")
    by_partition: dict[int, list[bytes | None]] = {0: [], 1: [], 2: []}
    for i in range(300):
        record = {
            "symbol": f"S{i % 7}",
            "event_ts": f"2024-05-01T10:{i % 60:02d}:00Z",
            "price": 100.0 + i / 10,
            "size": i,
            "bid": None if i % 25 == 0 else 99.0,
            "book": {"levels": [{"px": 1.0, "sz": i % 4}]},
        }
        by_partition[i % 3].append(encode_json(record))
    by_partition[0] += [None, b"not json"]
    for partition, values in by_partition.items():
        produce(kafka_bootstrap, topic, [(None, v, None) for v in values], partition=partition)
    ranges = plan_ranges({p: len(values) for p, values in by_partition.items()}, 200)
    sampled = [v for p, (lo, hi) in ranges.items() for v in by_partition[p][lo:hi]]
    assert len(sampled) == 200 and None in sampled

    draft = tmp_path / "draft.yaml"
    argv = ["infer", "--bootstrap", kafka_bootstrap, "--topic", topic, "--sample", "200"]
    assert main([*argv, "-o", str(draft), "--timeout", "20"]) == InferExit.OK
    err = capsys.readouterr().err
    assert f"infer: 198 records from 'topic {topic}'; 2 lines are no record" in err
    assert "1 null value (a Kafka tombstone)" in err and "1 not one JSON value" in err
    contract = load_contract(draft)
    assert contract.name == topic
    assert contract.field_names == ("symbol", "event_ts", "price", "size", "bid", "book")
    records = [value for value in sampled if value is not None and value != b"not json"]
    report = DataSchemaContractVerifier(contract).validate_payloads(records)
    assert (report.valid_count, report.null_breach_fields) == (198, {})
    lowest = min(int(v.split(b'"size":')[1].split(b",")[0]) for v in records)
    size = next(spec for spec in contract.fields if spec.name == "size")
    assert size.min_value is not None and lowest * 0.9 - 1 <= size.min_value <= lowest
