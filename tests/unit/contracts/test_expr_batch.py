"""The column-wise rule evaluation gives exactly the per-record answer."""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from stream_validator.contracts.expr import Expr, compile_rule, parse_rule
from stream_validator.contracts.expr_batch import columns_of, compile_batch_rule
from tests.unit.contracts.test_expr import NAMES, rules
from tests.unit.contracts.test_expr_logic import logic


def violating(text: str, records: list[dict[str, object]]) -> list[int]:
    """The rows of ``records`` that break rule ``text``, by the batch evaluator."""
    expr = parse_rule(text)
    return compile_batch_rule(expr)(columns_of(records, ["bid", "ask", "mid"]), len(records))


def test_batch_finds_the_crossed_rows() -> None:
    """Rows 1 and 3 have bid above ask."""
    records: list[dict[str, object]] = [
        {"bid": 1.0, "ask": 2.0},
        {"bid": 3.0, "ask": 2.0},
        {"bid": 2.0, "ask": 2.0},
        {"bid": 5, "ask": 4.5},
    ]
    assert violating("bid <= ask", records) == [1, 3]


def test_null_and_nan_rows_are_not_violations() -> None:
    """Null and NaN operands make the comparison not applicable, as per record."""
    records: list[dict[str, object]] = [{"bid": None, "ask": 1.0}, {"bid": math.nan, "ask": 1.0}]
    assert violating("bid <= ask", records) == []


def test_missing_field_is_like_null() -> None:
    """A record without the field is not a violation of the rule."""
    assert violating("bid <= ask", [{"ask": 1.0}]) == []


def test_zero_divisor_falls_back_to_per_record() -> None:
    """A zero divisor in one row violates that row only."""
    records: list[dict[str, object]] = [
        {"bid": 1.0, "ask": 1.1, "mid": 1.05},
        {"bid": 1.0, "ask": 1.1, "mid": 0.0},
    ]
    assert violating("(ask - bid) / mid <= 0.5", records) == [1]


def test_computed_nan_violates_not_equal() -> None:
    """inf - inf is undefined: 'ask - bid != 1' is violated, as per record."""
    assert violating("ask - bid != 1", [{"bid": math.inf, "ask": math.inf}]) == [0]


def test_columns_holding_none_are_still_judged_right() -> None:
    """Columns not built by columns_of (None left in) give the same rows, more slowly."""
    check = compile_batch_rule(parse_rule("bid <= ask"))
    assert check({"bid": [None, 3.0, 1.0], "ask": [1.0, 2.0, 2.0]}, 3) == [1]


def test_columns_of_turns_null_and_missing_into_nan() -> None:
    """Null and missing values become NaN; numbers stay as they are."""
    columns = columns_of([{"bid": None}, {}, {"bid": 2}], ["bid"])
    assert [math.isnan(v) if isinstance(v, float) else v for v in columns["bid"]] == [
        True,
        True,
        2,
    ]


def test_empty_batch_has_no_violations() -> None:
    """Zero rows, zero violations."""
    assert violating("bid <= ask", []) == []


values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.sampled_from([0.0, -0.0, 0.5, -2.5, 1e300, math.inf, -math.inf, math.nan]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.just("text"),
)
batches = st.lists(
    st.fixed_dictionaries({}, optional={name: values for name in NAMES}), max_size=12
)


@settings(max_examples=400, deadline=None)
@given(rules, batches)
def test_batch_agrees_with_per_record(expr: Expr, records: list[dict[str, object]]) -> None:
    """For any rule and any values (nulls, NaN, inf, bools, text, zeros), same rows fail."""
    scalar = compile_rule(expr)
    expected = [i for i, record in enumerate(records) if not scalar(record)]
    assert compile_batch_rule(expr)(columns_of(records, NAMES), len(records)) == expected


@settings(max_examples=200, deadline=None)
@given(logic, batches)
def test_batch_agrees_with_per_record_for_or_not_in(
    expr: Expr, records: list[dict[str, object]]
) -> None:
    """Rules with or, not and in (judged row by row) give the per-record rows too."""
    scalar = compile_rule(expr)
    expected = [i for i, record in enumerate(records) if not scalar(record)]
    assert compile_batch_rule(expr)(columns_of(records, NAMES), len(records)) == expected


def test_batch_compares_strings() -> None:
    """A string rule over columns fails the rows whose str field breaks it, not the nulls."""
    expr = parse_rule("a in ['buy', 'sell'] or b > 0")
    records: list[dict[str, object]] = [{"a": "buy", "b": -1}, {"a": "hold", "b": -1}, {"b": -1}]
    check = compile_batch_rule(expr, frozenset({"a"}))
    assert check(columns_of(records, ["a", "b"]), 3) == [1]
