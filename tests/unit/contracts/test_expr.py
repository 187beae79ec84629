"""The record-rule grammar: parsing, checking against a contract, rendering, evaluating."""

from __future__ import annotations

import math
import re
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_validator.contracts.expr import (
    And,
    BinOp,
    Compare,
    Const,
    Expr,
    Field,
    Neg,
    RuleError,
    check_rule,
    compile_rule,
    evaluate,
    failing_link,
    fields_of,
    parse_rule,
    render,
)
from stream_validator.errors import ContractError

TYPES: dict[str, type] = {
    "bid": float,
    "ask": float,
    "bid_sz": int,
    "symbol": str,
    "halted": bool,
    "event_ts": datetime,
}


def column_of(text: str) -> int | None:
    """The column a RuleError reports for ``text``."""
    with pytest.raises(RuleError) as info:
        parse_rule(text)
    return info.value.column


# --- parsing -------------------------------------------------------------------------


def test_multiplication_binds_tighter_than_addition() -> None:
    """'a + b * c' is a + (b * c)."""
    expr = parse_rule("a + b * c > 0")
    assert isinstance(expr, Compare)
    assert expr.operands[0] == BinOp("+", Field("a"), BinOp("*", Field("b"), Field("c")))


def test_subtraction_is_left_associative() -> None:
    """'a - b - c' is (a - b) - c."""
    expr = parse_rule("a - b - c > 0")
    assert isinstance(expr, Compare)
    assert expr.operands[0] == BinOp("-", BinOp("-", Field("a"), Field("b")), Field("c"))


def test_unary_minus_binds_tighter_than_multiplication() -> None:
    """'-a * b' is (-a) * b, as in Python."""
    expr = parse_rule("-a * b < 0")
    assert isinstance(expr, Compare)
    assert expr.operands[0] == BinOp("*", Neg(Field("a")), Field("b"))


def test_comparison_chain_is_one_node() -> None:
    """'low <= open <= high' keeps three operands and two operators."""
    expr = parse_rule("low <= open <= high")
    assert expr == Compare((Field("low"), Field("open"), Field("high")), ("<=", "<="))


def test_nested_and_is_flattened() -> None:
    """'(a < b and c < d) and e < f' is one And of three comparisons."""
    expr = parse_rule("(a < b and c < d) and e < f")
    assert isinstance(expr, And)
    assert len(expr.terms) == 3


def test_number_literals_keep_int_and_float() -> None:
    """'5' is an int, '0.05' and '1.5e-3' floats, '2E3' a float."""
    expr = parse_rule("a < 5 and b < 0.05 and c < 1.5e-3 and d < 2E3 and e < .5")
    assert isinstance(expr, And)
    values = [term.operands[1].value for term in expr.terms]  # type: ignore[union-attr]
    assert values == [5, 0.05, 0.0015, 2000.0, 0.5]
    assert type(values[0]) is int
    assert type(values[3]) is float


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ("bid", 1),  # a number is not a rule
        ("bid <= ask || bid_sz > 0", 12),
        ("!(bid > 0)", 1),
        ("bid = ask", 5),
        ("(bid < ask) < 1", 2),
        ("bid + (ask < 1) > 0", 8),
        ("bid <= (ask", 12),
        ("bid < ask ask", 11),
        ("bid $ ask", 5),
        ("1x < bid", 1),
        ("bid < ask and 1", 15),
        ("1e999 < bid", 1),
        ("9223372036854775808 < bid", 1),
        ("bid <", 6),
        ("", 1),
        ("bid < \u0663", 7),  # an Arabic-Indic digit is not a number here
    ],
)
def test_malformed_rule_is_rejected_with_its_column(text: str, column: int) -> None:
    """Every malformed rule raises RuleError pointing at the offending column."""
    assert column_of(text) == column


def test_rule_error_is_a_contract_error() -> None:
    """A bad rule fails contract loading like any contract problem."""
    assert issubclass(RuleError, ContractError)


def test_overlong_rule_is_rejected() -> None:
    """A rule longer than 1000 characters is refused before parsing."""
    with pytest.raises(RuleError, match="at most 1000"):
        parse_rule("a < " + "1 + " * 300 + "1")


