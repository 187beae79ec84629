"""allowed, pattern, min_length and max_length on str and int fields: the rules and the
compiled checks."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_validator import DataSchemaContractVerifier, FieldSpec, SchemaContract
from stream_validator.verify.fastpath import FAIL, compile_fast_check
from stream_validator.verify.report import ViolationKind
from stream_validator.verify.rules import RecordInspector

FIELDS = [
    FieldSpec("side", str, allowed=["buy", "sell"]),
    FieldSpec("venue", str, pattern=r"[A-Z]{2}\d{1,2}", min_length=3, max_length=4),
    FieldSpec("kind", int, allowed=(1, 2, 10), min_value=1, max_value=10),
    FieldSpec("note", str, is_nullable=True, max_length=2),
]
CONTRACT = SchemaContract("values", FIELDS)
INSPECTOR = RecordInspector(CONTRACT)
FAST = compile_fast_check(CONTRACT)
GOOD: dict[str, object] = {"side": "buy", "venue": "XN1", "kind": 2, "note": None}


def violations_of(record: dict[str, object]) -> list[tuple[str | None, str, str]]:
    found, _, _ = INSPECTOR.inspect(record)
    return [(v.field, str(v.kind), v.message) for v in found or ()]


def test_a_clean_record_passes_every_check() -> None:
    """A record within allowed, pattern and lengths has no violation and takes the fast check."""
    assert violations_of(GOOD) == []
    assert FAST(GOOD) == (0,)


@pytest.mark.parametrize(
    ("field", "value", "kind", "message"),
    [
        (
            "side",
            "hold",
            "not_allowed",
            "field 'side': 'hold' is not one of the allowed values ('buy', 'sell')",
        ),
        ("kind", 3, "not_allowed", "field 'kind': 3 is not one of the allowed values (1, 2, 10)"),
        (
            "venue",
            "xn1",
            "pattern_mismatch",
            r"field 'venue': 'xn1' does not match pattern '[A-Z]{2}\\d{1,2}'",
        ),
        (
            "venue",
            "XN",
            "too_short",
            "field 'venue': 'XN' has 2 characters, fewer than min_length 3",
        ),
        (
            "note",
            "abc",
            "too_long",
            "field 'note': 'abc' has 3 characters, more than max_length 2",
        ),
    ],
)
def test_each_kind_names_the_field_and_the_value(
    field: str, value: object, kind: str, message: str
) -> None:
    """A failing value gives its own kind, with the field and the value in the message."""
    assert violations_of({**GOOD, field: value}) == [(field, kind, message)]


def test_the_pattern_must_match_the_whole_value() -> None:
    """A value holding a match plus more, or the match and a newline, does not match."""
    exact = RecordInspector(SchemaContract("x", [FieldSpec("v", str, pattern="ab|cd")]))
    for value, matches in (
        ("ab", True),
        ("cd", True),
        ("abab", False),
        ("ab\n", False),
        ("xcd", False),
    ):
        found = exact.inspect({"v": value})[0]
        assert (found is None) == matches, value


def test_digit_shorthand_is_ascii_only() -> None:
    """\\d matches 0-9 only, never another script's digits."""
    assert [k for _, k, _ in violations_of({**GOOD, "venue": "XN\u0661"})] == ["pattern_mismatch"]


def test_lengths_count_code_points() -> None:
    """An astral character (two UTF-16 units, four UTF-8 bytes) counts as one."""
    assert violations_of({**GOOD, "note": "\U0001f600\U0001f600"}) == []
    assert [k for _, k, _ in violations_of({**GOOD, "note": "\U0001f600" * 3})] == ["too_long"]


def test_a_field_gets_one_violation_lengths_first() -> None:
    """A value too long and off the pattern is too_long only (the length bounds the regex)."""
    assert [k for _, k, _ in violations_of({**GOOD, "venue": "x" * 50})] == ["too_long"]


def test_the_type_is_checked_before_the_values() -> None:
    """A bool in an int field with allowed values is a type_mismatch, never not_allowed."""
    assert [k for _, k, _ in violations_of({**GOOD, "kind": True})] == ["type_mismatch"]
    assert [k for _, k, _ in violations_of({**GOOD, "side": 1})] == ["type_mismatch"]


def test_bounds_come_before_allowed() -> None:
    """An int outside the bounds is below_min / above_max, not also not_allowed."""
    assert [k for _, k, _ in violations_of({**GOOD, "kind": 0})] == ["below_min"]


def test_a_huge_value_is_rendered_bounded() -> None:
    """A 100,000-character value gives a message of bounded length, escaped."""
    value = "\n\x00" + "a" * 100_000
    for field in ("side", "note"):
        ((_, _, message),) = violations_of({**GOOD, field: value})
        assert len(message) < 200 and "\n" not in message and "\\n" in message


