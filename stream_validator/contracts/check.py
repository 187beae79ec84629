"""Consistency checks of a SchemaContract, shared by the verifier and the loader."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from datetime import datetime

from stream_validator.contracts.expr import check_rule
from stream_validator.contracts.model import (
    NUMERIC_TYPES,
    SUPPORTED_TYPES,
    FieldSpec,
    SchemaContract,
    type_name,
)
from stream_validator.contracts.pattern import compile_pattern, pattern_problem
from stream_validator.contracts.rulespec import RuleAction, RuleSpec
from stream_validator.contracts.statespec import state_field_problems
from stream_validator.errors import ContractError, RuleError

MAX_NAME_CHARS = 100
MAX_SKEW_S = 100 * 365 * 86400  # keeps now ± window inside datetime's range


def _preview(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def field_problems(spec: object) -> list[str]:
    """Every reason a FieldSpec is malformed (empty when it is fine)."""
    if not isinstance(spec, FieldSpec):
        return [f"fields must be FieldSpec instances, got {type(spec).__name__}"]
    label = f"field {spec.name!r}"
    problems: list[str] = []
    if not isinstance(spec.name, str) or not spec.name:
        problems.append(f"field name must be a non-empty string, got {spec.name!r}")
    if spec.expected_type not in SUPPORTED_TYPES.values():
        supported = ", ".join(SUPPORTED_TYPES)
        problems.append(
            f"{label}: unsupported expected_type {type_name(spec.expected_type)!r}"
            f" (supported: {supported})"
        )
    for flag in ("is_nullable", "allow_non_finite"):
        if not isinstance(getattr(spec, flag), bool):
            problems.append(f"{label}: {flag} must be True or False")
    bounds = {"min_value": spec.min_value, "max_value": spec.max_value}
    for bound_name, bound in bounds.items():
        if bound is None:
            continue
        if spec.expected_type not in NUMERIC_TYPES:
            problems.append(
                f"{label}: {bound_name} is only allowed on numeric (int, float) fields,"
                f" not {type_name(spec.expected_type)}"
            )
        elif not _is_number(bound):
            problems.append(f"{label}: {bound_name} must be a number, got {bound!r}")
        elif math.isnan(bound):
            problems.append(f"{label}: {bound_name} must not be NaN")
    lo, hi = spec.min_value, spec.max_value
    if _is_number(lo) and _is_number(hi) and lo is not None and hi is not None and lo > hi:
        problems.append(f"{label}: min_value {lo!r} is greater than max_value {hi!r}")
    if spec.allow_non_finite and spec.expected_type is not float:
        problems.append(f"{label}: allow_non_finite applies to float fields only")
    problems.extend(_time_problems(spec, label))
    problems.extend(_text_problems(spec, label))
    if not isinstance(spec.action, RuleAction):
        problems.append(f"{label}: action must be quarantine or flag, got {_preview(spec.action)}")
    return problems


def _is_str(value: object) -> bool:
    return isinstance(value, str)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text_problems(spec: FieldSpec, label: str) -> list[str]:
    """allowed, pattern, min_length, max_length: where they apply, and that they agree."""
    problems: list[str] = []
    is_str = spec.expected_type is str
    lengths = {"min_length": spec.min_length, "max_length": spec.max_length}
    for name, length in lengths.items():
        if length is None:
            continue
        if not is_str:
            problems.append(f"{label}: {name} applies to str fields only")
        elif not _is_int(length) or length < 0:
            problems.append(f"{label}: {name} must be an int >= 0, got {_preview(length)}")
    lo, hi = spec.min_length, spec.max_length
    if _is_int(lo) and _is_int(hi) and lo is not None and hi is not None and lo > hi:
        problems.append(f"{label}: min_length {lo} is greater than max_length {hi}")
    if spec.pattern is not None:
        if not is_str:
            problems.append(f"{label}: pattern applies to str fields only")
        else:
            problem = pattern_problem(spec.pattern)
            if problem is not None:
                problems.append(f"{label}: pattern {_preview(spec.pattern)}: {problem}")
    if spec.allowed is not None:
        problems.extend(_allowed_problems(spec, label))
    return problems


def _allowed_problems(spec: FieldSpec, label: str) -> list[str]:
    allowed: object = spec.allowed
    if spec.expected_type is str:
        member_ok, kind = _is_str, "strings"
    elif spec.expected_type is int:
        member_ok, kind = _is_int, "ints"
    else:
        return [f"{label}: allowed applies to str and int fields only"]
    if not isinstance(allowed, tuple) or not allowed:
        return [f"{label}: allowed must be a non-empty list of {kind}"]
    problems: list[str] = []
    seen: set[object] = set()
    pattern = spec.pattern
    regex = (
        compile_pattern(pattern)
        if isinstance(pattern, str) and not pattern_problem(pattern)
        else None
    )
    for index, value in enumerate(allowed):
        where = f"{label}: allowed[{index}]"
        if not member_ok(value):
            problems.append(f"{where} must be one of the field's {kind}, got {_preview(value)}")
            continue
        if value in seen:
            problems.append(f"{where}: {_preview(value)} is listed twice")
        seen.add(value)
        failed = _own_check_failed(spec, value, regex)
        if failed:
            problems.append(f"{where}: {_preview(value)} {failed}, so it can never pass")
    return problems


def _own_check_failed(
    spec: FieldSpec, value: str | int, regex: re.Pattern[str] | None
) -> str | None:
    """Which of the field's other checks an allowed value fails (None: it passes them)."""
    if isinstance(value, int):
        lo, hi = spec.min_value, spec.max_value
        if _is_number(lo) and lo is not None and value < lo:
            return f"is below min_value {lo!r}"
        if _is_number(hi) and hi is not None and value > hi:
            return f"is above max_value {hi!r}"
        return None
    lo_len, hi_len = spec.min_length, spec.max_length
    if _is_int(lo_len) and lo_len is not None and len(value) < lo_len:
        return f"is shorter than min_length {lo_len}"
    if _is_int(hi_len) and hi_len is not None and len(value) > hi_len:
        return f"is longer than max_length {hi_len}"
    if regex is not None and regex.match(value) is None:
        return "does not match the pattern"
    return None