def test_deep_nesting_is_rejected_not_a_recursion_error() -> None:
    """Parentheses nested past 32 levels raise RuleError, not RecursionError."""
    with pytest.raises(RuleError, match="nested more than 32"):
        parse_rule("(" * 200 + "a < b" + ")" * 200)


def test_many_unary_minus_are_bounded_too() -> None:
    """A long run of '-' is nesting too and is refused."""
    with pytest.raises(RuleError, match="nested"):
        parse_rule("-" * 500 + "a < b")


# --- checking against the contract --------------------------------------------------


def test_check_returns_the_fields_read() -> None:
    """check_rule answers the set of fields a valid rule reads."""
    assert check_rule(parse_rule("ask - bid <= 0.05 * ask"), TYPES) == {"bid", "ask"}


def test_unknown_field_is_named_with_its_column() -> None:
    """A field the contract does not declare is an error naming it and its column."""
    with pytest.raises(RuleError, match=r"unknown field 'bidd' at column 1"):
        check_rule(parse_rule("bidd <= ask"), TYPES)


@pytest.mark.parametrize("name", ["symbol", "halted", "event_ts"])
def test_non_numeric_field_is_rejected(name: str) -> None:
    """str, bool (never a number here) and datetime fields cannot appear in a rule."""
    with pytest.raises(RuleError, match=f"field '{name}' at column 1 is"):
        check_rule(parse_rule(f"{name} > 0"), TYPES)


def test_every_bad_field_is_listed() -> None:
    """All field problems of one rule are reported together."""
    with pytest.raises(RuleError) as info:
        check_rule(parse_rule("nope < halted"), TYPES)
    assert "'nope'" in str(info.value)
    assert "'halted'" in str(info.value)


# --- evaluating ----------------------------------------------------------------------


def holds(text: str, **record: object) -> bool:
    return evaluate(parse_rule(text), record)


def test_crossed_book_is_violated() -> None:
    """bid above ask violates 'bid <= ask'; equal (locked) does not."""
    assert not holds("bid <= ask", bid=101.5, ask=101.2)
    assert holds("bid <= ask", bid=101.2, ask=101.2)


def test_int_and_float_fields_compare_exactly() -> None:
    """An int field compares with a float field as numbers."""
    assert holds("bid_sz >= bid", bid_sz=3, bid=2.5)


def test_chain_checks_every_link() -> None:
    """'low <= open <= high' fails when open is above high."""
    assert not holds("low <= open <= high", low=1.0, open=3.0, high=2.0)


def test_and_requires_every_term() -> None:
    """'a and b' fails when only the second comparison fails."""
    assert not holds("bid > 0 and ask > 2", bid=1.0, ask=1.0)


@pytest.mark.parametrize("value", [None, "101.5", True, [1.0]])
def test_unusable_field_makes_its_comparison_hold(value: object) -> None:
    """A null, text, bool or container operand is the field check's business: the link holds."""
    assert holds("bid <= ask", bid=value, ask=1.0)


def test_missing_field_makes_its_comparison_hold() -> None:
    """A missing field is reported once as missing_field, not again by the rule."""
    assert holds("bid <= ask", ask=1.0)


def test_unusable_field_skips_only_its_own_link() -> None:
    """A null low skips 'low <= open' but 'open <= high' is still judged."""
    assert not holds("low <= open <= high", low=None, open=3.0, high=2.0)


def test_nan_field_makes_its_comparison_hold() -> None:
    """A NaN the contract lets through is 'no value', as it skips bounds."""
    assert holds("bid <= ask", bid=math.nan, ask=1.0)


def test_infinity_compares_like_a_number() -> None:
    """+inf <= +inf holds; +inf <= 1 does not."""
    assert holds("bid <= ask", bid=math.inf, ask=math.inf)
    assert not holds("bid <= ask", bid=math.inf, ask=1.0)


def test_nan_computed_from_infinities_violates() -> None:
    """'ask - bid' with both +inf is undefined: the rule cannot be shown to hold."""
    assert not holds("ask - bid <= 1", bid=math.inf, ask=math.inf)


