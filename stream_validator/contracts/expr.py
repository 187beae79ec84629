"""The record-rule expression grammar: parsed from contract text, never evaluated as code.

Grammar (``and`` binds loosest, then comparisons, then ``+ -``, then ``* /``, then unary
minus)::

    rule       := comparison ("and" comparison)*
    comparison := sum (("<" | "<=" | ">" | ">=" | "==" | "!=") sum)*
    sum        := product (("+" | "-") product)*
    product    := unary (("*" | "/") unary)*
    unary      := "-" unary | atom
    atom       := NUMBER | FIELD | "(" rule ")"

A chain ``low <= open <= high`` means ``low <= open and open <= high``. FIELD is an
identifier (``[A-Za-z_][A-Za-z0-9_]*``, not ``and``) or a path of them into object fields
(``book.bid``); rules cannot index arrays (``levels[0].price`` is refused, saying to check
items with the item spec's own checks). NUMBER is a decimal literal with an
optional exponent (``5``, ``0.05``, ``1.5e-3``), never negative (``-5`` is a unary minus).

What must hold after ``parse_rule``: the rule is boolean at the top, every comparison
compares numbers, every arithmetic operand is a number, ``and`` joins only comparisons,
constants are finite and ints fit in 64 bits. ``check_rule`` adds what needs the contract:
every field is declared and numeric (int or float; bool is never a number here).
Errors are ``RuleError`` (a ContractError) with a 1-based column. The tree and its
rendering live in ``exprtree``, evaluation in ``expr_eval``; this module re-exports both
so callers import one place.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from typing import Final

from stream_validator.contracts.expr_eval import compile_rule, evaluate, failing_link
from stream_validator.contracts.exprtree import (
    And,
    BinOp,
    Compare,
    Const,
    Expr,
    Field,
    Neg,
    field_positions,
    fields_of,
    is_boolean,
    render,
)
from stream_validator.errors import RuleError

__all__ = [
    "And",
    "BinOp",
    "Compare",
    "Const",
    "Expr",
    "Field",
    "Neg",
    "RuleError",
    "check_rule",
    "compile_rule",
    "evaluate",
    "failing_link",
    "fields_of",
    "parse_rule",
    "render",
]

MAX_RULE_LENGTH: Final = 1000
MAX_DEPTH: Final = 32  # nesting of parentheses and unary minus; keeps recursion bounded
COMPARISONS: Final = ("<=", ">=", "==", "!=", "<", ">")
_INT64: Final = 2**63
_TOKEN: Final = re.compile(
    r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)"
    r"|(?P<op><=|>=|==|!=|[<>()+\-*/]))",
    re.ASCII,  # no Unicode digits in numbers or names: '٣' is not 3 in a contract
)
_ARRAY_HINT: Final = (
    ": rules cannot index arrays; check each item with the array's items spec"
    " (min_value, max_value, allowed, ...) or read an object field by path (book.bid)"
)
_HINTS: Final = {"[": _ARRAY_HINT, "]": _ARRAY_HINT}
_UNSUPPORTED: Final = {
    "or": "'or' is not supported: write two rules",
    "not": "'not' is not supported: write the opposite comparison",
}


# --- tokenizer and parser ------------------------------------------------------------


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """(kind, text, offset) triples ending with ("end", "", len); kind: num | name | op."""
    out: list[tuple[str, str, int]] = []
    pos = 0
    while True:
        match = _TOKEN.match(text, pos)
        if match is None or match.lastgroup is None:
            rest = text[pos:].lstrip()
            if not rest:
                out.append(("end", "", len(text)))
                return out
            start = len(text) - len(rest)
            hint = " (use '==')" if rest[0] == "=" else _HINTS.get(rest[0], "")
            raise RuleError(f"unexpected character {rest[0]!r}{hint}", start + 1)
        kind, start = match.lastgroup, match.start(match.lastgroup)
        token = match.group(kind)
        if kind == "num" and match.end() < len(text) and text[match.end()].isalnum():
            raise RuleError(f"malformed number starting {token!r}", start + 1)
        if kind == "name" and token in _UNSUPPORTED:
            raise RuleError(_UNSUPPORTED[token], start + 1)
        out.append((kind, token, start))
        pos = match.end()


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.i = 0
        self.depth = 0

    def peek(self) -> tuple[str, str, int]:
        return self.tokens[self.i]

    def take(self) -> tuple[str, str, int]:
        token = self.tokens[self.i]
        self.i += 1
        return token

    def rule(self) -> Expr:
        first = self.comparison()
        terms = [first]
        while self.peek()[:2] == ("name", "and"):
            self.take()
            terms.append(self.comparison())
        if len(terms) == 1:
            return first
        for term in terms:
            if not is_boolean(term):
                raise RuleError("'and' joins comparisons, got a number", term.pos + 1)
        flat = [t for term in terms for t in (term.terms if isinstance(term, And) else (term,))]
        return And(tuple(flat), first.pos)

    def comparison(self) -> Expr:
        first = self.sum()
        operands, ops = [first], []
        while self.peek()[0] == "op" and self.peek()[1] in COMPARISONS:
            ops.append(self.take()[1])
            operands.append(self.sum())
        if not ops:
            return first
        for operand in operands:
            if is_boolean(operand):
                raise RuleError("a comparison compares numbers, got a comparison", operand.pos + 1)
        return Compare(tuple(operands), tuple(ops), first.pos)

    def sum(self) -> Expr:
        return self._binary(("+", "-"), self.product)

    def product(self) -> Expr:
        return self._binary(("*", "/"), self.unary)

    def _binary(self, ops: tuple[str, ...], operand: Callable[[], Expr]) -> Expr:
        left = operand()
        while self.peek()[0] == "op" and self.peek()[1] in ops:
            _, op, pos = self.take()
            right = operand()
            for side in (left, right):
                if is_boolean(side):
                    raise RuleError(f"'{op}' needs numbers, got a comparison", side.pos + 1)
            left = BinOp(op, left, right, pos)
        return left

    def unary(self) -> Expr:
        if self.peek()[:2] == ("op", "-"):
            pos = self.take()[2]
            with _Nested(self, pos):
                operand = self.unary()
            if is_boolean(operand):
                raise RuleError("'-' needs a number, got a comparison", operand.pos + 1)
            return Neg(operand, pos)
        return self.atom()

    def atom(self) -> Expr:
        kind, text, pos = self.take()
        if kind == "num":
            return Const(_number(text, pos), pos)
        if kind == "name" and text != "and":
            return Field(text, pos)
        if (kind, text) == ("op", "("):
            with _Nested(self, pos):
                inner = self.rule()
            closing = self.take()
            if closing[:2] != ("op", ")"):
                found = repr(closing[1]) if closing[0] != "end" else "the end"
                raise RuleError(
                    f"expected ')' to close '(' at column {pos + 1}, found {found}", closing[2] + 1
                )
            return inner
        found = repr(text) if kind != "end" else "the end of the rule"
        raise RuleError(f"expected a field, a number or '(', found {found}", pos + 1)


class _Nested:
    """Counts nesting so a hostile rule cannot exhaust the recursion limit."""

    def __init__(self, parser: _Parser, pos: int) -> None:
        self.parser, self.pos = parser, pos

    def __enter__(self) -> None:
        self.parser.depth += 1
        if self.parser.depth > MAX_DEPTH:
            raise RuleError(f"nested more than {MAX_DEPTH} levels deep", self.pos + 1)

    def __exit__(self, *exc: object) -> None:
        self.parser.depth -= 1


def _number(text: str, pos: int) -> int | float:
    if any(c in text for c in ".eE"):
        value = float(text)
        if not math.isfinite(value):
            raise RuleError(f"constant {text} is out of range", pos + 1)
        return value
    number = int(text)
    if number >= _INT64:
        raise RuleError(f"integer constant {text} does not fit in 64 bits", pos + 1)
    return number


def parse_rule(text: str) -> Expr:
    """Parse one rule; RuleError (with a column) when it is malformed or not a condition."""
    if len(text) > MAX_RULE_LENGTH:
        raise RuleError(f"a rule is at most {MAX_RULE_LENGTH} characters, got {len(text)}")
    parser = _Parser(text)
    expr = parser.rule()
    kind, token, pos = parser.peek()
    if kind != "end":
        raise RuleError(f"unexpected {token!r} after a complete rule", pos + 1)
    if not is_boolean(expr):
        raise RuleError("a rule must be a comparison (e.g. 'bid <= ask'), got a number", 1)
    return expr


def check_rule(expr: Expr, field_types: Mapping[str, type]) -> frozenset[str]:
    """The fields a parsed rule reads; RuleError lists each one undeclared or not numeric."""
    problems = []
    for name, pos in sorted(field_positions(expr), key=lambda item: item[1]):
        declared = field_types.get(name)
        if declared is None:
            problems.append(
                f"unknown field {name!r} at column {pos + 1}{_path_hint(name, field_types)}"
            )
        elif declared is bool or declared not in (int, float):
            label = getattr(declared, "__name__", repr(declared))
            label = {"dict": "an object", "list": "an array"}.get(label, label)
            problems.append(
                f"field {name!r} at column {pos + 1} is {label}; rules compare int and float fields"
            )
    if problems:
        raise RuleError("; ".join(problems))
    return fields_of(expr)


def _path_hint(name: str, field_types: Mapping[str, type]) -> str:
    """Why a dotted path is not a field: it goes through an array, or not an object."""
    parts = name.split(".")
    for end in range(1, len(parts)):
        declared = field_types.get(".".join(parts[:end]))
        if declared is list:
            return _ARRAY_HINT.replace(";", f" ({'.'.join(parts[:end])!r} is an array);", 1)
        if declared is not None and declared is not dict:
            return f" ({'.'.join(parts[:end])!r} is not an object)"
    return ""
