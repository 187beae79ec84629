"""RuleSpec: a named record rule declared in a contract file, and the reader of that list.

Contract-file form (a top-level ``rules`` key beside ``fields``)::

    rules:
      - name: crossed_book          # [a-z][a-z0-9_]*, at most 64 chars, unique
        check: "bid <= ask"         # the grammar of contracts.expr
        when: "side == 'buy'"       # optional: the check applies only where this holds
        action: quarantine          # quarantine (default) | flag
        description: bid above ask  # optional

A rule with ``when: W`` and ``check: C`` is the rule ``not (W) or (C)``: it is violated only
where W surely holds and C surely fails, so where W reads a null, missing or mistyped field
(W is unknown) the rule does not apply. ``expr`` is that combined tree; ``condition`` is W.

What must hold for a RuleSpec from ``parse_rules``: the check (and the condition) parsed,
every field it reads is a declared int, float or str field used as its type allows
(``check_rule``), and the name is unique in the contract. A violation
carries ``rule=<name>``, so the name is a closed, contract-declared label (never payload).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from stream_validator.contracts.expr import (
    Expr,
    Not,
    Or,
    RuleError,
    check_rule,
    fields_of,
    parse_rule,
    render,
    text_fields,
)
from stream_validator.contracts.exprtree import And, Compare, Field, In, Str
from stream_validator.errors import RuleListError

_NAME: Final = re.compile(r"[a-z][a-z0-9_]{0,63}")
_KEYS: Final = frozenset({"name", "check", "when", "action", "description"})


class RuleAction(StrEnum):
    """What a violated rule, or a broken check of a field (``FieldSpec.action``), does to
    the record."""

    #: The record goes to the DLQ with kind ``rule_violation`` and ``rule=<name>``.
    QUARANTINE = "quarantine"
    #: The record flows to the clean topic; the violation is counted and reported.
    FLAG = "flag"


@dataclass(frozen=True, slots=True)
class RuleSpec:
    """One named rule: its source text, the parsed tree (with its condition, if any), the
    fields it reads, its action; ``text_fields``: the str fields among them."""

    name: str
    check: str
    expr: Expr
    fields: frozenset[str]
    action: RuleAction = RuleAction.QUARANTINE
    description: str = ""
    when: str = ""
    condition: Expr | None = None
    text_fields: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls,
        name: str,
        check: str,
        action: RuleAction | str = RuleAction.QUARANTINE,
        field_types: Mapping[str, type] | None = None,
        when: str = "",
    ) -> RuleSpec:
        """Parse ``check`` and ``when`` (and check them against ``field_types`` when given);
        RuleError if bad. Without ``field_types`` the str fields are the ones compared
        with a string constant."""
        body = parse_rule(check)
        condition = parse_rule(when) if when else None
        expr = body if condition is None else combine(condition, body)
        if field_types is not None:
            fields = check_rule(expr, field_types)
            text = text_fields(expr, field_types)
        else:
            fields, text = fields_of(expr), _compared_with_strings(expr)
        return cls(name, check, expr, fields, RuleAction(action), "", when, condition, text)

    @property
    def body(self) -> Expr:
        """The check alone (without the ``when`` condition)."""
        if self.condition is None:
            return self.expr
        assert isinstance(self.expr, Or)
        return self.expr.terms[1]

    @property
    def canonical(self) -> str:
        """The check as the grammar renders it (spacing and parentheses normalised)."""
        return render(self.body)


def combine(condition: Expr, body: Expr) -> Expr:
    """The rule ``when: condition`` / ``check: body`` as one tree: ``not condition or body``."""
    return Or((Not(condition, condition.pos), body), condition.pos)


def _compared_with_strings(expr: Expr) -> frozenset[str]:
    out: set[str] = set()

    def walk(node: Expr) -> None:
        if isinstance(node, In) and isinstance(node.values[0], Str):
            out.update(fields_of(node.operand))
        elif isinstance(node, Compare) and any(isinstance(o, Str) for o in node.operands):
            out.update(o.name for o in node.operands if isinstance(o, Field))
        elif isinstance(node, And | Or):
            for child in node.terms:
                walk(child)
        elif isinstance(node, Not):
            walk(node.operand)

    walk(expr)
    return frozenset(out)


def parse_rules(raw: object, field_types: Mapping[str, type]) -> tuple[RuleSpec, ...]:
    """The RuleSpecs of a contract's ``rules`` value; RuleError lists every problem.

    Each problem names its place (``rules[1] (spread_band).check: ...``), so a loader can
    add ``error.problems`` to its own list. ``None`` (no ``rules`` key) gives no rules.
    """
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise RuleListError(["'rules' must be a list of mappings with 'name' and 'check'"])
    problems: list[str] = []
    specs: list[RuleSpec] = []
    first_index: dict[str, int] = {}
    for index, item in enumerate(raw):
        spec = _rule(problems, index, item, field_types)
        if spec is None:
            continue
        if spec.name in first_index:
            first = first_index[spec.name]
            problems.append(f"rules[{index}]: name {spec.name!r} is already used by rules[{first}]")
            continue
        first_index[spec.name] = index
        specs.append(spec)
    if problems:
        raise RuleListError(problems)
    return tuple(specs)


def _rule(
    problems: list[str], index: int, item: object, field_types: Mapping[str, type]
) -> RuleSpec | None:
    where = f"rules[{index}]"
    if not isinstance(item, Mapping):
        problems.append(f"{where}: each rule must be a mapping with 'name' and 'check'")
        return None
    before = len(problems)
    name = item.get("name")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        shown = name if not isinstance(name, str) else name[:70]
        problems.append(
            f"{where}: 'name' is required: lower case letters, digits and '_', starting with"
            f" a letter, at most 64 characters; got {shown!r}"
        )
    else:
        where = f"{where} ({name})"
    unknown = sorted(str(key) for key in item if key not in _KEYS)
    if unknown:
        problems.append(
            f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(_KEYS))})"
        )
    action = item.get("action", "quarantine")
    if not isinstance(action, str) or action not in {a.value for a in RuleAction}:
        problems.append(f"{where}: 'action' must be quarantine or flag, got {action!r}")
    description = item.get("description", "")
    if not isinstance(description, str):
        problems.append(f"{where}: 'description' must be a string")
    check = item.get("check")
    when = item.get("when", "")
    condition = None
    if not isinstance(when, str) or ("when" in item and not when.strip()):
        problems.append(f"{where}: 'when' must be a non-empty string (a condition)")
    elif when:
        try:
            condition = parse_rule(when)
            check_rule(condition, field_types)
        except RuleError as exc:
            problems.append(f"{where}.when: {exc}")
    spec = None
    if not isinstance(check, str) or not check.strip():
        problems.append(f"{where}: 'check' is required and must be a non-empty string")
    else:
        try:
            body = parse_rule(check)
            check_rule(body, field_types)
        except RuleError as exc:
            problems.append(f"{where}.check: {exc}")
        else:
            if len(problems) == before and isinstance(name, str):
                expr = body if condition is None else combine(condition, body)
                spec = RuleSpec(
                    name,
                    check,
                    expr,
                    fields_of(expr),
                    RuleAction(action),
                    str(description),
                    str(when),
                    condition,
                    text_fields(expr, field_types),
                )
    return spec
