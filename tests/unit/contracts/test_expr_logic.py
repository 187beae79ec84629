"""The rule grammar's strings, ``in``, ``or`` and ``not``: parsing, typing, evaluation, nulls."""

from __future__ import annotations

import math
from datetime import datetime

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from stream_validator.contracts.expr import (
    MAX_LIST,
    MAX_STRING,
    And,
    Compare,
    Const,
    Expr,
    Field,
    In,
    Not,
    Or,
    RuleError,
    Str,
    check_rule,
    evaluate,
    failing_link,
    parse_rule,
    render,
)
from stream_validator.contracts.expr_eval import normal_form
from tests.unit.contracts.test_expr import arithmetic, comparison

TYPES: dict[str, type] = {
    "bid": float,
    "ask": float,
    "qty": int,
    "side": str,
    "venue": str,
    "halted": bool,
    "ts": datetime,
}


def error_of(text: str) -> str:
    """The message of the RuleError that parsing and checking ``text`` raises."""
    with pytest.raises(RuleError) as info:
        check_rule(parse_rule(text), TYPES)
    return str(info.value)


# --- parsing ---------------------------------------------------------------------------


def test_or_binds_looser_than_and() -> None:
    """``a and b or c`` is ``(a and b) or c``."""
    expr = parse_rule("bid > 0 and ask > 0 or qty == 0")
    assert isinstance(expr, Or)
    assert isinstance(expr.terms[0], And)


def test_not_binds_tighter_than_and() -> None:
    """``not a and b`` is ``(not a) and b``."""
    expr = parse_rule("not bid > 0 and ask > 0")
    assert isinstance(expr, And)
    assert isinstance(expr.terms[0], Not)


def test_parentheses_override_precedence() -> None:
    """``a and (b or c)`` keeps the ``or`` inside."""
    expr = parse_rule("bid > 0 and (ask > 0 or qty == 0)")
    assert isinstance(expr, And)
    assert isinstance(expr.terms[1], Or)


def test_string_constants_in_both_quotes_are_equal() -> None:
    """``'limit'`` and ``"limit"`` are the same constant."""
    assert parse_rule("side == 'limit'") == parse_rule('side == "limit"')


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (r"side == 'it\'s'", "it's"),
        (r'side == "say \"hi\""', 'say "hi"'),
        (r"side == 'back\\slash'", "back\\slash"),
        ("side == 'caf\u00e9 \U0001f600'", "caf\u00e9 \U0001f600"),
        ("side == ''", ""),
    ],
)
def test_string_escapes(text: str, value: str) -> None:
    """A backslash escapes a backslash or either quote; other characters are literal."""
    expr = parse_rule(text)
    assert isinstance(expr, Compare)
    assert expr.operands[1] == Str(value)


def test_in_list_of_strings_and_numbers() -> None:
    """``in`` takes a list of strings or of numbers (negative ones too, a trailing comma)."""
    assert parse_rule("side in ['buy', 'sell']") == In(Field("side"), (Str("buy"), Str("sell")))
    assert parse_rule("qty not in [1, -2.5,]") == In(
        Field("qty"), (Const(1), Const(-2.5)), negated=True
    )


@pytest.mark.parametrize(
    ("text", "column", "words"),
    [
        (r"side == 'a\n'", 11, "escapes only"),
        ("side == 'open", 9, "not closed"),
        ("side == 'a\tb'", 11, "control"),
        ("side < 'a'", 8, "'==', '!=' or 'in'"),
        ("'a' == 1", 1, "compared with a number"),
        ("'a' + 1 > 0", 1, "needs numbers"),
        ("side in []", 10, "numbers or strings"),
        ("side in ['a', 1]", 15, "only numbers or only strings"),
        ("side in 'a'", 9, "list of constants"),
        ("side in [bid]", 10, "numbers or strings"),
        ("side in ['a' 'b']", 14, "expected ',' or ']'"),
        ("not bid", 5, "needs a condition"),
        ("bid > 0 or 1", 12, "joins conditions"),
        ("bid > 0 || ask > 0", 9, "use 'or'"),
        ("bid > 0 && ask > 0", 9, "use 'and'"),
        ("!(bid > 0)", 1, "use 'not'"),
        ("(bid > 0) in [1]", 2, "tests a value"),
        ("bid > 0 'x'", 9, "after a complete rule"),
    ],
)
def test_malformed_new_constructs_name_the_column(text: str, column: int, words: str) -> None:
    """Each malformed string, list or logic construct is refused at its column with advice."""
    message = error_of(text)
    assert words in message
    assert f"column {column}" in message


