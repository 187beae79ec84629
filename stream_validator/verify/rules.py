"""Per-record checks, compiled once per contract.

PURE: no I/O, no clock. ``RecordInspector.inspect`` is the hot path: it walks the
declared fields once and allocates nothing for a clean record.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final, NamedTuple

from stream_validator.contracts.model import FieldSpec, SchemaContract, type_name
from stream_validator.verify.render import key_name, show, show_name, type_label
from stream_validator.verify.report import (
    MAX_KEY_CHARS,
    MAX_NAMED_VIOLATIONS,
    Violation,
    ViolationKind,
)
from stream_validator.verify.valuecheck import ValueCheck

_MISSING: Final = object()
_FLOAT, _INT, _STR, _BOOL, _DATETIME, _OBJECT, _ARRAY = range(7)
_TYPE_CODES: Final = {
    float: _FLOAT,
    int: _INT,
    str: _STR,
    bool: _BOOL,
    datetime: _DATETIME,
    dict: _OBJECT,
    list: _ARRAY,
}
# orjson turns integer literals beyond 64 bits into floats without a word; such a
# literal has at least 20 digits. Searched only when an int field got a huge float.
_LONG_INT_LITERAL: Final = re.compile(rb"(?<![\d.eE+-])-?\d{20,}(?![\d.eE])")
_INT64_LIMIT: Final = 2.0**63


Inspection = tuple["list[Violation] | None", "list[int] | None", "list[str] | None"]
"""(violations, null slots, unknown field names); None stands for empty."""


class _Rule(NamedTuple):
    name: str
    code: int
    nullable: bool
    lo: float | int | None
    hi: float | int | None
    allow_non_finite: bool
    label: str
    slot: int  # index into the nullable-field counters, -1 when not nullable
    require_tz: bool = False
    values: ValueCheck | None = None  # allowed, pattern, lengths


def _compile(spec: FieldSpec, slot: int) -> _Rule:
    return _Rule(
        spec.name,
        _TYPE_CODES[spec.expected_type],
        spec.is_nullable,
        spec.min_value,
        spec.max_value,
        spec.allow_non_finite,
        type_name(spec.expected_type) + (" with a UTC offset" if spec.require_timezone else ""),
        slot,
        spec.require_timezone,
        ValueCheck.of(spec),
    )


def _is_iso_datetime(text: str) -> bool:
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def _is_aware_iso_datetime(text: str) -> bool:
    """``require_timezone``: what fromisoformat reads, with an offset (``Z``, ``+HH:MM``)."""
    try:
        return datetime.fromisoformat(text).utcoffset() is not None
    except ValueError:
        return False


class RecordInspector:
    """Checks one mapping against a (checked) contract.

    ``inspect`` is compiled per contract (``_compile``): a field whose value is plainly
    clean costs a few inline tests; any other field goes through ``_check_field``, the
    rules themselves. ``inspect_each_field`` runs the rules on every field (the reference
    a property test holds the compiled function to).
    """

    __slots__ = ("declared", "forbid_unknown", "inspect", "nullable_names", "rules")

    def __init__(self, contract: SchemaContract) -> None:
        nullable = [spec.name for spec in contract.fields if spec.is_nullable]
        self.nullable_names: tuple[str, ...] = tuple(nullable)
        self.rules: tuple[_Rule, ...] = tuple(
            _compile(spec, nullable.index(spec.name) if spec.is_nullable else -1)
            for spec in contract.fields
        )
        self.declared: frozenset[str] = frozenset(contract.field_names)
        self.forbid_unknown = contract.forbid_unknown_fields
        self.inspect: Callable[[Mapping[Any, Any]], Inspection] = _compile_inspect(
            self.rules, self._unknown, contract.name
        )

    def inspect_each_field(self, record: Mapping[Any, Any]) -> Inspection:
        """Return (violations, null slots, unknown field names); None stands for empty."""
        violations: list[Violation] | None = None
        nulls: list[int] | None = None
        present = len(self.rules)
        for rule in self.rules:
            violations, nulls, missing = _check_field(
                rule, record.get(rule.name, _MISSING), violations, nulls
            )
            present -= missing
        if len(record) > present:
            return self._unknown(record, violations, nulls)
        return violations, nulls, None

    def _unknown(
        self, record: Mapping[Any, Any], violations: list[Violation] | None, nulls: list[int] | None
    ) -> Inspection:
        """The record has keys beyond the declared fields present: name (and forbid) them.

        Every undeclared name is returned (the batch keeps a bounded number); at most
        ``MAX_NAMED_VIOLATIONS`` get a violation each, one more counts the rest.
        """
        declared = self.declared
        unknown = [
            k if type(k) is str and len(k) <= MAX_KEY_CHARS else key_name(k)
            for k in record
            if k not in declared
        ]
        if self.forbid_unknown:
            for key in unknown[:MAX_NAMED_VIOLATIONS]:
                violations = _add(
                    violations,
                    key,
                    ViolationKind.UNKNOWN_FIELD,
                    f"undeclared field {show_name(key)} (the contract forbids unknown fields)",
                )
            more = len(unknown) - MAX_NAMED_VIOLATIONS
            if more > 0:
                violations = _add(
                    violations,
                    None,
                    ViolationKind.UNKNOWN_FIELD,
                    f"and {more} more undeclared fields (the contract forbids unknown fields)",
                )
        return violations, nulls, unknown

    def explain_overflow(
        self, record: Mapping[Any, Any], payload: bytes, violations: list[Violation]
    ) -> list[Violation]:
        """Report int fields that only failed because the decoder widened a >64-bit literal."""
        mismatch = ViolationKind.TYPE_MISMATCH
        for violation in violations:
            if violation.kind == mismatch:
                break
        else:
            return violations  # the common case, without building a new list
        out: list[Violation] = []
        has_literal: bool | None = None
        for violation in violations:
            value = record.get(violation.field) if violation.field is not None else None
            if (
                violation.kind == mismatch
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


def _check_field(
    rule: _Rule, value: object, violations: list[Violation] | None, nulls: list[int] | None
) -> tuple[list[Violation] | None, list[int] | None, int]:
    """The rules for one field's value (_MISSING when absent): (violations, nulls, missing)."""
    name, code, nullable, lo, hi, allow_nf, label, slot, require_tz, values = rule
    if value is _MISSING:
        violations = _add(
            violations, name, ViolationKind.MISSING_FIELD, f"missing required field {name!r}"
        )
        return violations, nulls, 1
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
        return violations, nulls, 0
    vtype = type(value)
    if code == _FLOAT:
        if vtype is float or isinstance(value, float):
            if not math.isfinite(value):  # type: ignore[arg-type]
                if not allow_nf:
                    violations = _add(
                        violations,
                        name,
                        ViolationKind.NON_FINITE,
                        f"field {name!r}: non-finite value {show(value)} is not allowed",
                    )
                    return violations, nulls, 0
                if value != value:  # NaN cannot be compared: it skips the bounds
                    return violations, nulls, 0
        elif vtype is not int and (not isinstance(value, int) or vtype is bool):
            return _mismatch(violations, name, label, value), nulls, 0
    elif code == _INT:
        if vtype is not int and (not isinstance(value, int) or vtype is bool):
            return _mismatch(violations, name, label, value), nulls, 0
    else:
        if code == _STR:
            ok = isinstance(value, str)
            if ok and values is not None:
                found = values.violation(name, value)
                if found is not None:
                    violations = violations or []
                    violations.append(found)
        elif code == _BOOL:
            ok = vtype is bool
        elif code == _OBJECT:  # its fields are the nested inspector's (verify.nested)
            ok = isinstance(value, Mapping)
        elif code == _ARRAY:
            ok = isinstance(value, list | tuple)
        elif isinstance(value, datetime):
            ok = not require_tz or value.utcoffset() is not None
        elif require_tz:
            ok = isinstance(value, str) and _is_aware_iso_datetime(value)
        else:
            ok = isinstance(value, str) and _is_iso_datetime(value)
        if not ok:
            violations = _mismatch(violations, name, label, value)
        return violations, nulls, 0
    if lo is not None and value < lo:  # type: ignore[operator]
        violations = _add(
            violations,
            name,
            ViolationKind.BELOW_MIN,
            f"field {name!r}: {show(value)} is below min_value {lo!r}",
        )
    elif hi is not None and value > hi:  # type: ignore[operator]
        violations = _add(
            violations,
            name,
            ViolationKind.ABOVE_MAX,
            f"field {name!r}: {show(value)} is above max_value {hi!r}",
        )
    elif values is not None:
        found = values.violation(name, value)
        if found is not None:
            violations = violations or []
            violations.append(found)
    return violations, nulls, 0


