"""Consistency checks of a SchemaContract, shared by the verifier and the loader."""

from __future__ import annotations

import math
from collections.abc import Iterable

from stream_validator.contracts.model import (
    NUMERIC_TYPES,
    SUPPORTED_TYPES,
    FieldSpec,
    SchemaContract,
    type_name,
)
from stream_validator.errors import ContractError

MAX_NAME_CHARS = 100


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
    return problems


def check_contract(contract: object) -> None:
    """Raise ContractError (a ValueError) listing every problem of a malformed contract."""
    problems = contract_problems(contract)
    if problems:
        name = getattr(contract, "name", "?")
        raise ContractError(f"malformed contract {name!r}: " + "; ".join(problems))
