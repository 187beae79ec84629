"""Batch semantics: null ceiling, drift, validity, snapshots, order, bytes input."""

from __future__ import annotations

import json
import math

import pytest

from stream_validator import DataSchemaContractVerifier, FieldSpec, SchemaContract
from tests.support.ticks import seed_tick, tick_contract


def quote_verifier(pct: float = 1.0) -> DataSchemaContractVerifier:
    contract = SchemaContract(
        "quote",
        [
            FieldSpec("symbol", str),
            FieldSpec("bid", float, is_nullable=True),
            FieldSpec("ask", float, is_nullable=True),
        ],
        max_allowed_null_pct=pct,
    )
    return DataSchemaContractVerifier(contract)


def quotes(n: int, null_bids: int) -> list[dict[str, object]]:
    return [{"symbol": "A", "bid": None if i < null_bids else 1.0, "ask": 2.0} for i in range(n)]


def test_null_rates_cover_every_nullable_field() -> None:
    """null_rates has one entry per nullable field, in percent."""
    report = quote_verifier(50.0).validate_batch(quotes(10, 3))
    assert report.null_rates == {"bid": 30.0, "ask": 0.0}
    assert report.null_counts == {"bid": 3, "ask": 0}


def test_null_ceiling_breach_invalidates_batch_without_quarantine() -> None:
    """A null spike breaches the ceiling and invalidates the batch with nothing quarantined."""
    report = quote_verifier(1.0).validate_batch(quotes(100, 2))
    assert report.quarantined_records == []
    assert report.null_breach_fields == {"bid": 2.0}
    assert report.is_batch_valid is False


@pytest.mark.parametrize(
    ("pct", "n", "nulls"),
    [(1.0, 100, 1), (0.3, 1000, 3), (10.0, 30, 3), (0.0, 5, 0), (100.0, 4, 4), (12.5, 8, 1)],
)
def test_null_rate_equal_to_ceiling_is_not_a_breach(pct: float, n: int, nulls: int) -> None:
    """The ceiling is inclusive, also where binary floating point would round (0.3%)."""
    report = quote_verifier(pct).validate_batch(quotes(n, nulls))
    assert report.null_breach_fields == {}
    assert report.is_batch_valid is True


def test_zero_ceiling_breaches_on_one_null() -> None:
    """max_allowed_null_pct=0 makes a single null a breach."""
    report = quote_verifier(0.0).validate_batch(quotes(1000, 1))
    assert report.null_breach_fields == {"bid": 0.1}


def test_null_rate_counts_only_surviving_records() -> None:
    """Quarantined records do not count toward the null rate."""
    batch: list[object] = quotes(99, 1)
    batch += [{"symbol": 5, "bid": None, "ask": None}] * 50
    report = quote_verifier(1.0).validate_batch(batch)
    assert len(report.quarantined_records) == 50
    assert report.null_rates["bid"] == pytest.approx(100 / 99)
    assert report.null_rates["ask"] == 0.0


def test_no_survivors_means_zero_rates_and_no_breach() -> None:
    """With every record quarantined the rates are 0 and nothing breaches."""
    report = quote_verifier(0.0).validate_batch([None, {"bid": None}])
    assert report.null_rates == {"bid": 0.0, "ask": 0.0}
    assert report.null_breach_fields == {}


def test_all_null_batch_breaches() -> None:
    """A batch where every nullable value is null breaches below 100%."""
    report = quote_verifier(99.0).validate_batch(quotes(10, 10))
    assert report.null_breach_fields == {"bid": 100.0}


def test_empty_batch_is_valid() -> None:
    """An empty batch is valid, with zero counts and rates."""
    report = quote_verifier().validate_batch([])
    assert report.total_records == 0
    assert report.valid_records == [] and report.quarantined_records == []
    assert report.null_rates == {"bid": 0.0, "ask": 0.0}
    assert report.is_batch_valid is True and report.drift_detected is False


