"""Record rules, require_timezone and skew windows, through the verifier's public calls."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from stream_validator import (
    DataSchemaContractVerifier,
    FieldSpec,
    RuleSpec,
    SchemaContract,
    SchemaContractValidationReport,
)

NOW = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
FIELDS = [
    FieldSpec("ts", datetime, require_timezone=True, max_future_s=5, max_age_s=60),
    FieldSpec("bid", float, is_nullable=True, min_value=0.0),
    FieldSpec("ask", float, is_nullable=True, min_value=0.0),
]
RULES = [
    RuleSpec.of("crossed_book", "bid <= ask"),
    RuleSpec.of("locked_book", "bid != ask", "flag"),
    RuleSpec.of("spread_band", "ask - bid <= 0.05 * ask", "flag"),
]
CONTRACT = SchemaContract("book", FIELDS, max_allowed_null_pct=100.0, rules=RULES)


def tick(**changes: object) -> dict[str, object]:
    record: dict[str, object] = {"ts": "2026-12-01T10:00:00Z", "bid": 99.0, "ask": 100.0}
    record.update(changes)
    return {k: v for k, v in record.items() if v is not ...}


def validate(
    *records: dict[str, object], now: datetime | None = NOW, fast_path: bool = True
) -> SchemaContractValidationReport:
    verifier = DataSchemaContractVerifier(CONTRACT, fast_path=fast_path)
    payloads = [json.dumps(r).encode() for r in records]
    report = verifier.validate_payloads(payloads, now=now)
    # Every path gives the same answer: decoded records, the full rules alone.
    for other in (
        verifier.validate_batch(records, now=now),
        DataSchemaContractVerifier(CONTRACT, fast_path=False).validate_payloads(payloads, now=now),
    ):
        assert other.valid_indices == report.valid_indices
        assert [q.violations for q in other.quarantined_records] == [
            q.violations for q in report.quarantined_records
        ]
        assert other.flagged_counts == report.flagged_counts
    return report


def kinds(report: SchemaContractValidationReport) -> list[list[str]]:
    return [q.kinds for q in report.quarantined_records]


def test_quarantine_rule_names_itself() -> None:
    """A crossed book is quarantined as rule_violation with rule=crossed_book and its values."""
    report = validate(tick(), tick(bid=101.0))
    ((violation,),) = [q.violations for q in report.quarantined_records]
    assert (violation.kind, violation.rule, violation.field) == (
        "rule_violation",
        "crossed_book",
        None,
    )
    assert violation.message == (
        "rule 'crossed_book' does not hold: bid <= ask (ask=100.0, bid=101.0)"
    )
    assert violation.as_dict()["rule"] == "crossed_book"


def test_flag_rule_keeps_the_record_valid_and_counts_it() -> None:
    """A locked book flows to clean; flagged_counts counts it per rule."""
    report = validate(tick(bid=100.0), tick(bid=100.0), tick(bid=90.0), tick())
    assert report.valid_indices == [0, 1, 2, 3]
    assert report.flagged_counts == Counter({"locked_book": 2, "spread_band": 1})
    assert report.summary()["flagged_by_rule"] == {"locked_book": 2, "spread_band": 1}


def test_missing_field_is_reported_once() -> None:
    """A missing bid is a missing_field, never also a rule_violation; so is a bid below min."""
    report = validate(tick(bid=...), tick(bid=-1.0, ask=0.5))
    assert kinds(report) == [["missing_field"], ["below_min"]]


def test_null_side_of_the_book_skips_the_rule() -> None:
    """A null bid (an empty side) is not a crossed book."""
    assert validate(tick(bid=None)).valid_indices == [0]


def test_quarantined_record_is_not_counted_as_flagged() -> None:
    """A record quarantined for another reason adds nothing to flagged_counts."""
    report = validate(tick(bid=100.0, ts="2026-12-01T10:00:00"))
    assert kinds(report) == [["type_mismatch", "rule_violation"]]
    assert not report.flagged_counts and report.flagged_records == 0


def test_quarantined_record_lists_its_flag_rules_marked() -> None:
    """A quarantined record's DLQ entry lists the flag rule it broke, with action flag."""
    (quarantined,) = validate(tick(bid=100.0, ts="2026-12-01T10:00:00")).quarantined_records
    assert [v.as_dict().get("action") for v in quarantined.violations] == [None, "flag"]
    assert quarantined.violations[1].rule == "locked_book"


def test_flag_rules_of_a_quarantined_record_are_not_violation_counts() -> None:
    """violation_counts and rule_violation_counts count what quarantined, not the flags."""
    report = validate(tick(bid=100.0, ts="2026-12-01T10:00:00"), tick(bid=101.0))
    assert report.counts_by_kind() == {"type_mismatch": 1, "rule_violation": 1}
    assert report.rule_violation_counts == Counter({"crossed_book": 1})


@pytest.mark.parametrize(
    "text",
    ["2026-12-01T10:00:00", "20261201", "2026-W48-1", "2026-12-01", "2026-12-01 10:00"],
)
def test_require_timezone_rejects_values_without_an_offset(text: str) -> None:
    """Naive strings, basic and week dates without an offset are a type_mismatch."""
    (quarantined,) = validate(tick(ts=text)).quarantined_records
    assert quarantined.kinds == ["type_mismatch"]
    assert "expected datetime with a UTC offset" in quarantined.violation_reason


