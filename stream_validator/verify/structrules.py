"""The contract's record rules as a Struct ``__post_init__`` for the native fast path. PURE.

msgspec calls ``__post_init__`` on every decoded Struct and turns a ValueError into a
validation error at that element (``$[k]``), so a record whose rules do not *surely* hold
is declined in the same native call that checks its types and bounds, and the full rules
then judge it (flag or quarantine). Checking rules after the decode instead would cost a
second decode of every run a failed decode had cut short.

"Surely holds" is stricter than ``compile_rule``, never looser: the same Python
arithmetic on the same values (ints stay ints, floats floats, as orjson gives them), but
any exception (a zero divisor, an overflow) and any false comparison declines the record;
``!=`` between computed values is written ``a < b or a > b`` so that a NaN computed from
huge values declines too. NaN and ±Inf fields never reach here: the Struct does not
decode them. A null (only a nullable field can hold one in a Struct) makes a link hold,
as under ``compile_rule``: when the links fail together and a field they read is null,
each link is judged again, holding when a field it reads is null (a record with an empty
side of the book stays on the fast path). The mapping shortcut declines any null.

The generated source holds no contract data: fields are read as ``s.f<i>`` (the Struct's
own attribute names) or ``s[k<i>]`` (a mapping, the key bound as a constant) into locals,
and constants are bound in the function's namespace. ``compile_sure_holds`` is the same
check on a decoded mapping: the full rules skip evaluating rule by rule when it passes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stream_validator.contracts.expr_eval import links
from stream_validator.contracts.exprtree import BinOp, Const, Expr, Field, Neg, fields_of
from stream_validator.contracts.model import SchemaContract


class RuleDeclined(ValueError):
    """Raised in ``__post_init__``: the record goes to the full rules."""


class RulesTooDeep(ValueError):
    """The generated check does not compile: Python's parser nests at most 200
    parentheses, and a chain such as ``a + a + ... <= b`` (a valid rule of up to
    ``MAX_RULE_LENGTH`` characters) nests one per operator. The rules' closures
    (``compile_rule``) judge such a contract alone."""


def _number(expr: Expr, names: dict[str, str], ns: dict[str, Any]) -> str:
    if isinstance(expr, Field):
        return names[expr.name]
    if isinstance(expr, Const):
        name = f"c{len(ns)}"
        ns[name] = expr.value
        return name
    if isinstance(expr, Neg):
        return f"(-{_number(expr.operand, names, ns)})"
    if isinstance(expr, BinOp):
        left, right = _number(expr.left, names, ns), _number(expr.right, names, ns)
        return f"({left} {expr.op} {right})"
    raise TypeError("expected a number, got a condition")


def _compile(
    contract: SchemaContract, load: dict[str, str], struct: bool, label: str
) -> Callable[[Any], None] | None:
    """``def f(s)`` returning None when every rule surely holds and raising RuleDeclined
    otherwise; ``load[name]`` is the expression reading a field from ``s``. ``struct``:
    ``s`` is a decoded Struct (every field present, never NaN; only a nullable one None)."""
    if not contract.rules:
        return None
    names = {spec.name: f"v{i}" for i, spec in enumerate(contract.fields)}
    nullable = {spec.name for spec in contract.fields if spec.is_nullable}
    ns: dict[str, Any] = {"Declined": RuleDeclined}
    tests: list[str] = []
    guarded: list[str] = []  # each link, holding when a field it reads is null
    for rule in contract.rules:
        for left, op, right in links(rule.expr):
            a, b = _number(left, names, ns), _number(right, names, ns)
            plain = struct and isinstance(left, Field | Const) and isinstance(right, Field | Const)
            test = f"({a} < {b} or {a} > {b})" if op == "!=" and not plain else f"{a} {op} {b}"
            tests.append(test)
            nulls = sorted(nullable & (fields_of(left) | fields_of(right)))
            guarded.append(" or ".join([*(f"{names[n]} is None" for n in nulls), f"({test})"]))
    read = sorted({name for rule in contract.rules for name in rule.fields})
    for i, name in enumerate(read):
        ns[f"k{i}"] = name
    lines = [
        "def sure(s):",
        "    try:",
        *(
            f"        {names[name]} = {load[name].format(key=f'k{i}')}"
            for i, name in enumerate(read)
        ),
        f"        if {' and '.join(tests)}:",
        "            return",
        "    except Exception:",  # None in arithmetic, a zero divisor, an overflow, a str
        "        pass",
    ]
    nulls_read = [names[name] for name in read if name in nullable]
    if struct and nulls_read:
        # A link reading a null holds under the rules (expr_eval): judge each link so.
        lines += [
            f"    if {' or '.join(f'{v} is None' for v in nulls_read)}:",
            "        try:",
            f"            if {' and '.join(f'({g})' for g in guarded)}:",
            "                return",
            "        except Exception:",
            "            pass",
        ]
    lines.append("    raise Declined('a record rule needs the full check')")
    try:
        code = compile("\n".join(lines), f"<{label} of contract {contract.name!r}>", "exec")
    except (SyntaxError, RecursionError) as exc:
        raise RulesTooDeep(f"{label} of contract {contract.name!r}: {exc}") from None
    exec(code, ns)
    sure: Callable[[Any], None] = ns["sure"]
    return sure


def compile_post_init(contract: SchemaContract) -> Callable[[Any], None] | None:
    """A Struct ``__post_init__`` raising RuleDeclined unless every rule surely holds; None
    when the contract has no rules. Fields and constants are never NaN in a Struct.
    Raises RulesTooDeep (the Struct cannot check the rules; the fast path is off)."""
    load = {spec.name: f"s.f{i}" for i, spec in enumerate(contract.fields)}
    return _compile(contract, load, True, "rules")


def compile_sure_holds(contract: SchemaContract) -> Callable[[Any], None] | None:
    """The same check on a decoded mapping (the full rules' shortcut): a missing key, a
    null, a str or a NaN never passes it, so only a record whose rules surely hold does.
    None as well when the rules are too deep to compile or read a nested path (``book.bid``):
    each rule is then judged."""
    load = {spec.name: "s[{key}]" for spec in contract.fields}
    if any(not rule.fields <= load.keys() for rule in contract.rules):
        return None
    try:
        return _compile(contract, load, False, "rule shortcut")
    except RulesTooDeep:
        return None
