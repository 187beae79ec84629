"""Evaluating a parsed record rule: compiled once to closures, then run per record.

A rule is the conjunction of its *links*: every comparison ``x op y`` of every chain
(``low <= open <= high`` has two links). Each link is judged on its own:

* **Not applicable, holds** when a field it reads is missing, null, not a number (bool
  and str are not numbers) or NaN. Those are the field's own business: a missing or
  mistyped field is reported once by its field check, a null in a nullable field means
  "no value" (an empty side of the book), and a NaN the contract lets through is "no
  value" too, exactly as NaN skips ``min_value``/``max_value``. SQL CHECK constraints
  treat NULL the same way.
* **Violated** when its arithmetic is undefined on usable inputs: a division by zero,
  an OverflowError, or a NaN computed from allowed infinities (``inf - inf``). A rule
  that cannot be shown to hold does not pass; the author wrote it for values where it
  means something, and the record is outside them.
* Otherwise it holds when the comparison is true. ±Inf compares like any number
  (``inf <= inf`` holds), as it does against a field's bounds.

``or``, ``not``, ``in`` and strings keep that meaning, the one SQL's three-valued logic gives
a CHECK constraint (a rule fails only when it is surely false). ``not`` is pushed down to
the comparisons first (``normal_form``: ``not (a < b)`` is ``a >= b``, ``not (x in L)`` is
``x not in L``, De Morgan for ``and``/``or``), then each comparison is judged as above and
``and``/``or`` combine the verdicts as booleans. So a comparison reading a null is
"unknown": ``a or b`` with ``a`` unknown holds (it cannot be shown false), and so does
``not a``; a comparison that is undefined fails whichever way it is negated. An ``in``
test is one comparison (with ``==`` against each item). A string comparison (``==``/``!=``
with a str field or a string constant) is not applicable when a str field it reads holds
anything but a str. Without ``or``/``not``/``in``/strings the rule is a conjunction of
links and compiles exactly as before.

Evaluation never raises for any record; ``evaluate`` compiles on each call, hot paths
call ``compile_rule`` once per contract.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Final

from stream_validator.contracts.exprtree import (
    And,
    BinOp,
    Compare,
    Const,
    Expr,
    Field,
    In,
    Neg,
    Not,
    Or,
    Str,
    fields_of,
    render,
    uses_extensions,
)

Number = int | float
RuleCheck = Callable[[Mapping[str, object]], bool]
_Value = Callable[[Mapping[str, object]], Number]

_COMPARE: Final[dict[str, Callable[[Number, Number], bool]]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}
_ARITHMETIC: Final[dict[str, Callable[[Number, Number], Number]]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
}
_UNDEFINED: Final = (ZeroDivisionError, OverflowError)


def _usable(value: object) -> bool:
    """An int or float that is not NaN; bool is never a number here."""
    kind = type(value)
    if kind is float:
        return value == value  # False only for NaN
    if kind is int:
        return True
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


class _Skip(Exception):
    """A field the link reads is missing, null, not a number or NaN: the link holds."""


_SKIP: Final = _Skip()


def _reader(name: str) -> _Value:
    def read(record: Mapping[str, object]) -> Number:
        value = record.get(name)
        kind = type(value)
        if kind is float:
            if value == value:
                return value  # type: ignore[return-value]
            raise _SKIP
        if kind is int or _usable(value):
            return value  # type: ignore[return-value]
        raise _SKIP

    return read


def _compile_number(expr: Expr) -> _Value:
    """A closure computing a number; raises _Skip when a field it reads is unusable."""
    if isinstance(expr, Field):
        return _reader(expr.name)
    if isinstance(expr, Const):
        value = expr.value
        return lambda record: value
    if isinstance(expr, BinOp):
        op, left, right = (
            _ARITHMETIC[expr.op],
            _compile_number(expr.left),
            _compile_number(expr.right),
        )
        return lambda record: op(left(record), right(record))
    if not isinstance(expr, Neg):
        raise TypeError(f"expected a number at offset {expr.pos}")
    operand = _compile_number(expr.operand)
    return lambda record: -operand(record)


def _compile_link(left_expr: Expr, op_text: str, right_expr: Expr) -> RuleCheck:
    op = _COMPARE[op_text]
    if isinstance(left_expr, Field) and isinstance(right_expr, Field | Const):
        return _field_link(left_expr.name, op, right_expr)
    names = tuple(sorted(fields_of(left_expr) | fields_of(right_expr)))
    left, right = _compile_number(left_expr), _compile_number(right_expr)

    def link(record: Mapping[str, object]) -> bool:
        try:
            a, b = left(record), right(record)
        except _Skip:
            return True
        except _UNDEFINED:
            # Not applicable wins over undefined, whichever operand was computed first.
            return not all(_usable(record.get(name)) for name in names)
        if a != a or b != b:  # NaN computed from allowed infinities
            return False
        return op(a, b)

    return link


def _field_link(name: str, op: Callable[[Number, Number], bool], right: Field | Const) -> RuleCheck:
    """The common shapes ``field op field`` and ``field op constant``, without closures."""
    if isinstance(right, Const):
        constant = right.value

        def with_constant(record: Mapping[str, object]) -> bool:
            a = record.get(name)
            if (type(a) is float and a == a) or type(a) is int or _usable(a):
                return op(a, constant)  # type: ignore[arg-type]
            return True

        return with_constant
    other = right.name

    def with_field(record: Mapping[str, object]) -> bool:
        a, b = record.get(name), record.get(other)
        ta, tb = type(a), type(b)
        if (ta is float or ta is int) and (tb is float or tb is int):
            return op(a, b) if a == a and b == b else True  # type: ignore[arg-type]
        if _usable(a) and _usable(b):
            return op(a, b)  # type: ignore[arg-type]
        return True

    return with_field


def links(expr: Expr) -> list[tuple[Expr, str, Expr]]:
    """Every ``(left, op, right)`` comparison of a conjunction (``and`` of comparisons and
    chains), in reading order; TypeError for any other condition (see ``normal_form``)."""
    if isinstance(expr, And):
        return [link for term in expr.terms for link in links(term)]
    if not isinstance(expr, Compare):
        raise TypeError("links() takes a comparison or an 'and' of comparisons")
    return list(zip(expr.operands, expr.ops, expr.operands[1:], strict=False))


_NEGATED: Final = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}


def normal_form(expr: Expr, negate: bool = False) -> Expr:
    """The rule with ``not`` pushed down to its comparisons: a tree of And, Or, In and
    single comparisons (a chain becomes the And of its links). Equivalent under the
    rules' semantics (the module docstring)."""
    if isinstance(expr, Not):
        return normal_form(expr.operand, not negate)
    if isinstance(expr, And | Or):
        conjunction = isinstance(expr, And) != negate
        node = And if conjunction else Or
        terms: list[Expr] = []
        for term in expr.terms:
            child = normal_form(term, negate)
            terms += child.terms if isinstance(child, node) else [child]
        return node(tuple(terms), expr.pos)
    if isinstance(expr, In):
        return In(expr.operand, expr.values, expr.negated != negate, expr.pos)
    if not isinstance(expr, Compare):
        raise TypeError(f"expected a condition at offset {expr.pos}")
    single = [
        Compare((left, right), (_NEGATED[op] if negate else op,), left.pos)
        for left, op, right in links(expr)
    ]
    if len(single) == 1:
        return single[0]
    return Or(tuple(single), expr.pos) if negate else And(tuple(single), expr.pos)


