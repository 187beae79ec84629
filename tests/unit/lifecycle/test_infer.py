"""infer_contract: types, nullability, bounds, nesting, and what is left out (and why)."""

from __future__ import annotations

from datetime import datetime
from fractions import Fraction

from stream_validator.contracts import FieldSpec
from stream_validator.contracts.model import MAX_NESTING_DEPTH
from stream_validator.lifecycle.lines import Skip
from tests.unit.lifecycle.drafting import draft_of, lines_of, reloaded


def _field(draft, name: str) -> FieldSpec:  # type: ignore[no-untyped-def]
    assert draft.contract is not None
    return next(spec for spec in draft.contract.fields if spec.name == name)


def test_ints_stay_int_and_a_float_widens_the_field_to_float() -> None:
    """A field of ints only is int; one float among ints makes it float."""
    draft, _ = draft_of(lines_of([{"n": 1, "x": 1}, {"n": 2, "x": 2.5}]), bounds=False)
    assert _field(draft, "n") == FieldSpec("n", int)
    assert _field(draft, "x") == FieldSpec("x", float)


def test_datetimes_with_and_without_an_offset() -> None:
    """Date-and-time strings are datetime; require_timezone only when every one had an
    offset; a plain date or a code-like string stays str."""
    draft, _ = draft_of(
        lines_of(
            [
                {"tz": "2024-01-01T10:00:00Z", "naive": "2024-01-01 10:00:00", "d": "2024-01-01"},
                {"tz": "2024-01-01T10:00:00+02:00", "naive": "2024-01-01T10:00Z", "d": "20240101"},
            ]
        )
    )
    assert _field(draft, "tz") == FieldSpec("tz", datetime, require_timezone=True)
    assert _field(draft, "naive") == FieldSpec("naive", datetime)
    assert _field(draft, "d") == FieldSpec("d", str)


def test_a_string_that_is_not_a_datetime_makes_the_field_str() -> None:
    """One non-datetime string among datetimes: the field is str."""
    draft, _ = draft_of(lines_of([{"t": "2024-01-01T10:00:00Z"}, {"t": "soon"}]))
    assert _field(draft, "t") == FieldSpec("t", str)


def test_nullability_and_the_null_ceiling() -> None:
    """A field seen null is nullable; the ceiling is the highest null rate plus the margin,
    rounded up to hundredths, and the file says which field it came from."""
    records = [{"a": None if i < 3 else 1.0, "b": None if i < 1 else 2} for i in range(40)]
    draft, _ = draft_of(lines_of(records), margin=Fraction(1, 10), bounds=False)
    assert _field(draft, "a").is_nullable and _field(draft, "b").is_nullable
    assert draft.contract is not None
    assert draft.contract.max_allowed_null_pct == 8.25  # 7.5 % * 1.1
    assert draft.ceiling_from == ("a", 7.5)
    assert draft.facts["a"].null_pct == 7.5


def test_no_nullable_field_keeps_the_default_ceiling() -> None:
    """Without nulls the ceiling is the contract language's default."""
    draft, _ = draft_of(lines_of([{"a": 1}]))
    assert draft.contract is not None and draft.contract.max_allowed_null_pct == 1.0
    assert draft.ceiling_from is None


def test_bounds_widen_outward_by_the_margin_and_keep_their_sign() -> None:
    """min/max move out by margin x magnitude; a minimum of 0 stays 0; ints stay whole."""
    draft, _ = draft_of(lines_of([{"p": 100.0, "s": 0}, {"p": 110.0, "s": 7}]))
    price, size = _field(draft, "p"), _field(draft, "s")
    assert (price.min_value, price.max_value) == (90.0, 121.0)
    assert (size.min_value, size.max_value) == (0, 8)
    assert isinstance(size.min_value, int) and isinstance(size.max_value, int)


def test_a_margin_of_zero_bounds_at_the_observed_values() -> None:
    """--margin 0: the bounds are the extremes seen."""
    draft, _ = draft_of(lines_of([{"p": -3.25}, {"p": 9.5}]), margin=Fraction(0))
    assert (_field(draft, "p").min_value, _field(draft, "p").max_value) == (-3.25, 9.5)


def test_fields_seen_in_part_of_the_sample_are_left_out() -> None:
    """A field absent from some records (or objects) is left out and listed."""
    draft, _ = draft_of(
        lines_of([{"a": 1, "o": {"x": 1, "y": 1}, "p": 1}, {"a": 2, "o": {"x": 2}}])
    )
    assert draft.contract is not None
    assert draft.contract.field_names == ("a", "o")
    assert [f.name for f in _field(draft, "o").fields or ()] == ["x"]
    assert sorted(draft.partial) == [("o.y", 1, 2), ("p", 1, 2)]