def test_computed_nan_violates_even_for_not_equal() -> None:
    """An undefined value is not 'different from 1' either."""
    assert not holds("ask - bid != 1", bid=math.inf, ask=math.inf)


@pytest.mark.parametrize("divisor", [0, 0.0, -0.0])
def test_division_by_zero_violates(divisor: object) -> None:
    """'spread / mid' with mid zero is violated, never an exception."""
    assert not holds("(ask - bid) / mid <= 0.01", bid=1.0, ask=1.0, mid=divisor)


def test_compiled_rule_is_reusable() -> None:
    """compile_rule gives one function that judges many records."""
    check = compile_rule(parse_rule("bid <= ask"))
    assert [check({"bid": b, "ask": 1.0}) for b in (0.5, 1.5)] == [True, False]


def test_failing_link_names_the_broken_comparison() -> None:
    """Of 'low <= open <= high', the message part is the link that failed."""
    expr = parse_rule("low <= open <= high")
    assert failing_link(expr, {"low": 1, "open": 3, "high": 2}) == "open <= high"


def test_failing_link_is_none_when_the_rule_holds() -> None:
    """A satisfied rule has no failing link."""
    assert failing_link(parse_rule("bid <= ask"), {"bid": 1, "ask": 2}) is None


def test_evaluating_a_number_is_a_type_error() -> None:
    """Only conditions are rules: a bare number tree is refused."""
    with pytest.raises(TypeError):
        evaluate(Field("bid"), {"bid": 1.0})


# --- generated: rendering round-trips, evaluation agrees with Python ------------------

NAMES = ("a", "b", "c", "d")
numbers = st.one_of(
    st.integers(min_value=-1000, max_value=1000),
    # Magnitudes kept away from 0 and the float limits so no generated expression
    # overflows: then Python's own evaluation is a faithful reference.
    st.floats(min_value=-1e6, max_value=1e6).filter(lambda x: x == 0 or abs(x) >= 1e-3),
)
leaves = st.one_of(
    st.sampled_from(NAMES).map(Field),
    st.integers(min_value=0, max_value=10**6).map(Const),
    st.floats(min_value=0, max_value=1e6).filter(lambda x: x == 0 or x >= 1e-3).map(Const),
)


def _extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    return st.one_of(
        children.map(Neg),
        st.builds(BinOp, st.sampled_from("+-*/"), children, children),
    )


arithmetic = st.recursive(leaves, _extend, max_leaves=6)
comparison = st.integers(min_value=1, max_value=3).flatmap(
    lambda n: st.builds(
        Compare,
        st.tuples(*[arithmetic] * (n + 1)),
        st.tuples(*[st.sampled_from(["<", "<=", ">", ">=", "==", "!="])] * n),
    )
)
rules = st.one_of(comparison, st.lists(comparison, min_size=2, max_size=3).map(tuple).map(And))
records = st.fixed_dictionaries({name: numbers for name in NAMES})


def python_reference(expr: Expr, record: dict[str, object]) -> bool:
    """Python's own evaluation of the rendered rule; a zero divisor means violated."""
    try:
        return bool(eval(render(expr), {"__builtins__": {}}, dict(record)))
    except ZeroDivisionError:
        return False


@settings(max_examples=300, deadline=None)
@given(rules)
def test_render_then_parse_round_trips(expr: Expr) -> None:
    """parse_rule(render(e)) == e for every generated rule."""
    assert parse_rule(render(expr)) == expr


@settings(max_examples=300, deadline=None)
@given(rules, records)
def test_evaluation_agrees_with_python(expr: Expr, record: dict[str, object]) -> None:
    """On finite numbers, evaluate() gives Python's answer for the same expression."""
    assert evaluate(expr, record) == python_reference(expr, record)


@settings(max_examples=100, deadline=None)
@given(rules)
def test_fields_of_names_every_field_in_the_text(expr: Expr) -> None:
    """fields_of() is exactly the set of field names that appear in the rendering."""
    words = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", render(expr))
    assert fields_of(expr) == {word for word in words if word != "and"}