def test_long_string_constant_is_refused() -> None:
    """A string constant longer than MAX_STRING characters is refused."""
    assert "at most" in error_of(f"side == '{'x' * (MAX_STRING + 1)}'")
    check_rule(parse_rule(f"side == '{'x' * MAX_STRING}'"), TYPES)


def test_long_in_list_is_refused() -> None:
    """An ``in`` list of more than MAX_LIST items is refused."""
    assert "at most" in error_of(f"qty in [{', '.join(['1'] * (MAX_LIST + 1))}]")


def test_keywords_are_not_fields() -> None:
    """``or``, ``not`` and ``in`` are keywords, never read as field names."""
    assert "found 'in'" in error_of("in > 0")


# --- typing against the contract -------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("side == 1", "str field 'side' at column 1 is compared with a number at column 9"),
        ("bid == 'x'", "numeric field 'bid' at column 1 is compared with a string at column 8"),
        ("side == bid", "str field 'side' at column 1 is compared with numeric field 'bid'"),
        ("side in [1, 2]", "str field 'side' at column 1 is tested against a list of numbers"),
        ("qty in ['a']", "numeric field 'qty' at column 1 is tested against a list of strings"),
        ("side + 1 > 0", "field 'side' at column 1 is str; arithmetic needs numbers"),
        ("side < venue", "'<' at column 1 orders strings"),
        ("halted == 'x'", "field 'halted' at column 1 is bool"),
        ("ts == 'x'", "field 'ts' at column 1 is datetime"),
    ],
)
def test_mistyped_comparison_is_a_load_error(text: str, words: str) -> None:
    """A str field against a number (and the like) is refused, naming field and column."""
    assert words in error_of(text)


def test_str_fields_compare_with_each_other() -> None:
    """Two str fields may be compared with == and !=."""
    assert check_rule(parse_rule("side != venue"), TYPES) == {"side", "venue"}


# --- rendering -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "bid <= ask or bid == 0",
        "not (bid > 0 and ask > 0) or qty in [1, -2]",
        "not not side == 'a\\'b'",
        "(bid > 0 or ask > 0) and side not in ['x', '\"']",
    ],
)
def test_render_round_trips(text: str) -> None:
    """The canonical text parses back to the same tree."""
    expr = parse_rule(text)
    assert parse_rule(render(expr)) == expr


# --- evaluation ------------------------------------------------------------------------

TEXT = frozenset({"side", "venue"})


def holds(text: str, **record: object) -> bool:
    return evaluate(parse_rule(text), record, TEXT)


def test_or_holds_when_either_side_does() -> None:
    """``bid <= ask or bid == 0``: a crossed book with a zero bid passes, without it fails."""
    assert holds("bid <= ask or bid == 0", bid=0, ask=-1.0)
    assert holds("bid <= ask or bid == 0", bid=1.0, ask=2.0)
    assert not holds("bid <= ask or bid == 0", bid=3.0, ask=2.0)


def test_not_negates() -> None:
    """``not`` turns a holding comparison into a violated one and back."""
    assert not holds("not bid > 0", bid=1.0)
    assert holds("not bid > 0", bid=-1.0)


@pytest.mark.parametrize(
    ("text", "record", "expected"),
    [
        ("side == 'limit'", {"side": "limit"}, True),
        ("side == 'limit'", {"side": "market"}, False),
        ("side != 'limit'", {"side": "limit"}, False),
        ("side in ['buy', 'sell']", {"side": "hold"}, False),
        ("side not in ['buy', 'sell']", {"side": "buy"}, False),
        ("side == venue", {"side": "x", "venue": "x"}, True),
        ("qty in [1, 2.5]", {"qty": 1.0}, True),
        ("qty in [1, 2.5]", {"qty": 3}, False),
        ("qty not in [-1]", {"qty": -1}, False),
    ],
)
def test_strings_and_in(text: str, record: dict[str, object], expected: bool) -> None:
    """String comparisons and ``in`` compare values exactly (1 == 1.0, as ``==`` does)."""
    assert holds(text, **record) is expected


@pytest.mark.parametrize("value", [None, 5, True, math.nan])
def test_non_string_in_a_string_comparison_does_not_apply(value: object) -> None:
    """A null, number, bool or NaN where a str is compared makes the comparison hold."""
    assert holds("side == 'limit'", side=value)
    assert holds("side not in ['x']", side=value)
    assert holds("not side == 'limit'", side=value)


def test_missing_field_in_or_does_not_decide_the_rule() -> None:
    """``a or b`` with ``a`` unknown (missing) holds whatever ``b`` is: it cannot be shown false."""
    assert holds("bid > 0 or ask > 0", ask=-1.0)
    assert holds("bid > 0 or ask > 0", ask=1.0)


