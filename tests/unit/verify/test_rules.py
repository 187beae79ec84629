"""Per-field rules: presence, nulls, types, finiteness, bounds, unknown fields."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime

import pytest

from stream_validator import DataSchemaContractVerifier, FieldSpec, SchemaContract
from tests.support.ticks import seed_tick


def one_field(spec: FieldSpec, **contract: object) -> DataSchemaContractVerifier:
    return DataSchemaContractVerifier(SchemaContract("c", [spec], **contract))  # type: ignore[arg-type]


def kinds(verifier: DataSchemaContractVerifier, record: object) -> list[str]:
    report = verifier.validate_batch([record])
    if not report.quarantined_records:
        return []
    return report.quarantined_records[0].kinds


def test_seed_spec_verification(tick_verifier: DataSchemaContractVerifier) -> None:
    """100 valid ticks + one missing price + one string volume: 100 valid, 2 quarantined."""
    batch: list[object] = [seed_tick(i) for i in range(100)]
    batch.insert(10, {"volume": 1, "symbol": "X"})
    batch.append({"price": 1.0, "volume": "five", "symbol": "X"})
    report = tick_verifier.validate_batch(batch)
    assert report.total_records == 102
    assert len(report.valid_records) == 100
    assert [q.index for q in report.quarantined_records] == [10, 101]
    assert report.quarantined_records[0].kinds == ["missing_field"]
    assert report.quarantined_records[1].kinds == ["type_mismatch"]
    assert report.is_batch_valid is False


def test_missing_field_is_reported_with_field_name(
    tick_verifier: DataSchemaContractVerifier,
) -> None:
    """A missing declared field is missing_field on that field."""
    report = tick_verifier.validate_batch([{"volume": 1, "symbol": "A"}])
    (violation,) = report.quarantined_records[0].violations
    assert (violation.field, violation.kind) == ("price", "missing_field")
    assert "price" in violation.message


def test_null_rejected_on_non_nullable_field() -> None:
    """A present null in a non-nullable field is null_value."""
    assert kinds(one_field(FieldSpec("p", float)), {"p": None}) == ["null_value"]


def test_null_accepted_on_nullable_field() -> None:
    """A present null in a nullable field passes the record."""
    verifier = one_field(FieldSpec("p", float, is_nullable=True), max_allowed_null_pct=100.0)
    assert kinds(verifier, {"p": None}) == []


def test_missing_nullable_field_is_still_missing() -> None:
    """Nullable does not mean optional: the key must be present."""
    verifier = one_field(FieldSpec("p", float, is_nullable=True))
    assert kinds(verifier, {}) == ["missing_field"]


@pytest.mark.parametrize("value", [1, 0, -3, 10**30])
def test_int_widens_to_float(value: int) -> None:
    """An int satisfies a float field."""
    assert kinds(one_field(FieldSpec("p", float)), {"p": value}) == []


@pytest.mark.parametrize("value", [1.0, 2.5, -0.0])
def test_float_never_satisfies_int(value: float) -> None:
    """A float, even an integral one, is a type_mismatch on an int field."""
    assert kinds(one_field(FieldSpec("v", int)), {"v": value}) == ["type_mismatch"]


@pytest.mark.parametrize("expected", [int, float])
@pytest.mark.parametrize("value", [True, False])
def test_bool_never_satisfies_numeric(expected: type, value: bool) -> None:
    """bool is an int subclass in Python but never satisfies int or float."""
    assert kinds(one_field(FieldSpec("v", expected)), {"v": value}) == ["type_mismatch"]


@pytest.mark.parametrize("value", [1, 0, 1.0, "true", None])
def test_bool_field_takes_only_true_false(value: object) -> None:
    """A bool field rejects 1, 0, 1.0 and 'true' (and null when not nullable)."""
    expected = ["null_value"] if value is None else ["type_mismatch"]
    assert kinds(one_field(FieldSpec("b", bool)), {"b": value}) == expected


@pytest.mark.parametrize("value", [True, False])
def test_bool_field_accepts_bools(value: bool) -> None:
    """True and False satisfy a bool field."""
    assert kinds(one_field(FieldSpec("b", bool)), {"b": value}) == []


@pytest.mark.parametrize("value", [1, 1.5, b"AAPL", ["A"], True])
def test_str_field_takes_only_str(value: object) -> None:
    """Only str satisfies a str field."""
    assert kinds(one_field(FieldSpec("s", str)), {"s": value}) == ["type_mismatch"]


def test_empty_string_is_a_str() -> None:
    """An empty string is still a str (presence, not content, is checked)."""
    assert kinds(one_field(FieldSpec("s", str)), {"s": ""}) == []


@pytest.mark.parametrize(
    "value",
    [
        datetime(2026, 1, 2, 3, 4, 5),
        datetime(2026, 1, 2, tzinfo=UTC),
        "2026-01-02T03:04:05",
        "2026-01-02T03:04:05.123456+00:00",
        "2026-01-02T03:04:05Z",
        "2026-01-02",
    ],
)
def test_datetime_field_accepts_datetime_and_iso_strings(value: object) -> None:
    """datetime objects and strings datetime.fromisoformat accepts pass."""
    assert kinds(one_field(FieldSpec("t", datetime)), {"t": value}) == []


@pytest.mark.parametrize(
    "value", [date(2026, 1, 2), "yesterday", "2026-13-01", "", 1767225600, 1.7e9, True]
)
def test_datetime_field_rejects_dates_numbers_and_bad_strings(value: object) -> None:
    """A plain date, an epoch number or a non-ISO string is a type_mismatch."""
    assert kinds(one_field(FieldSpec("t", datetime)), {"t": value}) == ["type_mismatch"]


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_rejected_before_bounds(value: float) -> None:
    """NaN/±Inf are non_finite (and only that) even when bounds would pass or fail."""
    verifier = one_field(FieldSpec("p", float, min_value=0.0, max_value=10.0))
    assert kinds(verifier, {"p": value}) == ["non_finite"]


def test_non_finite_rejected_without_bounds() -> None:
    """NaN is rejected on a float field that has no bounds at all."""
    assert kinds(one_field(FieldSpec("p", float)), {"p": math.nan}) == ["non_finite"]


def test_allow_non_finite_lets_nan_skip_bounds() -> None:
    """With allow_non_finite, NaN passes bounds it cannot be compared with."""
    verifier = one_field(FieldSpec("p", float, min_value=0.0, max_value=1.0, allow_non_finite=True))
    assert kinds(verifier, {"p": math.nan}) == []


def test_allow_non_finite_compares_infinities() -> None:
    """With allow_non_finite, +Inf fails max_value and -Inf fails min_value."""
    verifier = one_field(FieldSpec("p", float, min_value=0.0, max_value=1.0, allow_non_finite=True))
    assert kinds(verifier, {"p": math.inf}) == ["above_max"]
    assert kinds(verifier, {"p": -math.inf}) == ["below_min"]


def test_allow_non_finite_without_bounds_passes_infinities() -> None:
    """With allow_non_finite and no bounds, ±Inf pass."""
    verifier = one_field(FieldSpec("p", float, allow_non_finite=True))
    assert kinds(verifier, {"p": math.inf}) == []
    assert kinds(verifier, {"p": -math.inf}) == []


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0.0, []),
        (10.0, []),
        (-1e-12, ["below_min"]),
        (10.000000000001, ["above_max"]),
        (-0.0, []),
        (5, []),
        (11, ["above_max"]),
    ],
)
def test_bounds_are_inclusive(value: float, expected: list[str]) -> None:
    """A value equal to a bound passes; -0.0 equals a 0.0 lower bound."""
    verifier = one_field(FieldSpec("p", float, min_value=0.0, max_value=10.0))
    assert kinds(verifier, {"p": value}) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(0, []), (-1, ["below_min"]), (2**64, []), (-(2**80), ["below_min"]), (10**400, [])],
)
def test_huge_ints_compare_exactly(value: int, expected: list[str]) -> None:
    """Ints beyond 64 bits are compared exactly against the bounds."""
    assert kinds(one_field(FieldSpec("v", int, min_value=0)), {"v": value}) == expected


def test_int_field_with_float_bounds() -> None:
    """Bounds may be floats on an int field and are compared numerically."""
    verifier = one_field(FieldSpec("v", int, min_value=0.5, max_value=2.5))
    assert kinds(verifier, {"v": 0}) == ["below_min"]
    assert kinds(verifier, {"v": 2}) == []
    assert kinds(verifier, {"v": 3}) == ["above_max"]


def test_all_violations_are_collected(tick_verifier: DataSchemaContractVerifier) -> None:
    """Every violation of a record is listed, in declaration order, and joined in the reason."""
    report = tick_verifier.validate_batch([{"price": -1.0, "volume": True}])
    quarantined = report.quarantined_records[0]
    assert [(v.field, v.kind) for v in quarantined.violations] == [
        ("price", "below_min"),
        ("volume", "type_mismatch"),
        ("symbol", "missing_field"),
    ]
    assert quarantined.violation_reason == "; ".join(v.message for v in quarantined.violations)


def test_violation_message_says_expected_and_got(tick_verifier: DataSchemaContractVerifier) -> None:
    """A type_mismatch message names the field, the expected type and what came."""
    report = tick_verifier.validate_batch([{"price": 1.0, "volume": "five", "symbol": "A"}])
    message = report.quarantined_records[0].violations[0].message
    assert "volume" in message and "expected int" in message and "str 'five'" in message


def test_long_values_are_clipped_in_messages() -> None:
    """A huge offending value does not bloat the violation message."""
    report = one_field(FieldSpec("v", int)).validate_batch([{"v": "x" * 10_000}])
    assert len(report.quarantined_records[0].violation_reason) < 200


@pytest.mark.parametrize("record", [None, [1, 2], 42, "text", b"{}", 3.5, True, ("a", 1)])
def test_non_mapping_is_quarantined_not_raised(
    tick_verifier: DataSchemaContractVerifier, record: object
) -> None:
    """Any non-mapping payload becomes one not_a_mapping violation with field None."""
    report = tick_verifier.validate_batch([record, seed_tick()])
    assert len(report.valid_records) == 1
    (violation,) = report.quarantined_records[0].violations
    assert (violation.field, violation.kind) == (None, "not_a_mapping")


def test_any_mapping_counts() -> None:
    """A non-dict Mapping (e.g. MappingProxyType) is validated like a dict."""
    from types import MappingProxyType

    verifier = one_field(FieldSpec("p", float))
    assert kinds(verifier, MappingProxyType({"p": 1.0})) == []
    assert kinds(verifier, MappingProxyType({"p": "1"})) == ["type_mismatch"]


def test_unknown_fields_reported_as_drift_by_default(
    tick_verifier: DataSchemaContractVerifier,
) -> None:
    """With forbid_unknown_fields=False an extra field is drift, not a violation."""
    record = {**seed_tick(), "ask_volume": 5}
    report = tick_verifier.validate_batch([record])
    assert report.valid_records == [record]
    assert report.observed_unknown_fields == {"ask_volume"}
    assert report.drift_detected is True
    assert report.is_batch_valid is True


def test_unknown_fields_quarantined_when_forbidden() -> None:
    """With forbid_unknown_fields=True each extra field is an unknown_field violation."""
    verifier = one_field(FieldSpec("p", float), forbid_unknown_fields=True)
    report = verifier.validate_batch([{"p": 1.0, "x": 1, "y": 2}])
    assert [(v.field, v.kind) for v in report.quarantined_records[0].violations] == [
        ("x", "unknown_field"),
        ("y", "unknown_field"),
    ]
    assert report.observed_unknown_fields == {"x", "y"}


def test_vendor_rename_is_missing_and_unknown(tick_verifier: DataSchemaContractVerifier) -> None:
    """Renaming volume to ask_volume shows as missing volume and unknown ask_volume."""
    report = tick_verifier.validate_batch([{"price": 1.0, "ask_volume": 3, "symbol": "A"}])
    assert report.quarantined_records[0].kinds == ["missing_field"]
    assert report.quarantined_records[0].violations[0].field == "volume"
    assert report.observed_unknown_fields == {"ask_volume"}


def test_non_string_keys_are_unknown_fields() -> None:
    """A mapping with non-string keys reports them as unknown fields, not a crash."""
    report = one_field(FieldSpec("p", float)).validate_batch([{"p": 1.0, 7: "x"}])
    assert report.observed_unknown_fields == {"7"}
