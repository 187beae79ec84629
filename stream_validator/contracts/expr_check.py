"""A parsed record rule checked against the contract's field types.

``check_rule`` adds to ``expr.parse_rule`` what needs the contract: every field is declared
int, float or str (bool is never a number here), only numbers take part in arithmetic and
ordering, and both sides of a comparison (and an ``in`` list) are of one kind. Errors are
``RuleError`` (a ContractError), naming each field and its column.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from stream_validator.contracts.exprtree import (
    And,
    Compare,
    Expr,
    Field,
    In,
    Not,
    Or,
    Str,
    field_positions,
    fields_of,
)
from stream_validator.errors import RuleError

__all__ = ["ARRAY_HINT", "check_rule", "text_fields"]

#: Why a rule cannot read ``levels[0].price``, and what to write instead.
ARRAY_HINT: Final = (
    ": rules cannot index arrays; check each item with the array's items spec"
    " (min_value, max_value, allowed, ...) or read an object field by path (book.bid)"
)

_KINDS: Final = {int: "num", float: "num", str: "str"}


def check_rule(expr: Expr, field_types: Mapping[str, type]) -> frozenset[str]:
    """The fields a parsed rule reads; RuleError lists each one undeclared or of the wrong
    type (not int, float or str; a str in arithmetic or ordering; a str against a number)."""
    problems: list[str] = []
    for name, pos in sorted(field_positions(expr), key=lambda item: item[1]):
        declared = field_types.get(name)
        if declared is None:
            problems.append(
                f"unknown field {name!r} at column {pos + 1}{_path_hint(name, field_types)}"
            )
        elif declared is bool or declared not in _KINDS:
            label = getattr(declared, "__name__", repr(declared))
            label = {"dict": "an object", "list": "an array"}.get(label, label)
            problems.append(
                f"field {name!r} at column {pos + 1} is {label}; rules read int, float and"
                " str fields"
            )
    if problems:
        raise RuleError("; ".join(problems))
    _check_types(expr, field_types, problems)
    if problems:
        raise RuleError("; ".join(dict.fromkeys(problems)))
    return fields_of(expr)


def _path_hint(name: str, field_types: Mapping[str, type]) -> str:
    """Why a dotted path is not a field: it goes through an array, or not an object."""
    parts = name.split(".")
    for end in range(1, len(parts)):
        declared = field_types.get(".".join(parts[:end]))
        if declared is list:
            return ARRAY_HINT.replace(";", f" ({'.'.join(parts[:end])!r} is an array);", 1)
        if declared is not None and declared is not dict:
            return f" ({'.'.join(parts[:end])!r} is not an object)"
    return ""


def text_fields(expr: Expr, field_types: Mapping[str, type]) -> frozenset[str]:
    """The str fields a rule reads (compared as strings)."""
    return frozenset(name for name in fields_of(expr) if field_types.get(name) is str)


def _check_types(expr: Expr, types: Mapping[str, type], problems: list[str]) -> None:
    def kind(value: Expr) -> str:
        if isinstance(value, Field):
            return _KINDS[types[value.name]]
        if isinstance(value, Str):
            return "str"
        for name, pos in field_positions(value):  # arithmetic: numbers only
            if types[name] is str:
                problems.append(
                    f"field {name!r} at column {pos + 1} is str; arithmetic needs numbers"
                )
        return "num"

    def label(value: Expr) -> str:
        if isinstance(value, Field):
            word = "str" if types[value.name] is str else "numeric"
            return f"{word} field {value.name!r}"
        return "a string" if isinstance(value, Str) else "a number"

    if isinstance(expr, And | Or):
        for term in expr.terms:
            _check_types(term, types, problems)
    elif isinstance(expr, Not):
        _check_types(expr.operand, types, problems)
    elif isinstance(expr, In):
        got = kind(expr.operand)
        want = "str" if isinstance(expr.values[0], Str) else "num"
        if got != want:
            items = "strings" if want == "str" else "numbers"
            problems.append(
                f"{label(expr.operand)} at column {expr.operand.pos + 1} is tested against"
                f" a list of {items}"
            )
    elif isinstance(expr, Compare):
        for left, op, right in zip(expr.operands, expr.ops, expr.operands[1:], strict=False):
            kinds = (kind(left), kind(right))
            if kinds[0] != kinds[1]:
                problems.append(
                    f"{label(left)} at column {left.pos + 1} is compared with {label(right)}"
                    f" at column {right.pos + 1}; compare a str field with a string"
                    " ('limit') and a number field with a number"
                )
            elif kinds[0] == "str" and op not in ("==", "!="):
                problems.append(
                    f"'{op}' at column {left.pos + 1} orders strings; strings are compared only"
                    " with '==', '!=' or 'in'"
                )
