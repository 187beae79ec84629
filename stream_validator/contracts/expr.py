"""The record-rule expression grammar: parsed from contract text, never evaluated as code.

Grammar (``or`` binds loosest, then ``and``, then ``not``, then comparisons and ``in``,
then ``+ -``, then ``* /``, then unary minus)::

    rule       := conjunct ("or" conjunct)*
    conjunct   := negation ("and" negation)*
    negation   := "not" negation | comparison
    comparison := sum ((("<" | "<=" | ">" | ">=" | "==" | "!=") sum)* | ["not"] "in" list)
    sum        := product (("+" | "-") product)*
    product    := unary (("*" | "/") unary)*
    unary      := "-" unary | atom
    atom       := NUMBER | STRING | FIELD | "(" rule ")"
    list       := "[" item ("," item)* [","] "]"        (at most MAX_LIST items)
    item       := ["-"] NUMBER | STRING                  (all numbers or all strings)

A chain ``low <= open <= high`` means ``low <= open and open <= high``. FIELD is an
identifier (``[A-Za-z_][A-Za-z0-9_]*``, not a keyword: ``and or not in``) or a path of
them into object fields (``book.bid``); rules cannot index arrays (``levels[0].price`` is
refused, saying to check items with the item spec's own checks). NUMBER is a decimal literal
with an optional exponent (``5``, ``0.05``, ``1.5e-3``), never negative (``-5`` is a unary
minus); STRING is quoted with ``'`` or ``"`` (at most MAX_STRING characters, no control
characters), where a backslash escapes exactly ``\\``, ``\'`` and ``\"`` and nothing else.

What must hold after ``parse_rule``: the rule is a condition at the top, ``and``/``or``/
``not`` join only conditions, every arithmetic operand is a number (never a string
constant), a string constant is compared only with ``==``/``!=``/``in`` and never with a
number, constants are finite and ints fit in 64 bits. ``check_rule`` (``expr_check``) adds
what needs the contract. Errors are ``RuleError`` (a ContractError) with a 1-based column.
The tree and its rendering live in ``exprtree``, the check against the contract in
``expr_check``, evaluation in ``expr_eval``; this module re-exports them so callers import
one place.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Final

from stream_validator.contracts.expr_check import ARRAY_HINT, check_rule, text_fields
from stream_validator.contracts.expr_eval import compile_rule, evaluate, failing_link
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
    "In",
    "Neg",
    "Not",
    "Or",
    "RuleError",
    "Str",
    "check_rule",
    "compile_rule",
    "evaluate",
    "failing_link",
    "fields_of",
    "parse_rule",
    "render",
    "text_fields",
]

MAX_RULE_LENGTH: Final = 1000
MAX_DEPTH: Final = 32  # nesting of parentheses, 'not' and unary minus; keeps recursion bounded
MAX_STRING: Final = 200  # characters of one string constant
MAX_LIST: Final = 100  # items of one 'in' list
COMPARISONS: Final = ("<=", ">=", "==", "!=", "<", ">")
KEYWORDS: Final = frozenset({"and", "or", "not", "in"})
_INT64: Final = 2**63
_TOKEN: Final = re.compile(
    r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)"
    r"|(?P<op><=|>=|==|!=|[<>()+\-*/\[\],]))",
    re.ASCII,  # no Unicode digits in numbers or names: '٣' is not 3 in a contract
)
# What to write instead of a construct other languages have and this one spells otherwise.
_HINTS: Final = {
    "=": " (use '==')",
    "&": " (use 'and')",
    "|": " (use 'or')",
    "!": " (use 'not', or '!=')",
}
_ESCAPES: Final = frozenset("\\'\"")


# --- tokenizer and parser ------------------------------------------------------------


def _string(text: str, start: int) -> tuple[str, int]:
    """The value of the string constant opening at ``start`` and the offset after it."""
    quote, i = text[start], start + 1
    out: list[str] = []
    while i < len(text):
        char = text[i]
        if char == quote:
            if len(out) > MAX_STRING:
                raise RuleError(f"a string constant is at most {MAX_STRING} characters", start + 1)
            return "".join(out), i + 1
        if char == "\\":
            escaped = text[i + 1 : i + 2]
            if escaped not in _ESCAPES or not escaped:
                raise RuleError(
                    "in a string constant a backslash escapes only \\\\, \\' and \\\"", i + 1
                )
            out.append(escaped)
            i += 2
            continue
        if char < " " or char == "\x7f":
            raise RuleError("a string constant holds no control characters", i + 1)
        out.append(char)
        i += 1
    raise RuleError(f"string constant opened with {quote} is not closed", start + 1)


def _tokens(text: str) -> list[tuple[str, str, int]]:
    """(kind, text, offset) triples ending with ("end", "", len); kind: num | name | op |
    str (the text of a str token is the constant's value)."""
    out: list[tuple[str, str, int]] = []
    pos = 0
    while True:
        rest = text[pos:].lstrip()
        start = len(text) - len(rest)
        if rest[:1] in ("'", '"'):
            value, pos = _string(text, start)
            out.append(("str", value, start))
            continue
        match = _TOKEN.match(text, pos)
        if match is None or match.lastgroup is None:
            if not rest:
                out.append(("end", "", len(text)))
                return out
            hint = _HINTS.get(rest[0], "")
            raise RuleError(f"unexpected character {rest[0]!r}{hint}", start + 1)
        kind, start = match.lastgroup, match.start(match.lastgroup)
        token = match.group(kind)
        if kind == "num" and match.end() < len(text) and text[match.end()].isalnum():
            raise RuleError(f"malformed number starting {token!r}", start + 1)
        if token == "[" and out and out[-1][0] == "name" and out[-1][1] not in KEYWORDS:
            # a field followed by '[' indexes it; '[' after 'in' opens a list
            raise RuleError(f"unexpected character '['{ARRAY_HINT}", start + 1)
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

    def at(self, word: str) -> bool:
        return self.peek()[:2] == ("name", word)

    def rule(self) -> Expr:
        return self._joined("or", self.conjunct, Or)

    def conjunct(self) -> Expr:
        return self._joined("and", self.negation, And)

    def _joined(self, word: str, operand: Callable[[], Expr], node: type[And] | type[Or]) -> Expr:
        first = operand()
        terms = [first]
        while self.at(word):
            self.take()
            terms.append(operand())
        if len(terms) == 1:
            return first
        for term in terms:
            if not is_boolean(term):
                raise RuleError(f"'{word}' joins conditions, got a value", term.pos + 1)
        flat = [t for term in terms for t in (term.terms if isinstance(term, node) else (term,))]
        return node(tuple(flat), first.pos)

    def negation(self) -> Expr:
        if not self.at("not"):
            return self.comparison()
        pos = self.take()[2]
        with _Nested(self, pos):
            operand = self.negation()
        if not is_boolean(operand):
            raise RuleError("'not' needs a condition, got a value", operand.pos + 1)
        return Not(operand, pos)

    def comparison(self) -> Expr:
        first = self.sum()
        if self.at("in") or (self.at("not") and self.tokens[self.i + 1][:2] == ("name", "in")):
            negated = self.take()[1] == "not"
            if negated:
                self.take()
            if is_boolean(first):
                raise RuleError("'in' tests a value, got a condition", first.pos + 1)
            return In(first, self.literal_list(), negated, first.pos)
        operands, ops = [first], []
        while self.peek()[0] == "op" and self.peek()[1] in COMPARISONS:
            ops.append(self.take()[1])
            operands.append(self.sum())
        if not ops:
            return first
        for operand in operands:
            if is_boolean(operand):
                raise RuleError("a comparison compares values, got a condition", operand.pos + 1)
        for op, left, right in zip(ops, operands, operands[1:], strict=False):
            _check_kinds(left, op, right)
        return Compare(tuple(operands), tuple(ops), first.pos)

    def literal_list(self) -> tuple[Const | Str, ...]:
        kind, text, pos = self.take()
        if (kind, text) != ("op", "["):
            raise RuleError("'in' takes a list of constants such as ['buy', 'sell']", pos + 1)
        items: list[Const | Str] = []
        while True:
            kind, text, at = self.take()
            if (kind, text) == ("op", "]") and items:
                break
            if kind == "str":
                items.append(Str(text, at))
            elif kind == "num":
                items.append(Const(_number(text, at), at))
            elif (kind, text) == ("op", "-") and self.peek()[0] == "num":
                items.append(Const(-_number(self.take()[1], at), at))
            else:
                found = repr(text) if kind != "end" else "the end of the rule"
                raise RuleError(f"an 'in' list holds numbers or strings, found {found}", at + 1)
            if len(items) > MAX_LIST:
                raise RuleError(f"an 'in' list holds at most {MAX_LIST} items", pos + 1)
            if isinstance(items[-1], Str) != isinstance(items[0], Str):
                raise RuleError("an 'in' list holds only numbers or only strings", at + 1)
            kind, text, at = self.take()
            if (kind, text) == ("op", "]"):
                break
            if (kind, text) != ("op", ","):
                found = repr(text) if kind != "end" else "the end of the rule"
                raise RuleError(f"expected ',' or ']' in the 'in' list, found {found}", at + 1)
        return tuple(items)

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
                    raise RuleError(f"'{op}' needs numbers, got a condition", side.pos + 1)
                if isinstance(side, Str):
                    raise RuleError(f"'{op}' needs numbers, got a string", side.pos + 1)
            left = BinOp(op, left, right, pos)
        return left

    def unary(self) -> Expr:
        if self.peek()[:2] == ("op", "-"):
            pos = self.take()[2]
            with _Nested(self, pos):
                operand = self.unary()
            if is_boolean(operand) or isinstance(operand, Str):
                raise RuleError("'-' needs a number", operand.pos + 1)
            return Neg(operand, pos)
        return self.atom()

    def atom(self) -> Expr:
        kind, text, pos = self.take()
        if kind == "num":
            return Const(_number(text, pos), pos)
        if kind == "str":
            return Str(text, pos)
        if kind == "name" and text not in KEYWORDS:
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
        if kind == "str":  # pragma: no cover (a str token is an atom above)
            found = "a string"
        raise RuleError(f"expected a field, a number, a string or '(', found {found}", pos + 1)


def _kind(expr: Expr) -> str | None:
    """'str' or 'num' when the parser alone knows the value's kind; None for a field."""
    if isinstance(expr, Str):
        return "str"
    return None if isinstance(expr, Field) else "num"


def _check_kinds(left: Expr, op: str, right: Expr) -> None:
    kinds = (_kind(left), _kind(right))
    if "str" in kinds:
        where = left if kinds[0] == "str" else right
        if op not in ("==", "!="):
            raise RuleError(
                f"strings are compared only with '==', '!=' or 'in', not '{op}'", where.pos + 1
            )
        if "num" in kinds:
            raise RuleError("a string is compared with a number", where.pos + 1)


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
        shown = repr(token) if kind != "str" else "a string"
        raise RuleError(f"unexpected {shown} after a complete rule", pos + 1)
    if not is_boolean(expr):
        raise RuleError("a rule must be a condition (e.g. 'bid <= ask'), got a value", 1)
    return expr