@pytest.mark.parametrize(
    "text", ["2026-12-01T10:00:00Z", "2026-12-01T11:00:00+01:00", "2026-12-01T04:30:00.5-05:30"]
)
def test_require_timezone_accepts_an_offset_or_z(text: str) -> None:
    """``Z`` or ``±HH:MM`` after an ISO-8601 time is accepted."""
    assert validate(tick(ts=text)).valid_indices == [0]


def test_require_timezone_on_datetime_objects() -> None:
    """A naive datetime object fails like a naive string; an aware one passes."""
    verifier = DataSchemaContractVerifier(CONTRACT)
    naive, aware = tick(ts=NOW.replace(tzinfo=None)), tick(ts=NOW)
    assert verifier.validate_batch([naive, aware]).valid_indices == [1]


@pytest.mark.parametrize(
    ("offset_s", "kind"),
    [(-61, "timestamp_out_of_range"), (-60, None), (5, None), (5.001, "timestamp_out_of_range")],
)
def test_skew_window_is_inclusive(offset_s: float, kind: str | None) -> None:
    """max_age_s / max_future_s bound the value around now, both ends included."""
    moment = (NOW + timedelta(seconds=offset_s)).isoformat()
    report = validate(tick(ts=moment))
    assert kinds(report) == ([[kind]] if kind else [])


def test_no_validation_time_no_skew_check() -> None:
    """Without ``now`` a timestamp from 1970 passes (the verifier reads no clock)."""
    assert validate(tick(ts="1970-01-01T00:00:00Z"), now=None).valid_indices == [0]


def test_naive_now_is_read_as_utc() -> None:
    """A naive validation time is UTC."""
    assert validate(tick(), now=NOW.replace(tzinfo=None)).valid_indices == [0]


def test_timestamp_out_of_range_names_the_bound() -> None:
    """The message says which side and the bound."""
    (quarantined,) = validate(tick(ts="1970-01-01T00:00:00Z")).quarantined_records
    assert quarantined.violations[0].field == "ts"
    assert "before the oldest allowed 2026-12-01T09:59:00+00:00" in quarantined.violation_reason


def test_contract_rejects_a_rule_on_an_undeclared_field() -> None:
    """A RuleSpec built in code is checked against the contract's fields too."""
    with pytest.raises(ValueError, match=r"rules\[0\] \(r\)\.check: unknown field 'mid'"):
        DataSchemaContractVerifier(SchemaContract("c", FIELDS, rules=[RuleSpec.of("r", "mid > 0")]))


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        (FieldSpec("x", float, require_timezone=True), "require_timezone applies to datetime"),
        (FieldSpec("x", int, max_age_s=5), "max_age_s applies to datetime"),
        (FieldSpec("x", datetime, max_future_s=-1), "max_future_s must be a finite number >= 0"),
    ],
)
def test_timestamp_options_are_checked(spec: FieldSpec, problem: str) -> None:
    """Timestamp options on the wrong type or with a bad value are contract errors."""
    with pytest.raises(ValueError, match=problem):
        DataSchemaContractVerifier(SchemaContract("c", [spec]))


ORDER_FIELDS = [
    FieldSpec("order_type", str, is_nullable=True),
    FieldSpec("side", str),
    FieldSpec("price", float, is_nullable=True),
]
ORDER_TYPES = {spec.name: spec.expected_type for spec in ORDER_FIELDS}
ORDER = SchemaContract(
    "orders",
    ORDER_FIELDS,
    max_allowed_null_pct=100.0,
    rules=[
        RuleSpec.of(
            "limit_price", "price > 0", field_types=ORDER_TYPES, when="order_type == 'limit'"
        ),
        RuleSpec.of("known_side", "side in ['buy', 'sell']", "flag", ORDER_TYPES),
    ],
)


def test_when_rule_quarantines_only_where_its_condition_holds() -> None:
    """A limit order without a price is quarantined, naming the condition; a market order
    or a null order type passes; an unknown side is flagged. Fast path and full rules agree."""
    records = [
        {"order_type": "limit", "side": "buy", "price": 0.0},
        {"order_type": "market", "side": "sell", "price": 0.0},
        {"order_type": None, "side": "sell", "price": 0.0},
        {"order_type": "limit", "side": "hold", "price": 2.0},
    ]
    payloads = [json.dumps(r).encode() for r in records]
    reports = [
        DataSchemaContractVerifier(ORDER, fast_path=fast).validate_payloads(payloads)
        for fast in (True, False)
    ]
    for report in reports:
        assert report.valid_indices == [1, 2, 3]
        ((violation,),) = [q.violations for q in report.quarantined_records]
        assert violation.message == (
            "rule 'limit_price' does not hold: price > 0 when order_type == 'limit'"
            " (order_type='limit', price=0.0)"
        )
        assert report.flagged_counts == {"known_side": 1}


def test_rule_built_without_types_compares_declared_str_fields_as_strings() -> None:
    """``RuleSpec.of`` without field types: the contract's str declarations still make
    ``side == venue`` a string comparison, on both paths."""
    fields = [FieldSpec("side", str), FieldSpec("venue", str)]
    contract = SchemaContract("c", fields, rules=[RuleSpec.of("same", "side == venue")])
    payloads = [b'{"side":"a","venue":"a"}', b'{"side":"a","venue":"b"}']
    for fast in (True, False):
        report = DataSchemaContractVerifier(contract, fast_path=fast).validate_payloads(payloads)
        assert report.valid_indices == [0]
