"""RuleSpec: a named record rule declared in a contract file, and the reader of that list.

Contract-file form (a top-level ``rules`` key beside ``fields``)::

    rules:
      - name: crossed_book          # [a-z][a-z0-9_]*, at most 64 chars, unique
        check: "bid <= ask"         # the grammar of contracts.expr
        action: quarantine          # quarantine (default) | flag
        description: bid above ask  # optional

What must hold for a RuleSpec from ``parse_rules``: the check parsed, every field it reads
is a declared int or float field, and the name is unique in the contract. A violation
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
    RuleError,
    check_rule,
    fields_of,
    parse_rule,
    render,
)
from stream_validator.errors import RuleListError

_NAME: Final = re.compile(r"[a-z][a-z0-9_]{0,63}")
_KEYS: Final = frozenset({"name", "check", "action", "description"})


class RuleAction(StrEnum):
    """What a violated rule, or a broken check of a field (``FieldSpec.action``), does to
    the record."""

    #: The record goes to the DLQ with kind ``rule_violation`` and ``rule=<name>``.
    QUARANTINE = "quarantine"
    #: The record flows to the clean topic; the violation is counted and reported.
    FLAG = "flag"


@dataclass(frozen=True, slots=True)
class RuleSpec:
    """One named rule: its source text, the parsed tree, the fields it reads, its action."""

    name: str
    check: str
    expr: Expr
    fields: frozenset[str]
    action: RuleAction = RuleAction.QUARANTINE
    description: str = ""

    @classmethod
    def of(
        cls,
        name: str,
        check: str,
        action: RuleAction | str = RuleAction.QUARANTINE,
        field_types: Mapping[str, type] | None = None,
    ) -> RuleSpec:
        """Parse ``check`` (and check it against ``field_types`` when given); RuleError if bad."""
        expr = parse_rule(check)
        fields = check_rule(expr, field_types) if field_types is not None else fields_of(expr)
        return cls(name, check, expr, fields, RuleAction(action))

    @property
    def canonical(self) -> str:
        """The check as the grammar renders it (spacing and parentheses normalised)."""
        return render(self.expr)


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
    spec = None
    if not isinstance(check, str) or not check.strip():
        problems.append(f"{where}: 'check' is required and must be a non-empty string")
    else:
        try:
            expr = parse_rule(check)
            fields = check_rule(expr, field_types)
        except RuleError as exc:
            problems.append(f"{where}.check: {exc}")
        else:
            if len(problems) == before and isinstance(name, str):
                spec = RuleSpec(name, check, expr, fields, RuleAction(action), str(description))
    return spec
