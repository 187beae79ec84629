"""Fields with action flag: the record flows when only flagged checks break, and is counted."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime

from stream_validator import (
    DataSchemaContractVerifier,
    FieldSpec,
    RuleSpec,
    SchemaContract,
    SchemaContractValidationReport,
)

NOW = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
FIELDS = [
    FieldSpec("sym", str),
    FieldSpec("px", float, min_value=0.0, action="flag"),
    FieldSpec("qty", int, min_value=1),
    FieldSpec("venue", str, is_nullable=True, pattern="[A-Z]{4}", action="flag"),
    FieldSpec("ts", datetime, max_age_s=60, action="flag"),
]
CONTRACT = SchemaContract(
    "orders",
    FIELDS,
    max_allowed_null_pct=100.0,
    rules=[RuleSpec.of("big", "qty <= 1000", "flag"), RuleSpec.of("cheap", "px >= 1")],
)


def order(**changes: object) -> dict[str, object]:
    record: dict[str, object] = {
        "sym": "AAPL",
        "px": 10.0,
        "qty": 5,
        "venue": "XNAS",
        "ts": "2026-12-01T10:00:00+00:00",
    }
    record.update(changes)
    return {k: v for k, v in record.items() if v is not ...}


def validate(*records: dict[str, object]) -> SchemaContractValidationReport:
    """The report of the payloads; the decoded records and the full rules agree with it."""
    payloads = [json.dumps(r).encode() for r in records]
    report = DataSchemaContractVerifier(CONTRACT).validate_payloads(payloads, now=NOW)
    for other in (
        DataSchemaContractVerifier(CONTRACT).validate_batch(records, now=NOW),
        DataSchemaContractVerifier(CONTRACT, fast_path=False).validate_payloads(payloads, now=NOW),
    ):
        assert other.summary() == report.summary()
        assert [q.violations for q in other.quarantined_records] == [
            q.violations for q in report.quarantined_records
        ]
    return report


def test_every_check_of_a_flagged_field_lets_the_record_flow() -> None:
    """Bound, type, missing, null, pattern and skew window breaks of flagged fields flow."""
    report = validate(
        order(px=-1.0),
        order(px="ten"),
        order(px=...),
        order(px=None),
        order(venue="xnas"),
        order(ts="2026-11-30T10:00:00+00:00"),
    )
    assert report.valid_indices == [0, 1, 2, 3, 4, 5] and report.quarantined_count == 0


def test_flagged_breaches_are_counted_per_field_and_kind() -> None:
    """flagged_field_counts counts (field, kind); flagged_records the records flowing flagged."""
    report = validate(order(px=-1.0), order(px="ten", venue="x"), order(), order(px=-2.0))
    assert report.flagged_field_counts == Counter(
        {("px", "below_min"): 2, ("px", "type_mismatch"): 1, ("venue", "pattern_mismatch"): 1}
    )
    assert report.flagged_records == 3
    assert report.summary()["flagged_by_field"] == {
        "px": {"below_min": 2, "type_mismatch": 1},
        "venue": {"pattern_mismatch": 1},
    }


def test_a_skew_window_of_a_flagged_field_is_flagged() -> None:
    """A timestamp out of its flagged field's window counts as timestamp_out_of_range."""
    report = validate(order(ts="2026-11-30T10:00:00+00:00"))
    assert report.flagged_field_counts == Counter({("ts", "timestamp_out_of_range"): 1})


def test_flag_rules_and_flagged_fields_count_together() -> None:
    """A record breaking a flagged field and a flag rule is one flagged record, both counted."""
    report = validate(order(venue="x", qty=5000))
    assert report.flagged_records == 1
    assert report.flagged_counts == Counter({"big": 1})
    assert report.flagged_field_counts == Counter({("venue", "pattern_mismatch"): 1})


def test_rules_reading_a_flagged_field_that_failed_are_skipped() -> None:
    """A rule over a flagged field whose check broke is not judged (as for any failed field)."""
    report = validate(order(px=-5.0))
    assert report.valid_indices == [0] and not report.rule_violation_counts


def test_other_violations_quarantine_and_list_the_flagged_ones_marked() -> None:
    """With a quarantining violation, the record is quarantined; flagged ones follow the
    others (the first violation quarantined it) and say action flag."""
    (quarantined,) = validate(order(px=-1.0, qty=0)).quarantined_records
    assert [(v.field, v.kind, v.flagged) for v in quarantined.violations] == [
        ("qty", "below_min", False),
        ("px", "below_min", True),
    ]
    assert [v.as_dict().get("action") for v in quarantined.violations] == [None, "flag"]


def test_flagged_violations_of_quarantined_records_are_not_counted() -> None:
    """violation_counts and flagged counts leave out the flagged violations of DLQ entries."""
    report = validate(order(px=-1.0, qty=0))
    assert report.counts_by_kind() == {"below_min": 1}
    assert report.counts_by_field() == {"qty": 1}
    assert report.flagged_records == 0 and not report.flagged_field_counts


def test_record_level_problems_are_never_flagged() -> None:
    """A duplicate key of a flagged field, or an undecodable payload, is quarantined."""
    verifier = DataSchemaContractVerifier(CONTRACT)
    dup = b'{"sym":"A","px":1.0,"px":2.0,"qty":5,"venue":null,"ts":"2026-12-01T10:00:00Z"}'
    report = verifier.validate_payloads([dup, b"{"], now=NOW)
    assert [q.kinds for q in report.quarantined_records] == [["duplicate_key"], ["undecodable"]]


def test_a_flagged_record_counts_in_null_rates() -> None:
    """A record flowing flagged is a survivor: its nulls count, its flagged value is not null."""
    report = validate(order(venue=None), order(px="ten"))
    assert report.null_counts == {"venue": 1} and report.null_rates == {"venue": 50.0}


def test_a_null_in_a_flagged_non_nullable_field_is_not_a_null_rate() -> None:
    """null_value on a flagged non-nullable field flows; null rates track nullable fields only."""
    report = validate(order(px=None))
    assert report.flagged_field_counts == Counter({("px", "null_value"): 1})
    assert report.null_rates == {"venue": 0.0}
