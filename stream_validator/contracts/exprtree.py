"""The syntax tree of record rules, its errors, and its canonical text.

Nodes are frozen values; ``pos`` (0-based offset into the rule text) is kept for error
messages and is not part of equality, so a re-parsed rendering equals the original.
Values are Field, Const, Str, Neg and BinOp (Str is a string constant, the rest numbers or
fields); conditions are Compare, In, Not, And and Or. The parser (``contracts.expr``) only
builds trees where conditions and values sit where they must.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, TypeAlias


@dataclass(frozen=True, slots=True)
class Field:
    """A record field, read by name."""

    name: str
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class Const:
    """A finite, non-negative numeric literal."""

    value: int | float
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class Str:
    """A string constant (the value, escapes already resolved)."""

    value: str
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class Neg:
    """Unary minus."""

    operand: Expr
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class BinOp:
    """``left op right`` with op one of ``+ - * /`` (``/`` is true division)."""

    op: str
    left: Expr
    right: Expr
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class Compare:
    """A comparison chain: ``operands[i] ops[i] operands[i + 1]`` for every i."""

    operands: tuple[Expr, ...]
    ops: tuple[str, ...]
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class In:
    """``operand in [values]`` (``negated``: ``not in``); values are all numbers or all Str."""

    operand: Expr
    values: tuple[Const | Str, ...]
    negated: bool = False
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class Not:
    """``not condition``."""

    operand: Expr
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class And:
    """Two or more conditions that must all hold."""

    terms: tuple[Expr, ...]
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class Or:
    """Two or more conditions of which one must hold."""

    terms: tuple[Expr, ...]
    pos: int = field(default=0, compare=False)


Expr: TypeAlias = Field | Const | Str | Neg | BinOp | Compare | In | Not | And | Or


def is_boolean(expr: Expr) -> bool:
    """True for a condition (comparison, ``in``, ``not``, ``and``, ``or``)."""
    return isinstance(expr, Compare | In | Not | And | Or)


def uses_extensions(expr: Expr) -> bool:
    """True when the rule uses ``or``, ``not``, ``in`` or a string constant: only a plain
    conjunction of numeric comparisons takes the shortest compiled forms."""
    if isinstance(expr, Or | Not | In | Str):
        return True
    if isinstance(expr, And):
        return any(uses_extensions(term) for term in expr.terms)
    if isinstance(expr, Compare):
        return any(uses_extensions(operand) for operand in expr.operands)
    return False


def fields_of(expr: Expr) -> frozenset[str]:
    """Every field name the expression reads."""
    return frozenset(name for name, _ in field_positions(expr))


def field_positions(expr: Expr) -> list[tuple[str, int]]:
    if isinstance(expr, Field):
        return [(expr.name, expr.pos)]
    if isinstance(expr, Const | Str):
        return []
    if isinstance(expr, Neg | Not | In):
        return field_positions(expr.operand)
    if isinstance(expr, BinOp):
        return field_positions(expr.left) + field_positions(expr.right)
    children = expr.operands if isinstance(expr, Compare) else expr.terms
    return [item for child in children for item in field_positions(child)]


# --- rendering: the canonical text, with only the parentheses the grammar needs --------

_PRECEDENCE: Final = {"+": 1, "-": 1, "*": 2, "/": 2}
# Condition levels: 'or' 1, 'and' 2, 'not' and comparisons 3.
_LEVEL: Final = {"Or": 1, "And": 2}


def quote(text: str) -> str:
    """A string constant as the grammar reads it back: single quotes, ``\\`` and ``\'``."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def render(expr: Expr, outer: int = 0) -> str:
    """The canonical text of an expression; ``parse_rule(render(e)) == e`` for rules."""
    if isinstance(expr, And | Or):
        level = _LEVEL[type(expr).__name__]
        word = " and " if isinstance(expr, And) else " or "
        text = word.join(render(term, level + 1) for term in expr.terms)
        return f"({text})" if level < outer else text
    if isinstance(expr, Not):
        return "not " + render(expr.operand, 3)
    if isinstance(expr, In):
        word = "not in" if expr.negated else "in"
        items = ", ".join(_render_num(value, 0) for value in expr.values)
        return f"{_render_num(expr.operand, 0)} {word} [{items}]"
    if isinstance(expr, Compare):
        parts = [_render_num(expr.operands[0], 0)]
        for op, operand in zip(expr.ops, expr.operands[1:], strict=True):
            parts += [op, _render_num(operand, 0)]
        return " ".join(parts)
    return _render_num(expr, 0)


def _render_num(expr: Expr, outer: int) -> str:
    """Render a number, parenthesised when its precedence is below ``outer``."""
    if isinstance(expr, Field):
        return expr.name
    if isinstance(expr, Const):
        return repr(expr.value)
    if isinstance(expr, Str):
        return quote(expr.value)
    if isinstance(expr, Neg):
        return "-" + _render_num(expr.operand, 3)
    if isinstance(expr, BinOp):
        level = _PRECEDENCE[expr.op]
        # Left-associative: a right operand of the same level needs parentheses.
        text = f"{_render_num(expr.left, level)} {expr.op} {_render_num(expr.right, level + 1)}"
        return f"({text})" if level < outer else text
    return f"({render(expr)})"