def test_drift_collected_from_quarantined_records_too(
    tick_verifier: DataSchemaContractVerifier,
) -> None:
    """Unknown fields of quarantined records still land in observed_unknown_fields."""
    report = tick_verifier.validate_batch([seed_tick(), {"price": "x", "new_a": 1}, {"new_b": 2}])
    assert report.observed_unknown_fields == {"new_a", "new_b"}


def test_drift_alone_keeps_batch_valid(tick_verifier: DataSchemaContractVerifier) -> None:
    """Drift is reported but does not invalidate a batch."""
    report = tick_verifier.validate_batch([{**seed_tick(), "venue": "X"}])
    assert report.drift_detected and report.is_batch_valid


def test_outputs_keep_input_order(tick_verifier: DataSchemaContractVerifier) -> None:
    """valid_records and quarantined_records keep input order; indices point into the batch."""
    batch: list[object] = [seed_tick(0), None, seed_tick(1), 5, seed_tick(2)]
    report = tick_verifier.validate_batch(batch)
    assert report.valid_records == [batch[0], batch[2], batch[4]]
    assert report.valid_indices == [0, 2, 4]
    assert [q.index for q in report.quarantined_records] == [1, 3]
    assert report.total_records == 5


def test_generator_input_is_consumed_once(tick_verifier: DataSchemaContractVerifier) -> None:
    """validate_batch accepts any iterable, including a one-shot generator."""
    report = tick_verifier.validate_batch(seed_tick(i) for i in range(5))
    assert report.total_records == 5 and len(report.valid_records) == 5


def test_raw_payload_is_a_snapshot(tick_verifier: DataSchemaContractVerifier) -> None:
    """Mutating the caller's dict after validation leaves the DLQ evidence intact."""
    record = {"price": "bad", "volume": 1, "symbol": "A"}
    report = tick_verifier.validate_batch([record])
    record["price"] = 1.0
    record["extra"] = True
    assert report.quarantined_records[0].raw_payload == {"price": "bad", "volume": 1, "symbol": "A"}


def test_list_payload_is_snapshotted(tick_verifier: DataSchemaContractVerifier) -> None:
    """A quarantined list payload is copied too."""
    payload = [1, 2]
    report = tick_verifier.validate_batch([payload])
    payload.append(3)
    assert report.quarantined_records[0].raw_payload == [1, 2]


def test_verifier_never_mutates_input(tick_verifier: DataSchemaContractVerifier) -> None:
    """Records are left exactly as given."""
    batch = [seed_tick(1), {"price": math.nan, "volume": -1, "symbol": "A", "x": 1}]
    before = json.dumps(batch, sort_keys=True, default=str)
    tick_verifier.validate_batch(batch)
    assert json.dumps(batch, sort_keys=True, default=str) == before


def test_counts_by_kind_and_field(tick_verifier: DataSchemaContractVerifier) -> None:
    """The report tallies violations by kind and by field."""
    report = tick_verifier.validate_batch([None, {"price": -1.0, "volume": 1.5, "symbol": "A"}])
    assert report.counts_by_kind() == {"not_a_mapping": 1, "below_min": 1, "type_mismatch": 1}
    assert report.counts_by_field() == {"<record>": 1, "price": 1, "volume": 1}


def test_report_names_its_contract() -> None:
    """The report carries the contract's name and version."""
    report = DataSchemaContractVerifier(tick_contract(version="7")).validate_batch([])
    assert (report.contract_name, report.contract_version) == ("tick", "7")


def test_broken_mapping_is_quarantined() -> None:
    """A Mapping whose lookups raise is quarantined, not propagated."""
    from collections.abc import Iterator, Mapping

    class Broken(Mapping[str, object]):
        def __getitem__(self, key: str) -> object:
            raise RuntimeError("boom")

        def __iter__(self) -> Iterator[str]:
            raise RuntimeError("boom")

        def __len__(self) -> int:
            return 1

    report = DataSchemaContractVerifier(tick_contract()).validate_batch([Broken(), seed_tick()])
    assert report.quarantined_records[0].kinds == ["not_a_mapping"]
    assert len(report.valid_records) == 1


