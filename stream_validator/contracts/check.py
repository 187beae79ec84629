"""Consistency checks of a SchemaContract, shared by the verifier and the loader."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from datetime import datetime

from stream_validator.contracts.expr import check_rule
from stream_validator.contracts.model import (
    MAX_ITEMS_LIMIT,
    MAX_NESTING_DEPTH,
    NUMERIC_TYPES,
    SUPPORTED_TYPES,
    FieldSpec,
    SchemaContract,
    child_path,
    field_paths,
    item_path,
    rule_field_types,
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


def field_problems(spec: object, path: str | None = None, depth: int = 1) -> list[str]:
    """Every reason a FieldSpec is malformed (empty when it is fine).

    ``path``: where the spec is (``book.bid``, ``levels[]`` for an array's items; None: a
    top-level field, named by its own name); ``depth``: 1 at the top level.
    """
    if not isinstance(spec, FieldSpec):
        return [f"fields must be FieldSpec instances, got {type(spec).__name__}"]
    label = f"field {spec.name if path is None else path!r}"
    problems: list[str] = []
    if not isinstance(spec.name, str) or not spec.name:
        problems.append(f"field name must be a non-empty string, got {spec.name!r}")
    elif path is not None and not path.endswith("[]") and _PATH_CHARS.intersection(spec.name):
        problems.append(f"{label}: a nested field's name cannot hold '.', '[' or ']'")
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
    if path is not None and spec.has_skew_window:
        problems.append(f"{label}: max_future_s/max_age_s apply to top-level fields only")
    problems.extend(_text_problems(spec, label))
    if not isinstance(spec.action, RuleAction):
        problems.append(f"{label}: action must be quarantine or flag, got {_preview(spec.action)}")
    elif path is not None and spec.action is not RuleAction.QUARANTINE:
        problems.append(
            f"{label}: action applies to top-level fields only (a flagged object or array"
            " flags every violation inside it)"
        )
    problems.extend(_nested_problems(spec, label, path or spec.name, depth))
    return problems


_PATH_CHARS: frozenset[str] = frozenset(".[]")


def _nested_problems(spec: FieldSpec, label: str, path: str, depth: int) -> list[str]:
    """fields (objects), items and min_items/max_items (arrays): where they apply, the
    depth, and each inner spec."""
    problems: list[str] = []
    is_object, is_array = spec.expected_type is dict, spec.expected_type is list
    fields: object = spec.fields
    if fields is not None and not is_object:
        problems.append(f"{label}: fields applies to object fields only")
    if spec.items is not None and not is_array:
        problems.append(f"{label}: items applies to array fields only")
    for name in ("min_items", "max_items"):
        count = getattr(spec, name)
        if count is None:
            continue
        if not is_array:
            problems.append(f"{label}: {name} applies to array fields only")
        elif not _is_int(count) or not 0 <= count <= MAX_ITEMS_LIMIT:
            problems.append(
                f"{label}: {name} must be an int from 0 to {MAX_ITEMS_LIMIT}, got {_preview(count)}"
            )
    lo, hi = spec.min_items, spec.max_items
    if is_array and _is_int(lo) and (hi is None or _is_int(hi)) and lo > spec.item_limit:  # type: ignore[operator]
        problems.append(f"{label}: min_items {lo} is greater than max_items {spec.item_limit}")
    if not (is_object or is_array):
        return problems
    if depth >= MAX_NESTING_DEPTH:
        problems.append(f"{label}: objects and arrays nest at most {MAX_NESTING_DEPTH} deep")
        return problems
    if is_array:
        if spec.items is None:
            problems.append(f"{label}: an array field needs items (the spec of each item)")
        else:
            problems.extend(field_problems(spec.items, item_path(path), depth + 1))
        return problems
    if not isinstance(fields, tuple) or not fields:
        problems.append(f"{label}: an object field needs fields (a non-empty list)")
        return problems
    seen: set[object] = set()
    for inner in fields:
        inner_name = getattr(inner, "name", None)
        problems.extend(field_problems(inner, child_path(path, str(inner_name)), depth + 1))
        if isinstance(inner_name, str):
            if inner_name in seen:
                problems.append(f"{label}: duplicate field name {inner_name!r}")
            seen.add(inner_name)
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
    try:
        types = rule_field_types(contract)
    except (AttributeError, TypeError):  # malformed fields, reported on their own
        types = {s.name: s.expected_type for s in contract.fields if isinstance(s, FieldSpec)}
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
    if not problems:
        paths = [path for path, _ in field_paths(contract.fields)]
        if len(set(paths)) != len(paths):
            twice = sorted({path for path in paths if paths.count(path) > 1})
            problems.append(f"field path(s) declared twice: {', '.join(map(repr, twice))}")
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