def is_text(expr: Expr, text: frozenset[str]) -> bool:
    """A string constant or a str field (``text``: the str fields of the contract)."""
    return isinstance(expr, Str) or (isinstance(expr, Field) and expr.name in text)


def _text_reader(expr: Expr) -> Callable[[Mapping[str, object]], str | None]:
    """The string value, None when a str field holds anything but a str (not applicable)."""
    if isinstance(expr, Str):
        constant = expr.value
        return lambda record: constant
    if not isinstance(expr, Field):
        raise TypeError(f"expected a string at offset {expr.pos}")
    name = expr.name

    def read(record: Mapping[str, object]) -> str | None:
        value = record.get(name)
        return value if isinstance(value, str) else None

    return read


def _text_link(left_expr: Expr, op_text: str, right_expr: Expr) -> RuleCheck:
    left, right = _text_reader(left_expr), _text_reader(right_expr)
    equal = op_text == "=="

    def link(record: Mapping[str, object]) -> bool:
        a, b = left(record), right(record)
        if a is None or b is None:
            return True
        return (a == b) is equal

    return link


def _in_test(expr: In) -> RuleCheck:
    members = frozenset(item.value for item in expr.values)
    negated = expr.negated
    if isinstance(expr.values[0], Str):
        read = _text_reader(expr.operand)

        def text_in(record: Mapping[str, object]) -> bool:
            value = read(record)
            return True if value is None else (value in members) is not negated

        return text_in
    number = _compile_number(expr.operand)
    names = tuple(sorted(fields_of(expr.operand)))

    def number_in(record: Mapping[str, object]) -> bool:
        try:
            value = number(record)
        except _Skip:
            return True
        except _UNDEFINED:
            return not all(_usable(record.get(name)) for name in names)
        if value != value:  # NaN computed from allowed infinities
            return False
        return (value in members) is not negated

    return number_in