def _time_problems(spec: FieldSpec, label: str) -> list[str]:
    problems: list[str] = []
    if not isinstance(spec.require_timezone, bool):
        problems.append(f"{label}: require_timezone must be True or False")
    elif spec.require_timezone and spec.expected_type is not datetime:
        problems.append(f"{label}: require_timezone applies to datetime fields only")
    for name in ("max_future_s", "max_age_s"):
        seconds = getattr(spec, name)
        if seconds is None:
            continue
        if spec.expected_type is not datetime:
            problems.append(f"{label}: {name} applies to datetime fields only")
        elif not _is_number(seconds) or not math.isfinite(seconds) or seconds < 0:
            problems.append(f"{label}: {name} must be a finite number >= 0, got {seconds!r}")
        elif seconds > MAX_SKEW_S:
            problems.append(f"{label}: {name} must be at most {MAX_SKEW_S} (100 years)")
    return problems


def rule_problems(contract: SchemaContract) -> list[str]:
    """Every reason the contract's rules do not fit it (rules built outside a file too)."""
    rules: object = contract.rules
    if not isinstance(rules, tuple):
        return [f"rules must be a tuple of RuleSpec, got {type(rules).__name__}"]
    types = {
        spec.name: spec.expected_type for spec in contract.fields if isinstance(spec, FieldSpec)
    }
    problems: list[str] = []
    seen: set[str] = set()
    for index, rule in enumerate(rules):
        if not isinstance(rule, RuleSpec):
            problems.append(f"rules[{index}] must be a RuleSpec, got {type(rule).__name__}")
            continue
        if rule.name in seen:
            problems.append(f"rules[{index}]: duplicate rule name {rule.name!r}")
        seen.add(rule.name)
        try:
            check_rule(rule.expr, types)
        except RuleError as exc:
            problems.append(f"rules[{index}] ({rule.name}).check: {exc}")
    return problems


def contract_problems(contract: object) -> list[str]:
    """Every reason a SchemaContract is malformed (empty when it is fine)."""
    if not isinstance(contract, SchemaContract):
        return [f"expected a SchemaContract, got {type(contract).__name__}"]
    problems: list[str] = []
    # Name and version become metric labels, log fields and DLQ envelope fields.
    for what, value in (("name", contract.name), ("version", contract.version)):
        if not isinstance(value, str) or not 0 < len(value) <= MAX_NAME_CHARS:
            problems.append(
                f"contract {what} must be a string of 1-{MAX_NAME_CHARS} characters,"
                f" got {_preview(value)}"
            )
        elif not value.isprintable():
            problems.append(f"contract {what} must be printable, got {_preview(value)}")
    fields: Iterable[object] = contract.fields if isinstance(contract.fields, tuple) else ()
    if not fields:
        problems.append("contract declares no fields")
    seen: set[object] = set()
    for spec in fields:
        problems.extend(field_problems(spec))
        name = getattr(spec, "name", None)
        if isinstance(name, str):
            if name in seen:
                problems.append(f"duplicate field name {name!r}")
            seen.add(name)
    pct = contract.max_allowed_null_pct
    if not _is_number(pct) or math.isnan(pct) or not 0 <= pct <= 100:
        problems.append(f"max_allowed_null_pct must be a number from 0 to 100, got {pct!r}")
    if not isinstance(contract.forbid_unknown_fields, bool):
        problems.append("forbid_unknown_fields must be True or False")
    problems.extend(rule_problems(contract))
    if contract.state is not None:
        types = {spec.name: spec.expected_type for spec in fields if isinstance(spec, FieldSpec)}
        problems.extend(state_field_problems(contract.state, types))
        problems.extend(_flagged_state_problems(contract))
    return problems


def _flagged_state_problems(contract: SchemaContract) -> list[str]:
    """A field the per-symbol state reads must hold a checked value on every clean record."""
    state = contract.state
    if state is None:
        return []
    used = {state.key_field, state.sequence_field, state.event_time_field, *state.quote_fields}
    return [
        f"field {spec.name!r}: action flag is not allowed on a field the state section"
        " reads (the per-symbol state needs its checked value)"
        for spec in contract.fields
        if isinstance(spec, FieldSpec) and spec.action == RuleAction.FLAG and spec.name in used
    ]


def check_contract(contract: object) -> None:
    """Raise ContractError (a ValueError) listing every problem of a malformed contract."""
    problems = contract_problems(contract)
    if problems:
        name = getattr(contract, "name", "?")
        raise ContractError(f"malformed contract {name!r}: " + "; ".join(problems))
