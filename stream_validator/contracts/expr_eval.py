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
    fields_of,
    render,
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
    if isinstance(expr, Compare | And):
        raise TypeError(f"expected a number, got a condition at offset {expr.pos}")
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
    """Every ``(left, op, right)`` comparison of a rule, in reading order."""
    if isinstance(expr, And):
        return [link for term in expr.terms for link in links(term)]
    if not isinstance(expr, Compare):
        raise TypeError("a rule is a comparison or an 'and' of comparisons")
    return list(zip(expr.operands, expr.ops, expr.operands[1:], strict=False))


def compile_rule(expr: Expr) -> RuleCheck:
    """A function telling whether a record satisfies the rule (see the module docstring)."""
    checks = tuple(_compile_link(*link) for link in links(expr))
    if len(checks) == 1:
        return checks[0]

    def rule(record: Mapping[str, object]) -> bool:
        for check in checks:  # noqa: SIM110 (all() over a generator costs more per record)
            if not check(record):
                return False
        return True

    return rule


def failing_link(expr: Expr, record: Mapping[str, object]) -> str | None:
    """The first comparison the record breaks, rendered (``open <= high``); None if it holds.

    For violation messages, off the hot path: call it only when the rule failed.
    """
    for left, op, right in links(expr):
        if not _compile_link(left, op, right)(record):
            return render(Compare((left, right), (op,)))
    return None


def evaluate(expr: Expr, record: Mapping[str, object]) -> bool:
    """True when ``record`` satisfies the rule; compiles each time (tests, one-off checks)."""
    return compile_rule(expr)(record)