def test_untypable_fields_are_left_out_with_their_reason() -> None:
    """Mixed types, always null, empty containers, undeclarable names: left out, each with
    a reason."""
    draft, _ = draft_of(
        lines_of(
            [
                {"ok": 1, "mix": 1, "nul": None, "eo": {}, "ea": [], "o": {"a.b": 1, "c": 2}},
                {"ok": 2, "mix": "1", "nul": None, "eo": {}, "ea": [], "o": {"a.b": 1, "c": 2}},
            ]
        )
    )
    reasons = dict(draft.untyped)
    assert reasons["mix"] == "values of several types: int 1, str 1"
    assert reasons["nul"] == "always null"
    assert reasons["eo"] == "always an empty object"
    assert reasons["ea"] == "always an empty array: its items have no type"
    assert "'.', '[' or ']'" in reasons["o.a.b"]
    assert draft.contract is not None and draft.contract.field_names == ("ok", "o")


def test_nested_objects_and_arrays_are_typed_with_item_counts() -> None:
    """Objects get their fields, arrays their items (objects too) and min/max items."""
    records = [
        {"book": {"bid": 1.5, "ask": ask}, "levels": [{"price": 1.0, "size": 3}] * n}
        for n, ask in ((1, None), (4, 2.0))
    ]
    draft, _ = draft_of(lines_of(records), bounds=True, margin=Fraction(0))
    book, levels = _field(draft, "book"), _field(draft, "levels")
    assert book.fields is not None and [f.name for f in book.fields] == ["bid", "ask"]
    assert book.fields[1] == FieldSpec("ask", float, True, min_value=2.0, max_value=2.0)
    assert draft.facts["book.ask"].null_pct == 50.0
    assert (levels.min_items, levels.max_items) == (1, 4)
    assert levels.items is not None and levels.items.expected_type is dict
    assert [f.name for f in levels.items.fields or ()] == ["price", "size"]


def test_a_container_deeper_than_a_contract_may_declare_is_left_out() -> None:
    """Objects nested past MAX_NESTING_DEPTH: the too-deep object is left out."""
    value: object = {"leaf": 1}
    for _ in range(MAX_NESTING_DEPTH + 2):
        value = {"o": value}
    draft, _ = draft_of(lines_of([{"deep": value, "a": 1}]))
    assert any("deeper than" in reason for _, reason in draft.untyped)
    assert reloaded(draft) == draft.contract


def test_lines_that_are_no_record_are_counted_by_reason() -> None:
    """Undecodable, non-object, duplicate-key, blank and oversized lines are no record."""
    _, sample = draft_of(
        [b'{"a": 1}', b"nope", b"[1]", b'{"a": 1, "a": 2}', b"", None]  # type: ignore[list-item]
    )
    assert sample.records == 1
    assert dict(sample.skipped) == {
        Skip.UNDECODABLE: 1,
        Skip.NOT_AN_OBJECT: 1,
        Skip.DUPLICATE_KEY: 1,
        Skip.BLANK: 1,
        Skip.OVERSIZED: 1,
    }
    assert sample.first_skipped[Skip.UNDECODABLE] == 2


def test_an_empty_sample_or_nothing_typed_gives_no_contract() -> None:
    """No record, or no field that could be typed: no contract."""
    assert draft_of([])[0].contract is None
    assert draft_of(lines_of([{"n": None}]))[0].contract is None


def test_the_rendered_file_loads_back_as_the_same_contract() -> None:
    """The YAML written is a contract file that loads to the drafted contract."""
    records = [
        {"s": "a\nb", "n": 2**63 - 1, "f": 1e-9, "t": "2024-01-01T00:00:00Z", "b": True},
        {"s": "\u2028é😀", "n": -(2**63), "f": 1e300, "t": "2024-01-01T00:00:00Z", "b": False},
        {"s": "yes", "n": 0, "f": -0.0, "t": "2024-01-01T00:00:00Z", "b": None},
    ]
    keyed = [{**r, "we\nird": 1, "null": 2, "Yes": 3} for r in records]
    draft, _ = draft_of(lines_of(keyed))
    assert reloaded(draft) == draft.contract


def test_integer_literals_beyond_64_bits_make_a_float_field_that_passes_them() -> None:
    """The decoder reads a literal past 64 bits as a float: the field is float, and both
    verifier paths pass the sample; an unsigned 64-bit int keeps an int field."""
    from stream_validator.verify import DataSchemaContractVerifier

    for lines, expected in (
        (
            [b'{"n": 1180591620717411303424}', b'{"n": 1}', b'{"n": -99999999999999999999999}'],
            float,
        ),
        ([b'{"n": 18446744073709551615}', b'{"n": 1}'], int),
    ):
        draft, _ = draft_of(lines)
        assert draft.contract is not None
        assert _field(draft, "n").expected_type is expected
        for fast_path in (True, False):
            verifier = DataSchemaContractVerifier(draft.contract, fast_path=fast_path)
            assert verifier.validate_payloads(lines).quarantined_count == 0