def test_a_long_allowed_list_is_cut_in_the_message() -> None:
    """Of many allowed values the message names five and the count."""
    inspector = RecordInspector(
        SchemaContract("many", [FieldSpec("c", str, allowed=[f"v{i}" for i in range(50)])])
    )
    ((violation,),) = [inspector.inspect({"c": "x"})[0]]
    assert violation.message.endswith("'v3', 'v4', ... (50 in all))")


def test_payloads_get_the_same_kinds_with_and_without_the_fast_path() -> None:
    """Over bytes, each new kind comes out the same from the fast path and the full rules."""
    payloads = [
        b'{"side":"buy","venue":"XN1","kind":2,"note":null}',
        b'{"side":"hold","venue":"XN1","kind":2,"note":null}',
        b'{"side":"buy","venue":"xn1","kind":2,"note":"a"}',
        b'{"side":"buy","venue":"X","kind":3,"note":"abc"}',
        b'{"side":"s\\u0065ll","venue":"XN\\u0031","kind":10,"note":"\\ud83d\\ude00"}',
    ]
    fast = DataSchemaContractVerifier(CONTRACT)
    assert fast._native is not None
    full = DataSchemaContractVerifier(CONTRACT, fast_path=False)
    got, expected = fast.validate_payloads(payloads), full.validate_payloads(payloads)
    assert got.valid_indices == expected.valid_indices == [0, 4]
    assert got.quarantined_records == expected.quarantined_records
    kinds = {str(v.kind) for q in expected.quarantined_records for v in q.violations}
    assert kinds == {"not_allowed", "pattern_mismatch", "too_short", "too_long"}


def test_an_allowed_int_beyond_64_bits_keeps_the_verdict_without_the_fast_path() -> None:
    """A Literal the Struct cannot hold turns the fast path off; the rules still judge."""
    contract = SchemaContract("big", [FieldSpec("k", int, allowed=(1, 2**70))])
    verifier = DataSchemaContractVerifier(contract)
    assert verifier._native is None
    report = verifier.validate_payloads([b'{"k":1}', b'{"k":2}'])
    assert report.valid_indices == [0]
    assert report.quarantined_records[0].violations[0].kind == ViolationKind.NOT_ALLOWED


values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 12),
    st.integers(),
    st.floats(allow_nan=False),
    st.sampled_from(["buy", "sell", "Buy", "XN1", "XN12", "XN123", "xn1", "X\u0661", "ab", ""]),
    st.text(max_size=5),
    st.text(alphabet="AXN019\n\u0661\U0001f600", max_size=5),
)
records = st.fixed_dictionaries(
    {}, optional=dict.fromkeys(["side", "venue", "kind", "note"], values)
)


@settings(max_examples=1000, deadline=None)
@given(records)
def test_fast_check_accepts_only_what_the_rules_accept(record: dict[str, Any]) -> None:
    """Whenever the compiled clean check passes a record, the rules find nothing."""
    fast = FAST(record)
    if fast is FAIL:
        return
    violations, nulls, unknown = INSPECTOR.inspect(record)
    assert violations is None and not unknown
    assert tuple(nulls or ()) == fast


@settings(max_examples=1000, deadline=None)
@given(records)
def test_compiled_inspect_is_the_rules(record: dict[str, Any]) -> None:
    """The compiled inspect gives exactly what the rules give field by field."""
    assert INSPECTOR.inspect(record) == INSPECTOR.inspect_each_field(record)


def test_pattern_verdicts_are_remembered_for_short_values_only() -> None:
    """The memo of a pattern's verdicts holds at most MEMO_VALUES values of MEMO_CHARS or
    fewer characters, and gives the same verdicts as the regex."""
    from stream_validator.verify.valuecheck import MEMO_CHARS, MEMO_VALUES, ValueCheck

    check = ValueCheck(FieldSpec("v", str, pattern="[a-z0-9]+"))
    values = [f"v{i}" for i in range(MEMO_VALUES + 10)] + ["A", "a" * (MEMO_CHARS + 1)]
    assert [check.accepts(v) for v in values] == [True] * (MEMO_VALUES + 10) + [False, True]
    assert len(check.memo) == MEMO_VALUES and "a" * (MEMO_CHARS + 1) not in check.memo
    assert check.accepts("A") is False and check.accepts("v1") is True


def test_the_fast_path_declines_only_rows_off_the_pattern() -> None:
    """A chunk's decoded rows whose value fails the pattern go to the rules; the rest pass."""
    contract = SchemaContract("p", [FieldSpec("v", str, pattern="[A-Z]{2}"), FieldSpec("n", int)])
    native = DataSchemaContractVerifier(contract)._native
    assert native is not None
    rows = [b'{"v":"AB","n":1}', b'{"v":"ab","n":2}', b'{"v":"AB","n":3}', b'{"v":"ABC","n":4}']
    assert native.screen(rows, []) == [1, 3]
