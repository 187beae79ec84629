"""Object and array fields in the verifier: violations by path, limits, nulls and drift."""

from __future__ import annotations

import dataclasses
from datetime import datetime

import orjson
import pytest

from stream_validator import DataSchemaContractVerifier, FieldSpec, RuleSpec, SchemaContract
from stream_validator.contracts.model import DEFAULT_MAX_ITEMS, MAX_NESTING_DEPTH
from stream_validator.verify.recordchecks import PathView
from stream_validator.verify.report import MAX_NAMED_VIOLATIONS, SchemaContractValidationReport
from tests.support.timing import best_time

LEVEL = FieldSpec(
    "level",
    dict,
    fields=[
        FieldSpec("price", float, min_value=0),
        FieldSpec("size", float, is_nullable=True),
    ],
)
FIELDS = [
    FieldSpec("sym", str),
    FieldSpec(
        "book",
        dict,
        is_nullable=True,
        fields=[FieldSpec("bid", float, is_nullable=True), FieldSpec("ask", float)],
    ),
    FieldSpec("levels", list, items=LEVEL, min_items=1, max_items=200_000),
    FieldSpec("tags", list, items=FieldSpec("tag", str, allowed=["a", "b"]), max_items=3),
]
RULES = [RuleSpec.of("crossed", "book.bid <= book.ask")]


def good(**changes: object) -> dict[str, object]:
    record: dict[str, object] = {
        "sym": "X",
        "book": {"bid": 1.0, "ask": 2.0},
        "levels": [{"price": 1.0, "size": 3.0}, {"price": 0.5, "size": None}],
        "tags": ["a"],
    }
    record.update(changes)
    return record


def check(
    *records: object, forbid: bool = False, max_bytes: int = 10_000_000, **kw: object
) -> SchemaContractValidationReport:
    contract = SchemaContract(
        "ob", FIELDS, rules=RULES, forbid_unknown_fields=forbid, max_allowed_null_pct=50.0, **kw
    )
    verifier = DataSchemaContractVerifier(contract, max_payload_bytes=max_bytes)
    return verifier.validate_payloads([orjson.dumps(r) for r in records])


def found(report: SchemaContractValidationReport) -> list[tuple[str | None, str]]:
    return [(v.field, str(v.kind)) for q in report.quarantined_records for v in q.violations]


def test_a_valid_nested_record_passes() -> None:
    """Objects and arrays matching their specs are valid."""
    report = check(good())
    assert (report.valid_count, report.quarantined_count) == (1, 0)


def test_an_item_field_violation_names_its_index() -> None:
    """A bad price in the third level is reported at levels[2].price."""
    levels = [{"price": 1.0, "size": 1.0}] * 2 + [{"price": -1.0, "size": 1.0}]
    assert found(check(good(levels=levels))) == [("levels[2].price", "below_min")]


def test_a_missing_object_field_names_its_path() -> None:
    """book without ask is a missing_field at book.ask."""
    assert found(check(good(book={"bid": 1.0}))) == [("book.ask", "missing_field")]


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"book": [1.0, 2.0]}, ("book", "type_mismatch")),
        ({"levels": {"price": 1.0}}, ("levels", "type_mismatch")),
        ({"levels": [{"price": 1.0}, 7]}, ("levels[1]", "type_mismatch")),
        ({"tags": ["a", 1]}, ("tags[1]", "type_mismatch")),
    ],
)
def test_a_wrong_container_type_is_a_type_mismatch(
    changes: dict[str, object], expected: tuple[str, str]
) -> None:
    """An object where an array is declared, or the reverse, is a type_mismatch by path."""
    assert expected in found(check(good(**changes)))


def test_nested_string_checks_apply() -> None:
    """An item outside its allowed values is not_allowed at tags[0]."""
    assert found(check(good(tags=["z"]))) == [("tags[0]", "not_allowed")]


def test_too_few_and_too_many_items() -> None:
    """min_items and max_items give too_few_items and too_many_items on the array."""
    assert found(check(good(levels=[]))) == [("levels", "too_few_items")]
    assert found(check(good(tags=["a"] * 4))) == [("tags", "too_many_items")]