def _compile_condition(expr: Expr, text: frozenset[str]) -> RuleCheck:
    """A normal-form condition (``normal_form``) as one function."""
    if isinstance(expr, And | Or):
        checks = tuple(_compile_condition(term, text) for term in expr.terms)
        if isinstance(expr, And):
            return lambda record: all(check(record) for check in checks)
        return lambda record: any(check(record) for check in checks)
    if isinstance(expr, In):
        return _in_test(expr)
    if not isinstance(expr, Compare) or len(expr.ops) != 1:
        raise TypeError("expected a condition in normal form")
    left, right = expr.operands
    if is_text(left, text) or is_text(right, text):
        return _text_link(left, expr.ops[0], right)
    return _compile_link(left, expr.ops[0], right)


def plain(expr: Expr, text: frozenset[str]) -> bool:
    """A conjunction of numeric comparisons, compiled as link checks in a loop."""
    return not uses_extensions(expr) and not (fields_of(expr) & text)


def compile_rule(expr: Expr, text: frozenset[str] = frozenset()) -> RuleCheck:
    """A function telling whether a record satisfies the rule (see the module docstring);
    ``text``: the str fields among those it reads (their comparisons are string ones)."""
    if not plain(expr, text):
        return _compile_condition(normal_form(expr), text)
    checks = tuple(_compile_link(*link) for link in links(expr))
    if len(checks) == 1:
        return checks[0]

    def rule(record: Mapping[str, object]) -> bool:
        for check in checks:  # noqa: SIM110 (all() over a generator costs more per record)
            if not check(record):
                return False
        return True

    return rule


def _explain(expr: Expr, record: Mapping[str, object], text: frozenset[str]) -> str | None:
    if isinstance(expr, And):
        for term in expr.terms:
            found = _explain(term, record, text)
            if found is not None:
                return found
        return None
    if isinstance(expr, Or):
        parts = [_explain(term, record, text) for term in expr.terms]
        if any(part is None for part in parts):
            return None
        return " or ".join(part for part in parts if part is not None)
    return None if _compile_condition(expr, text)(record) else render(expr)


def failing_link(
    expr: Expr, record: Mapping[str, object], text: frozenset[str] = frozenset()
) -> str | None:
    """What the record breaks, rendered: the first failing comparison (``open <= high``),
    each failing side of an ``or`` (``bid <= ask or bid == 0``); None if the rule holds.

    For violation messages, off the hot path: call it only when the rule failed.
    """
    return _explain(normal_form(expr), record, text)


def evaluate(expr: Expr, record: Mapping[str, object], text: frozenset[str] = frozenset()) -> bool:
    """True when ``record`` satisfies the rule; compiles each time (tests, one-off checks)."""
    return compile_rule(expr, text)(record)