# --- raw bytes -------------------------------------------------------------------


def payload(record: object) -> bytes:
    return json.dumps(record).encode()


def test_payloads_valid_records_are_decoded(tick_verifier: DataSchemaContractVerifier) -> None:
    """Valid payloads come back decoded, with indices to their original bytes."""
    payloads = [payload(seed_tick(1)), b"nope", payload(seed_tick(2))]
    report = tick_verifier.validate_payloads(payloads)
    assert report.valid_records == [seed_tick(1), seed_tick(2)]
    assert [payloads[i] for i in report.valid_indices] == [payloads[0], payloads[2]]


@pytest.mark.parametrize(
    "raw",
    [
        b"\xff\xfe{}",
        b'{"price": 1.0,',
        b'{"price": NaN, "volume": 1, "symbol": "A"}',
        b'{"price": Infinity, "volume": 1, "symbol": "A"}',
        b'{"price": 1e400, "volume": 1, "symbol": "A"}',
        b"[" * 5000 + b"]" * 5000,
        b"",
        b"   ",
        b'{"a": 1} {"b": 2}',
    ],
)
def test_undecodable_payloads(tick_verifier: DataSchemaContractVerifier, raw: bytes) -> None:
    """Bad UTF-8, syntax, NaN/Infinity literals, overflow, deep nesting: undecodable."""
    report = tick_verifier.validate_payloads([raw])
    (quarantined,) = report.quarantined_records
    assert quarantined.kinds == ["undecodable"]
    assert quarantined.raw_payload == raw


def test_integer_beyond_64_bits_is_undecodable_not_mismatch(
    tick_verifier: DataSchemaContractVerifier,
) -> None:
    """A >64-bit integer literal (which the decoder widens to float) is reported as undecodable."""
    raw = b'{"price": 1.0, "volume": 18446744073709551616, "symbol": "A"}'
    report = tick_verifier.validate_payloads([raw])
    assert report.quarantined_records[0].kinds == ["undecodable"]
    assert report.quarantined_records[0].violations[0].field == "volume"


def test_huge_float_literal_is_a_type_mismatch_on_int(
    tick_verifier: DataSchemaContractVerifier,
) -> None:
    """A float literal in an int field stays a type_mismatch even when it is huge."""
    raw = b'{"price": 1.0, "volume": 1.8446744073709552e19, "symbol": "A"}'
    assert tick_verifier.validate_payloads([raw]).quarantined_records[0].kinds == ["type_mismatch"]


def test_tombstone_is_not_a_mapping(tick_verifier: DataSchemaContractVerifier) -> None:
    """A None payload (Kafka tombstone) is not_a_mapping."""
    report = tick_verifier.validate_payloads([None])
    assert report.quarantined_records[0].kinds == ["not_a_mapping"]
    assert report.quarantined_records[0].raw_payload is None


@pytest.mark.parametrize("raw", [b"[1, 2]", b"42", b"null", b'"text"', b"true"])
def test_json_non_objects_are_not_a_mapping(
    tick_verifier: DataSchemaContractVerifier, raw: bytes
) -> None:
    """Top-level arrays, numbers, null, strings and booleans are not_a_mapping."""
    assert tick_verifier.validate_payloads([raw]).quarantined_records[0].kinds == ["not_a_mapping"]


def test_oversized_payload_is_not_decoded() -> None:
    """A payload longer than max_payload_bytes is oversized; one at the limit is decoded."""
    verifier = DataSchemaContractVerifier(tick_contract(), max_payload_bytes=64)
    at_limit = payload(seed_tick()).ljust(64)
    report = verifier.validate_payloads([at_limit, at_limit + b" "])
    assert report.valid_indices == [0]
    assert report.quarantined_records[0].kinds == ["oversized"]
    assert report.quarantined_records[0].raw_payload == at_limit + b" "


