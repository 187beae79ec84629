"""Evaluating a record rule over a whole batch at once, column by column.

A per-record closure costs a Python call per comparison and per field; over a batch the
same arithmetic runs as ``map(operator.le, asks, bids)`` chains, which CPython executes
without a Python frame per record. The answer is exactly ``compile_rule``'s, because:

* a row the column pass finds satisfied is satisfied by ``compile_rule`` too: on usable
  numbers both compute the same Python arithmetic; NaN (a NaN field, a null or missing
  value ``columns_of`` turned into NaN, or NaN computed from infinities) makes every
  column comparison false, ``!=`` included (computed as ``<`` or ``>``), so such a row
  is never passed here;
* every row the column pass does not pass is re-judged by ``compile_rule`` on its own
  values, which decides "not applicable" (null, NaN, bool) and "undefined";
* a batch where the column pass raises (a zero divisor, text, an overflow) is judged by
  ``compile_rule`` row by row.

So the column pass only ever saves work; it never decides a violation on its own. A rule
with ``or``, ``not``, ``in`` or a string comparison has no column pass: every row is judged
by ``compile_rule``.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import compress, repeat
from typing import Any, Final

from stream_validator.contracts.expr_eval import compile_rule, links, plain
from stream_validator.contracts.exprtree import BinOp, Const, Expr, Field, Neg, fields_of

Columns = Mapping[str, Sequence[object]]
BatchRuleCheck = Callable[[Columns, int], list[int]]
_Column = Callable[[Mapping[str, Sequence[object]], int], Iterator[object]]

_COMPARE: Final[dict[str, Callable[[Any, Any], Any]]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
}
_ARITHMETIC: Final = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
}
_COLUMN_ERRORS: Final = (TypeError, ZeroDivisionError, OverflowError, ValueError)


def _column(expr: Expr) -> _Column:
    """A function giving the operand's value per row, lazily (a chain of ``map``)."""
    if isinstance(expr, Field):
        name = expr.name
        return lambda columns, n: iter(columns[name])
    if isinstance(expr, Const):
        value = expr.value
        return lambda columns, n: repeat(value, n)
    if isinstance(expr, Neg):
        inner = _column(expr.operand)
        return lambda columns, n: map(operator.neg, inner(columns, n))  # type: ignore[arg-type]
    if isinstance(expr, BinOp):
        op, left, right = _ARITHMETIC[expr.op], _column(expr.left), _column(expr.right)
        return lambda columns, n: map(op, left(columns, n), right(columns, n))
    raise TypeError("expected a number, got a condition")


def _link_holds(left: _Column, op: str, right: _Column) -> Callable[[Columns, int], Iterable[bool]]:
    if op != "!=":
        compare = _COMPARE[op]
        return lambda columns, n: map(compare, left(columns, n), right(columns, n))

    def not_equal(columns: Columns, n: int) -> Iterable[bool]:
        a, b = list(left(columns, n)), list(right(columns, n))
        # 'a < b or a > b': false for NaN, where 'a != b' would be true.
        less, greater = _COMPARE["<"], _COMPARE[">"]
        return map(operator.or_, map(less, a, b), map(greater, a, b))

    return not_equal


def compile_batch_rule(expr: Expr, text: frozenset[str] = frozenset()) -> BatchRuleCheck:
    """A function giving the rows of a batch that violate the rule, ascending.

    ``columns[name][i]`` is field ``name`` of row ``i`` for every field the rule reads
    (``columns_of`` builds them from mappings; the service may build them from the fast
    path's structs); ``n`` is the row count; ``text``: the str fields the rule reads.
    """
    names = sorted(fields_of(expr))
    scalar = compile_rule(expr, text)

    def row(columns: Columns, index: int) -> dict[str, object]:
        return {name: columns[name][index] for name in names}

    if not plain(expr, text):

        def each_row(columns: Columns, n: int) -> list[int]:
            return [index for index in range(n) if not scalar(row(columns, index))]

        return each_row
    tests = [_link_holds(_column(left), op, _column(right)) for left, op, right in links(expr)]

    def check(columns: Columns, n: int) -> list[int]:
        suspects: set[int] = set()
        try:
            for test in tests:
                holds = list(test(columns, n))
                if False in holds:  # a C-speed scan; clean batches stop here
                    suspects.update(compress(range(n), map(operator.not_, holds)))
        except _COLUMN_ERRORS:
            return [index for index in range(n) if not scalar(row(columns, index))]
        return [index for index in sorted(suspects) if not scalar(row(columns, index))]

    return check


def columns_of(
    records: Sequence[Mapping[str, object]], names: Iterable[str]
) -> dict[str, list[object]]:
    """The columns of mapping records, a null or missing value as NaN.

    The rule treats null, missing and NaN alike (not applicable), so the substitution
    changes no answer, and lets the column pass run on batches with nulls. (Columns
    holding None are still correct, only slower: the pass fails and rows are re-judged.)
    """
    out: dict[str, list[object]] = {}
    for name in names:
        try:
            column = list(map(operator.itemgetter(name), records))
        except (KeyError, TypeError):
            column = [record.get(name) for record in records]
        if None in column:
            column = [math.nan if value is None else value for value in column]
        out[name] = column
    return out