def _clean(i: int, rule: _Rule) -> str:
    """An expression true only for a value the rules accept without a word (not null)."""
    if rule.code == _FLOAT:
        # v - v is 0.0 for every finite float and NaN for NaN and ±Inf; bool is excluded.
        test = "((type(v) is float_ and v - v == 0.0) or type(v) is int_)"
    elif rule.code == _INT:
        test = "type(v) is int_"
    elif rule.code == _STR:
        return "type(v) is str_" if rule.values is None else f"(type(v) is str_ and ok{i}(v))"
    elif rule.code == _BOOL:
        return "(v is True or v is False)"
    elif rule.code in (_OBJECT, _ARRAY):
        return "False"  # checked field by field (verify.nested)
    elif rule.require_tz:
        return "((type(v) is str_ and iso_tz(v)) or (type(v) is datetime_ and aware(v)))"
    else:
        return "(type(v) is datetime_ or (type(v) is str_ and iso(v)))"
    if rule.lo is not None:
        test += f" and not v < lo{i}"
    if rule.hi is not None:
        test += f" and not v > hi{i}"
    if rule.values is not None:  # an int field's allowed values
        test += f" and ok{i}(v)"
    return test


def _compile_inspect(
    rules: tuple[_Rule, ...],
    unknown: Callable[[Mapping[Any, Any], list[Violation] | None, list[int] | None], Inspection],
    contract_name: str,
) -> Callable[[Mapping[Any, Any]], Inspection]:
    """Straight-line ``inspect`` for one contract. The source holds no contract data: names
    and bounds are constants in the function's namespace, so names cannot inject code."""
    ns: dict[str, Any] = {
        "MISSING": _MISSING,
        "check": _check_field,
        "unknown": unknown,
        "len_": len,
        **CLEAN_NS,
    }
    lines = [
        "def inspect(record):",
        "    get = record.get",
        "    violations = nulls = None",
        f"    present = {len(rules)}",
    ]
    for i, rule in enumerate(rules):
        ns[f"n{i}"], ns[f"r{i}"], ns[f"lo{i}"], ns[f"hi{i}"] = rule.name, rule, rule.lo, rule.hi
        if rule.values is not None:
            ns[f"ok{i}"] = rule.values.accepts
        lines += [
            f"    v = get(n{i}, MISSING)",
            f"    if not ({_clean(i, rule)}):",
            f"        violations, nulls, missing = check(r{i}, v, violations, nulls)",
            "        present -= missing",
        ]
    lines += [
        "    if len_(record) > present:",
        "        return unknown(record, violations, nulls)",
        "    return violations, nulls, None",
    ]
    code = compile("\n".join(lines), f"<inspect of contract {contract_name!r}>", "exec")
    exec(code, ns)
    inspect: Callable[[Mapping[Any, Any]], Inspection] = ns["inspect"]
    return inspect


def _aware(value: datetime) -> bool:
    return value.utcoffset() is not None


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


#: The names a generated value test reads (``_clean``'s source): types and datetime checks.
CLEAN_NS: Final[Mapping[str, Any]] = {
    "float_": float,
    "int_": int,
    "str_": str,
    "datetime_": datetime,
    "iso": _is_iso_datetime,
    "iso_tz": _is_aware_iso_datetime,
    "aware": _aware,
}