def test_bytearray_and_memoryview_payloads(tick_verifier: DataSchemaContractVerifier) -> None:
    """bytearray and memoryview payloads are accepted; raw_payload is an immutable bytes copy."""
    buf = bytearray(b'{"price": "x", "volume": 1, "symbol": "A"}')
    report = tick_verifier.validate_payloads([buf, memoryview(payload(seed_tick()))])
    buf[0:1] = b"X"
    assert (
        report.quarantined_records[0].raw_payload == b'{"price": "x", "volume": 1, "symbol": "A"}'
    )
    assert report.valid_indices == [1]


def test_non_bytes_payload_is_quarantined(tick_verifier: DataSchemaContractVerifier) -> None:
    """A str passed to validate_payloads is quarantined, not decoded or raised."""
    report = tick_verifier.validate_payloads(['{"price": 1}'])  # type: ignore[list-item]
    assert report.quarantined_records[0].kinds == ["not_a_mapping"]


def test_payload_and_record_paths_agree(tick_verifier: DataSchemaContractVerifier) -> None:
    """The same JSON objects give the same verdicts via bytes and via dicts."""
    records: list[object] = [seed_tick(1), {"price": -1, "volume": True}, {"x": 1}, [1]]
    a = tick_verifier.validate_batch(records)
    b = tick_verifier.validate_payloads([payload(r) for r in records])
    assert [q.violations for q in a.quarantined_records] == [
        q.violations for q in b.quarantined_records
    ]
    assert a.observed_unknown_fields == b.observed_unknown_fields


def test_duplicate_key_is_quarantined(tick_verifier: DataSchemaContractVerifier) -> None:
    """A top-level key named twice is duplicate_key (field = the key), though each value passes."""
    raw = b'{"price": -1, "price": 5.0, "volume": 1, "symbol": "A"}'
    [quarantined] = tick_verifier.validate_payloads([raw]).quarantined_records
    assert [(v.field, v.kind) for v in quarantined.violations] == [("price", "duplicate_key")]
    assert quarantined.raw_payload == raw


def test_duplicate_key_is_listed_with_the_other_violations(
    tick_verifier: DataSchemaContractVerifier,
) -> None:
    """A duplicate comes first, then every other violation of the record (last value checked)."""
    raw = b'{"price": 1.0, "price": "x", "volume": 1, "symbol": "A"}'
    [quarantined] = tick_verifier.validate_payloads([raw]).quarantined_records
    assert quarantined.kinds == ["duplicate_key", "type_mismatch"]


@pytest.mark.parametrize(
    "raw",
    [
        rb'{"pr\u0069ce": -1, "price": 5.0, "volume": 1, "symbol": "A"}',
        b'{ "price" :-1 ,\n\t"price"\r\n: 5.0, "volume": 1, "symbol": "A"}',
        b'{"price": 5.0, "volume": 1, "symbol": "A", "x": {"price": 1}, "price": 6.0}',
        b'{"symbol": "A", "volume": 1, "price": 5.0, "symbol": "\\",\\"symbol\\":"}',
    ],
    ids=["escaped-key", "whitespace", "after-nested-object", "string-holding-quotes"],
)
def test_duplicate_key_found_in_any_spelling(
    tick_verifier: DataSchemaContractVerifier, raw: bytes
) -> None:
    """Escapes, whitespace, nested objects and strings with quotes never hide a duplicate."""
    [quarantined] = tick_verifier.validate_payloads([raw]).quarantined_records
    assert "duplicate_key" in quarantined.kinds