def test_max_items_defaults_to_the_cap() -> None:
    """An array without max_items accepts at most DEFAULT_MAX_ITEMS items."""
    contract = SchemaContract("c", [FieldSpec("xs", list, items=FieldSpec("x", int))])
    verifier = DataSchemaContractVerifier(contract, max_payload_bytes=10_000_000)
    fits, over = ([1] * n for n in (DEFAULT_MAX_ITEMS, DEFAULT_MAX_ITEMS + 1))
    report = verifier.validate_batch([{"xs": fits}, {"xs": over}])
    assert report.valid_indices == [0]
    assert report.quarantined_records[0].kinds == ["too_many_items"]


def test_item_violations_are_capped_per_field() -> None:
    """Past MAX_NAMED_VIOLATIONS item violations one more counts the rest."""
    levels = [{"price": -1.0, "size": 1.0}] * 1000
    (record,) = check(good(levels=levels)).quarantined_records
    assert len(record.violations) == MAX_NAMED_VIOLATIONS + 1
    last = record.violations[-1]
    assert (last.field, str(last.kind)) == ("levels", "below_min")
    assert f"and {1000 - MAX_NAMED_VIOLATIONS} more violations in 'levels'" in last.message


def test_a_hostile_array_costs_time_linear_in_its_items() -> None:
    """100,000 bad items: 51 violations, and ten times the items cost well under 30x."""
    contract = SchemaContract("c", FIELDS)
    verifier = DataSchemaContractVerifier(contract, max_payload_bytes=10_000_000)
    payloads = {
        n: [orjson.dumps(good(levels=[{"price": -1.0, "bad": None}] * n))]
        for n in (10_000, 100_000)
    }
    report = verifier.validate_payloads(payloads[100_000])
    assert len(report.quarantined_records[0].violations) == MAX_NAMED_VIOLATIONS + 1
    ratio = best_time(lambda: verifier.validate_payloads(payloads[100_000])) / best_time(
        lambda: verifier.validate_payloads(payloads[10_000])
    )
    assert ratio < 30, ratio


def test_deep_nesting_at_the_limit_is_checked() -> None:
    """A record nested MAX_NESTING_DEPTH deep is walked to the bottom; a wrong leaf is named."""
    spec = FieldSpec("leaf", int, min_value=0)
    value: object = 1
    bad: object = -1
    for _ in range(MAX_NESTING_DEPTH - 1):
        spec = FieldSpec("a", list, items=spec)
        value, bad = [value], [bad]
    verifier = DataSchemaContractVerifier(SchemaContract("d", [spec]))
    report = verifier.validate_batch([{"a": value}, {"a": bad}, {"a": [[[[[[[[[[[1]]]]]]]]]]]}])
    assert report.valid_indices == [0]
    assert found(report)[0] == ("a" + "[0]" * (MAX_NESTING_DEPTH - 1), "below_min")
    assert found(report)[1][1] == "type_mismatch"  # deeper than the contract: never walked


def test_nested_unknown_keys_are_drift_by_metric_path() -> None:
    """Undeclared keys inside objects and items are reported as book.x and levels[].y."""
    record = good(
        book={"bid": 1.0, "ask": 2.0, "x": 1}, levels=[{"price": 1.0, "size": 1.0, "y": 1}] * 3
    )
    report = check(record)
    assert report.valid_count == 1
    assert report.observed_unknown_fields == {"book.x", "levels[].y"}


def test_forbidden_nested_unknown_keys_name_their_index() -> None:
    """With forbid_unknown_fields, an undeclared key in an item is an unknown_field there."""
    record = good(levels=[{"price": 1.0, "size": 1.0}, {"price": 1.0, "size": 1.0, "y": 1}])
    assert found(check(record, forbid=True)) == [("levels[1].y", "unknown_field")]


def test_null_rates_count_nested_fields_by_path_once_per_record() -> None:
    """levels[].size null in two items of one record counts that record once."""
    records = [
        good(levels=[{"price": 1.0, "size": None}, {"price": 2.0, "size": None}]),
        good(levels=[{"price": 1.0, "size": 1.0}], book={"bid": None, "ask": 1.0}),
    ]
    report = check(*records)
    assert report.null_rates == {"book": 0.0, "book.bid": 50.0, "levels[].size": 50.0}


