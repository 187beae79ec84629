"""Per-record checks, compiled once per contract.

PURE: no I/O, no clock. ``RecordInspector.inspect`` is the hot path: it walks the
declared fields once and allocates nothing for a clean record.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final, NamedTuple

from stream_validator.contracts.model import FieldSpec, SchemaContract, type_name
from stream_validator.verify.render import show, show_name, type_label
from stream_validator.verify.report import Violation, ViolationKind

_MISSING: Final = object()
_FLOAT, _INT, _STR, _BOOL, _DATETIME = range(5)
_TYPE_CODES: Final = {float: _FLOAT, int: _INT, str: _STR, bool: _BOOL, datetime: _DATETIME}
# orjson turns integer literals beyond 64 bits into floats without a word; such a
# literal has at least 20 digits. Searched only when an int field got a huge float.
_LONG_INT_LITERAL: Final = re.compile(rb"(?<![\d.eE+-])-?\d{20,}(?![\d.eE])")
_INT64_LIMIT: Final = 2.0**63


class _Rule(NamedTuple):
    name: str
    code: int
    nullable: bool
    lo: float | int | None
    hi: float | int | None
    allow_non_finite: bool
    label: str
    slot: int  # index into the nullable-field counters, -1 when not nullable


def _compile(spec: FieldSpec, slot: int) -> _Rule:
    return _Rule(
        spec.name,
        _TYPE_CODES[spec.expected_type],
        spec.is_nullable,
        spec.min_value,
        spec.max_value,
        spec.allow_non_finite,
        type_name(spec.expected_type),
        slot,
    )


def _is_iso_datetime(text: str) -> bool:
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


class RecordInspector:
    """Checks one mapping against a (checked) contract."""

    __slots__ = ("declared", "forbid_unknown", "nullable_names", "rules")

    def __init__(self, contract: SchemaContract) -> None:
        nullable = [spec.name for spec in contract.fields if spec.is_nullable]
        self.nullable_names: tuple[str, ...] = tuple(nullable)
        self.rules: tuple[_Rule, ...] = tuple(
            _compile(spec, nullable.index(spec.name) if spec.is_nullable else -1)
            for spec in contract.fields
        )
        self.declared: frozenset[str] = frozenset(contract.field_names)
        self.forbid_unknown = contract.forbid_unknown_fields

    def inspect(
        self, record: Mapping[Any, Any]
    ) -> tuple[list[Violation] | None, list[int] | None, list[str] | None]:
        """Return (violations, null slots, unknown field names); None stands for empty."""
        violations: list[Violation] | None = None
        nulls: list[int] | None = None
        present = 0
        isfinite = math.isfinite
        for name, code, nullable, lo, hi, allow_nf, label, slot in self.rules:
            value = record.get(name, _MISSING)
            if value is _MISSING:
                violations = _add(
                    violations,
                    name,
                    ViolationKind.MISSING_FIELD,
                    f"missing required field {name!r}",
                )
                continue
            present += 1
            if value is None:
                if nullable:
                    if nulls is None:
                        nulls = []
                    nulls.append(slot)
                else:
                    violations = _add(
                        violations,
                        name,
                        ViolationKind.NULL_VALUE,
                        f"field {name!r} is null but is not nullable",
                    )
                continue
            vtype = type(value)
            if code == _FLOAT:
                if vtype is float or isinstance(value, float):
                    if not isfinite(value):
                        if not allow_nf:
                            violations = _add(
                                violations,
                                name,
                                ViolationKind.NON_FINITE,
                                f"field {name!r}: non-finite value {show(value)} is not allowed",
                            )
                            continue
                        if value != value:  # NaN cannot be compared: it skips the bounds
                            continue
                elif vtype is not int and (not isinstance(value, int) or vtype is bool):
                    violations = _mismatch(violations, name, label, value)
                    continue
            elif code == _INT:
                if vtype is not int and (not isinstance(value, int) or vtype is bool):
                    violations = _mismatch(violations, name, label, value)
                    continue
            else:
                if code == _STR:
                    ok = isinstance(value, str)
                elif code == _BOOL:
                    ok = vtype is bool
                elif isinstance(value, datetime):
                    ok = True
                else:
                    ok = isinstance(value, str) and _is_iso_datetime(value)
                if not ok:
                    violations = _mismatch(violations, name, label, value)
                continue
            if lo is not None and value < lo:
                violations = _add(
                    violations,
                    name,
                    ViolationKind.BELOW_MIN,
                    f"field {name!r}: {show(value)} is below min_value {lo!r}",
                )
            elif hi is not None and value > hi:
                violations = _add(
                    violations,
                    name,
                    ViolationKind.ABOVE_MAX,
                    f"field {name!r}: {show(value)} is above max_value {hi!r}",
                )
        unknown: list[str] | None = None
        if len(record) > present:
            declared = self.declared
            unknown = [k if type(k) is str else show(k) for k in record if k not in declared]
            if self.forbid_unknown:
                for key in unknown:
                    violations = _add(
                        violations,
                        key,
                        ViolationKind.UNKNOWN_FIELD,
                        f"undeclared field {show_name(key)} (the contract forbids unknown fields)",
                    )
        return violations, nulls, unknown

    def explain_overflow(
        self, record: Mapping[Any, Any], payload: bytes, violations: list[Violation]
    ) -> list[Violation]:
        """Report int fields that only failed because the decoder widened a >64-bit literal."""
        out: list[Violation] = []
        has_literal: bool | None = None
        for violation in violations:
            value = record.get(violation.field) if violation.field is not None else None
            if (
                violation.kind == ViolationKind.TYPE_MISMATCH
                and isinstance(value, float)
                and abs(value) >= _INT64_LIMIT
                and value.is_integer()
            ):
                if has_literal is None:
                    has_literal = _LONG_INT_LITERAL.search(payload) is not None
                if has_literal:
                    violation = Violation(
                        violation.field,
                        ViolationKind.UNDECODABLE,
                        f"field {violation.field!r}: integer literal beyond 64 bits cannot"
                        " be decoded exactly",
                    )
            out.append(violation)
        return out


def _add(
    violations: list[Violation] | None, name: str | None, kind: ViolationKind, message: str
) -> list[Violation]:
    if violations is None:
        violations = []
    violations.append(Violation(name, kind, message))
    return violations


def _mismatch(
    violations: list[Violation] | None, name: str, label: str, value: object
) -> list[Violation]:
    return _add(
        violations,
        name,
        ViolationKind.TYPE_MISMATCH,
        f"field {name!r}: expected {label}, got {type_label(value)} {show(value)}",
    )