def test_repeated_key_text_that_is_no_duplicate_passes(
    tick_verifier: DataSchemaContractVerifier,
) -> None:
    """Keys repeated inside strings, nested objects or arrays are no top-level duplicate."""
    raw = (
        b'{"price": 5.0, "volume": 1, "symbol": "\\"price\\": 1, \\"volume\\":2",'
        b' "x": {"price": 1, "y": {"price": 2}}, "z": [{"price": 1}, {"price": 2}]}'
    )
    report = tick_verifier.validate_payloads([raw])
    assert report.valid_indices == [0]


def test_nesting_at_decoder_limit_is_quarantined_not_raised(
    tick_verifier: DataSchemaContractVerifier,
) -> None:
    """Arrays nested 1000 deep, as the payload or as a field value, are quarantined."""
    deep = b"[" * 1000 + b"]" * 1000
    as_field = b'{"price": ' + deep + b', "volume": 1, "symbol": "A"}'
    report = tick_verifier.validate_payloads([deep, as_field, payload(seed_tick())])
    assert [q.kinds for q in report.quarantined_records] == [["not_a_mapping"], ["type_mismatch"]]
    assert report.valid_indices == [2]
    assert all(len(q.violation_reason) < 200 for q in report.quarantined_records)


def test_deep_decoded_values_are_quarantined_not_raised(
    tick_verifier: DataSchemaContractVerifier,
) -> None:
    """validate_batch renders deep lists and huge ints without recursion or size blow-up."""
    deep: list[object] = []
    for _ in range(5000):
        deep = [deep]
    records: list[object] = [
        deep,
        {**seed_tick(), "price": deep},
        {**seed_tick(), "symbol": 7**9999},
    ]
    report = tick_verifier.validate_batch(records)
    assert [q.kinds for q in report.quarantined_records] == [
        ["not_a_mapping"],
        ["type_mismatch"],
        ["type_mismatch"],
    ]
    assert all(len(q.violation_reason) < 200 for q in report.quarantined_records)


def test_unexpected_error_quarantines_only_that_record(
    tick_verifier: DataSchemaContractVerifier,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A raising check gives validator_error (type name only), logged once per batch."""
    from stream_validator.verify.rules import RecordInspector

    def explode(self: RecordInspector, record: object) -> None:
        raise RecursionError("deep inside")

    monkeypatch.setattr(RecordInspector, "inspect", explode)
    # An escaped key: the native core leaves the record to the Python rules, which raise.
    bad = payload({**seed_tick(), "price": "x"}).replace(b'"price"', b'"pr\\u0069ce"')
    report = tick_verifier.validate_payloads([bad, payload(seed_tick()), bad])
    assert report.valid_indices == [1]
    assert [q.violations[0].as_dict() for q in report.quarantined_records] == [
        {"field": None, "kind": "validator_error", "message": "RecursionError"}
    ] * 2
    assert [r.levelname for r in caplog.records] == ["ERROR"]
    assert caplog.records[0].exc_info is not None


# --- a contract at the grammar's limits -------------------------------------------


@pytest.mark.parametrize("fast_path", [True, False])
def test_a_long_rule_chain_is_judged_not_a_crash(fast_path: bool) -> None:
    """A valid rule chaining 450 sums (generated code nesting past Python's 200
    parentheses) still builds a verifier whose verdicts are the rule's."""
    from stream_validator import RuleSpec
    from stream_validator.contracts.expr import MAX_RULE_LENGTH

    check = "+".join(["a"] * 450) + " <= b"
    assert len(check) <= MAX_RULE_LENGTH
    contract = SchemaContract(
        "chain",
        [FieldSpec("a", float), FieldSpec("b", float)],
        rules=[RuleSpec.of("long", check)],
    )
    verifier = DataSchemaContractVerifier(contract, fast_path=fast_path)
    report = verifier.validate_payloads([b'{"a": 1.0, "b": 450.0}', b'{"a": 1.0, "b": 449.5}'])
    assert report.valid_indices == [0]
    assert [q.kinds for q in report.quarantined_records] == [["rule_violation"]]
    assert verifier.validate_batch([{"a": 1, "b": 451}]).quarantined_records == []