def test_the_null_ceiling_applies_to_nested_paths() -> None:
    """A nested field null in more records than the ceiling breaches under its path."""
    records = [good(levels=[{"price": 1.0, "size": None}])] * 3 + [good()]
    report = check(*records)
    assert "levels[].size" in report.null_breach_fields
    assert not report.is_batch_valid


def test_a_null_object_counts_as_null_not_its_fields() -> None:
    """A nullable object that is null counts under its own path only."""
    report = check(good(book=None))
    assert report.valid_count == 1
    assert report.null_rates["book"] == 100.0 and report.null_rates["book.bid"] == 0.0


def test_a_rule_reads_an_object_field_by_path() -> None:
    """book.bid <= book.ask holds, fails, and is skipped when book failed its own check."""
    assert check(good()).valid_count == 1
    crossed = check(good(book={"bid": 3.0, "ask": 2.0})).quarantined_records[0]
    assert crossed.kinds == ["rule_violation"]
    assert "book.bid=3.0" in crossed.violations[0].message
    assert found(check(good(book={"bid": 3.0}))) == [("book.ask", "missing_field")]
    assert found(check(good(book="x"))) == [("book", "type_mismatch")]


def test_a_rule_path_through_a_null_object_holds() -> None:
    """A null book leaves book.bid without a value: the rule is not applicable."""
    assert check(good(book=None)).valid_count == 1


def test_path_view_reads_by_path() -> None:
    """PathView walks dots, and a step that is not a mapping reads as missing."""
    view = PathView({"a": {"b": 1}, "c": 2, "d.e": 3})
    assert (view.get("a.b"), view.get("c"), view.get("d.e")) == (1, 2, 3)
    assert view.get("c.x") is None and view.get("a.z") is None


def test_nested_contracts_take_no_native_fast_path() -> None:
    """The msgspec fast path declines a nested contract: the reference rules judge it."""
    verifier = DataSchemaContractVerifier(SchemaContract("ob", FIELDS))
    assert verifier._native is None


def test_decoded_records_are_checked_like_payloads() -> None:
    """validate_batch gives the same violations as validate_payloads for nested records."""
    records = [good(), good(levels=[{"price": -1.0}]), good(book={"ask": "x"})]
    contract = SchemaContract("ob", FIELDS, rules=RULES, max_allowed_null_pct=50.0)
    verifier = DataSchemaContractVerifier(contract)
    by_records = verifier.validate_batch(records)
    by_payloads = verifier.validate_payloads([orjson.dumps(r) for r in records])
    assert found(by_records) == found(by_payloads)


def test_nested_datetimes_and_non_finite_floats_are_checked() -> None:
    """A nested datetime must parse; a nested NaN is refused unless allowed."""
    spec = FieldSpec(
        "o",
        dict,
        fields=[FieldSpec("ts", datetime, require_timezone=True), FieldSpec("x", float)],
    )
    verifier = DataSchemaContractVerifier(SchemaContract("c", [spec]))
    report = verifier.validate_batch(
        [
            {"o": {"ts": "2026-01-01T00:00:00Z", "x": 1.0}},
            {"o": {"ts": "2026-01-01T00:00:00", "x": float("nan")}},
        ]
    )
    assert report.valid_indices == [0]
    assert found(report) == [("o.ts", "type_mismatch"), ("o.x", "non_finite")]


def test_a_nested_integer_beyond_64_bits_is_undecodable() -> None:
    """A >64-bit literal in a nested field is undecodable at its path, as at the top level."""
    payload = orjson.dumps(good(levels=[{"price": 1.0, "size": 1.0}])).replace(
        b'"size":1.0', b'"size":123456789012345678901234567890'
    )
    contract = SchemaContract(
        "ob",
        [
            *FIELDS[:2],
            dataclasses.replace(
                FIELDS[2],
                items=dataclasses.replace(LEVEL, fields=[LEVEL.fields[0], FieldSpec("size", int)]),
            ),
            FIELDS[3],
        ],
    )  # type: ignore[index]
    report = DataSchemaContractVerifier(contract).validate_payloads([payload])
    assert found(report) == [("levels[0].size", "undecodable")]