def test_null_under_not_does_not_apply() -> None:
    """``not`` of a comparison reading a null holds too, not a violation."""
    assert holds("not (bid > 0)", bid=None)
    assert holds("not (bid > 0 and ask > 0)", bid=None, ask=1.0)
    assert not holds("not (bid > 0 and ask > 0)", bid=2.0, ask=1.0)


def test_null_does_not_hide_a_false_side_of_and_under_not() -> None:
    """``not (a or b)`` is ``not a and not b``: a null in ``a`` leaves ``not b`` checked."""
    assert not holds("not (bid > 0 or ask > 0)", bid=None, ask=1.0)


def test_undefined_fails_whichever_way_it_is_negated() -> None:
    """A zero divisor violates ``x / y > 1`` and ``not (x / y > 1)`` alike."""
    assert not holds("bid / qty > 1", bid=1.0, qty=0)
    assert not holds("not (bid / qty > 1)", bid=1.0, qty=0)
    assert not holds("bid / qty not in [1]", bid=1.0, qty=0)


def test_computed_nan_fails_not_in() -> None:
    """A NaN computed from infinities is in no list and not outside it either."""
    assert not holds("bid - ask not in [1]", bid=math.inf, ask=math.inf)


def test_failing_link_of_or_names_every_side() -> None:
    """A broken ``or`` is explained by each of its failing sides."""
    expr = parse_rule("bid <= ask or bid == 0")
    assert failing_link(expr, {"bid": 3.0, "ask": 2.0}) == "bid <= ask or bid == 0"
    expr = parse_rule("not (side == 'x' or qty > 1)")
    assert failing_link(expr, {"side": "x", "qty": 0}, TEXT) == "side != 'x'"


# --- generated: three-valued logic is the definition ------------------------------------

NAMES = ("a", "b", "c", "d")


def _negations(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
    return st.one_of(
        children.map(Not),
        st.lists(children, min_size=2, max_size=3).map(tuple).map(And),
        st.lists(children, min_size=2, max_size=3).map(tuple).map(Or),
    )


membership = st.builds(
    In,
    arithmetic,
    st.lists(st.sampled_from([0, 1, -1, 2.5, 1000]).map(Const), min_size=1, max_size=3).map(tuple),
    st.booleans(),
)
logic = st.recursive(st.one_of(comparison, membership), _negations, max_leaves=5)
nullable_numbers = st.one_of(st.none(), st.integers(-3, 3), st.sampled_from([0.5, -1.5, 1000.0]))
nullable_records = st.fixed_dictionaries({name: nullable_numbers for name in NAMES})


def kleene(expr: Expr, record: dict[str, object]) -> bool | None:
    """SQL's three-valued logic on the tree as written: None is unknown (a null read)."""
    if isinstance(expr, Not):
        inner = kleene(expr.operand, record)
        return None if inner is None else not inner
    if isinstance(expr, And | Or):
        values = [kleene(term, record) for term in expr.terms]
        stop = isinstance(expr, Or)  # the value that decides: True for or, False for and
        if stop in values:
            return stop
        return None if None in values else not stop
    if isinstance(expr, Compare) and len(expr.ops) > 1:  # a chain is the 'and' of its links
        pairs = zip(expr.operands, expr.ops, expr.operands[1:], strict=False)
        return kleene(And(tuple(Compare((x, y), (op,)) for x, op, y in pairs)), record)
    text = render(expr)
    if any(record[name] is None for name in NAMES if name in text):
        return None
    return bool(
        eval(text, {"__builtins__": {}}, dict(record))
    )  # the test's oracle, on generated text


@settings(max_examples=500, deadline=None)
@given(logic, nullable_records)
def test_rule_fails_exactly_when_three_valued_logic_says_false(
    expr: Expr, record: dict[str, object]
) -> None:
    """With nulls, a rule is violated exactly when SQL's three-valued logic makes it false."""
    try:
        expected = kleene(expr, record)
    except ZeroDivisionError:
        assume(False)
        return
    assert evaluate(expr, record) is (expected is not False)


@settings(max_examples=300, deadline=None)
@given(logic)
def test_normal_form_has_no_not_and_round_trips(expr: Expr) -> None:
    """normal_form leaves no Not, and rules (with or/not/in) render and parse back."""
    assert "not " not in render(normal_form(expr)).replace("not in", "")
    parsed = parse_rule(render(expr))  # nested and-in-and (or-in-or) comes back flattened
    assert parse_rule(render(parsed)) == parsed
    assert evaluate(parsed, dict.fromkeys(NAMES, 1)) == evaluate(expr, dict.fromkeys(NAMES, 1))
