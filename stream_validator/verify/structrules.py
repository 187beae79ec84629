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

``or``, ``not``, ``in`` and strings: the rule's ``normal_form`` (``not`` pushed down to
the comparisons) becomes a Python ``and``/``or`` expression of the same links, each of them
true only where the link holds under ``compile_rule`` (or stricter): a string ``==``/``!=``
or an ``in`` test is Python's own on the values (a value that is not a str or a number
there makes the link not applicable, which holds, so Python's answer is never looser), and
a ``not in`` on a computed number also requires it not to be NaN.

The generated source holds no contract data: fields are read as ``s.f<i>`` (the Struct's
own attribute names) or ``s[k<i>]`` (a mapping, the key bound as a constant) into locals,
and constants (numbers, strings, the sets of an ``in`` list) are bound in the function's
namespace, never written into the source (``rule_source`` gives it, for tests).
``compile_sure_holds`` is the same check on a decoded mapping: the full rules skip
evaluating rule by rule when it passes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stream_validator.contracts.expr_eval import is_text, normal_form
from stream_validator.contracts.exprtree import (
    And,
    BinOp,
    Compare,
    Const,
    Expr,
    Field,
    In,
    Neg,
    Or,
    Str,
    fields_of,
)
from stream_validator.contracts.model import SchemaContract, rule_field_types
from stream_validator.contracts.rulespec import RuleSpec


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
    if isinstance(expr, Const | Str):
        return _bind(ns, expr.value)
    if isinstance(expr, Neg):
        return f"(-{_number(expr.operand, names, ns)})"
    if isinstance(expr, BinOp):
        left, right = _number(expr.left, names, ns), _number(expr.right, names, ns)
        return f"({left} {expr.op} {right})"
    raise TypeError("expected a number, got a condition")


def text_of(contract: SchemaContract, rule: RuleSpec) -> frozenset[str]:
    """The str fields a rule reads, from the contract's declarations (a RuleSpec built
    without field types knows only those compared with a string constant)."""
    declared = {path for path, kind in rule_field_types(contract).items() if kind is str}
    return rule.text_fields | (rule.fields & declared)


def _bind(ns: dict[str, Any], value: object) -> str:
    """A constant bound in the namespace under a generated name (never written as text)."""
    name = f"c{len(ns)}"
    ns[name] = value
    return name


class _Source:
    """The tests of one contract's rules as Python expressions (see the module docstring)."""

    def __init__(self, names: dict[str, str], nullable: set[str], struct: bool) -> None:
        self.names, self.nullable, self.struct = names, nullable, struct
        self.ns: dict[str, Any] = {"Declined": RuleDeclined}

    def leaf(self, node: Expr, text: frozenset[str]) -> str:
        names, ns = self.names, self.ns
        if isinstance(node, In):
            members = _bind(ns, frozenset(item.value for item in node.values))
            a = _number(node.operand, names, ns)
            if not node.negated:
                return f"{a} in {members}"
            if isinstance(node.operand, Field | Const) or isinstance(node.values[0], Str):
                return f"{a} not in {members}"
            return f"({a} == {a} and {a} not in {members})"  # a computed NaN declines
        if not isinstance(node, Compare):
            raise TypeError("expected a comparison or an 'in' test")
        (left, right), (op,) = node.operands, node.ops
        a, b = _number(left, names, ns), _number(right, names, ns)
        plain = isinstance(left, Field | Const | Str) and isinstance(right, Field | Const | Str)
        if op == "!=" and not (is_text(left, text) or is_text(right, text)):
            plain = plain and self.struct
        return f"({a} < {b} or {a} > {b})" if op == "!=" and not plain else f"{a} {op} {b}"

    def condition(self, node: Expr, text: frozenset[str], guard: bool) -> str:
        """The node as a Python condition; ``guard``: a link reading a null holds."""
        if isinstance(node, And | Or):
            word = " and " if isinstance(node, And) else " or "
            return word.join(f"({self.condition(t, text, guard)})" for t in node.terms)
        test = self.leaf(node, text)
        if not guard:
            return test
        nulls = sorted(self.nullable & fields_of(node))
        return " or ".join([*(f"{self.names[n]} is None" for n in nulls), f"({test})"])


def rule_source(
    contract: SchemaContract, load: dict[str, str], struct: bool
) -> tuple[list[str], dict[str, Any]]:
    """The source lines of ``def sure(s)`` and the namespace it runs in (``_compile``)."""
    names = {spec.name: f"v{i}" for i, spec in enumerate(contract.fields)}
    nullable = {spec.name for spec in contract.fields if spec.is_nullable}
    source = _Source(names, nullable, struct)
    ns = source.ns
    tests: list[str] = []
    guarded: list[str] = []  # each link, holding when a field it reads is null
    for rule in contract.rules:
        form, text = normal_form(rule.expr), text_of(contract, rule)
        for term in form.terms if isinstance(form, And) else (form,):
            test = source.condition(term, text, False)
            tests.append(f"({test})" if isinstance(term, Or) else test)
            guarded.append(source.condition(term, text, True))
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
    return lines, ns


def _compile(
    contract: SchemaContract, load: dict[str, str], struct: bool, label: str
) -> Callable[[Any], None] | None:
    """``def f(s)`` returning None when every rule surely holds and raising RuleDeclined
    otherwise; ``load[name]`` is the expression reading a field from ``s``. ``struct``:
    ``s`` is a decoded Struct (every field present, never NaN; only a nullable one None)."""
    if not contract.rules:
        return None
    lines, ns = rule_source(contract, load, struct)
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
