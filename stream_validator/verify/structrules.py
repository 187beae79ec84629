"""The contract's record rules as a Struct ``__post_init__`` for the native fast path. PURE.

msgspec calls ``__post_init__`` on every decoded Struct and turns a ValueError into a
validation error at that element (``$[k]``), so a record whose rules do not *surely* hold
is declined in the same native call that checks its types and bounds, and the full rules
then judge it (flag or quarantine). Checking rules after the decode instead would cost a
second decode of every run a failed decode had cut short.

"Surely holds" is stricter than ``compile_rule``, never looser: the same Python
arithmetic on the same values (ints stay ints, floats floats, as orjson gives them), but
any null, any exception (a zero divisor, an overflow) and any false comparison declines
the record; ``!=`` between computed values is written ``a < b or a > b`` so that a NaN
computed from huge values declines too. NaN and ±Inf fields never reach here: the Struct
does not decode them.

The generated source holds no contract data: fields are read as ``s.f<i>`` (the Struct's
own attribute names) into locals of the same names, and constants are bound in the
function's namespace.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stream_validator.contracts.expr_eval import links
from stream_validator.contracts.exprtree import BinOp, Const, Expr, Field, Neg
from stream_validator.contracts.model import SchemaContract


class RuleDeclined(ValueError):
    """Raised in ``__post_init__``: the record goes to the full rules."""


def _number(expr: Expr, attrs: dict[str, str], ns: dict[str, Any]) -> str:
    if isinstance(expr, Field):
        return attrs[expr.name]
    if isinstance(expr, Const):
        name = f"c{len(ns)}"
        ns[name] = expr.value
        return name
    if isinstance(expr, Neg):
        return f"(-{_number(expr.operand, attrs, ns)})"
    if isinstance(expr, BinOp):
        left, right = _number(expr.left, attrs, ns), _number(expr.right, attrs, ns)
        return f"({left} {expr.op} {right})"
    raise TypeError("expected a number, got a condition")


def compile_post_init(contract: SchemaContract) -> Callable[[Any], None] | None:
    """A ``__post_init__`` raising RuleDeclined unless every rule surely holds; None
    when the contract has no rules."""
    if not contract.rules:
        return None
    attrs = {spec.name: f"f{i}" for i, spec in enumerate(contract.fields)}
    ns: dict[str, Any] = {"Declined": RuleDeclined}
    tests: list[str] = []
    for rule in contract.rules:
        for left, op, right in links(rule.expr):
            a, b = _number(left, attrs, ns), _number(right, attrs, ns)
            plain = isinstance(left, Field | Const) and isinstance(right, Field | Const)
            # Fields and constants are never NaN here; only arithmetic can compute one.
            tests.append(
                f"({a} < {b} or {a} > {b})" if op == "!=" and not plain else f"{a} {op} {b}"
            )
    read = sorted({attrs[name] for rule in contract.rules for name in rule.fields})
    lines = [
        "def __post_init__(s):",
        "    try:",
        *(f"        {attr} = s.{attr}" for attr in read),  # each field read once
        f"        if {' and '.join(tests)}:",
        "            return",
        "    except Exception:",  # None in arithmetic, a zero divisor, an overflow
        "        pass",
        "    raise Declined('a record rule needs the full check')",
    ]
    code = compile("\n".join(lines), f"<rules of contract {contract.name!r}>", "exec")
    exec(code, ns)
    post_init: Callable[[Any], None] = ns["__post_init__"]
    return post_init
