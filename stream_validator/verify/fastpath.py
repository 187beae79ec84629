"""A per-contract compiled check for the common case: a record that is entirely clean.

``compile_fast_check(contract)`` builds, once per contract, a straight-line Python function
that returns the nullable-field slots that are null (a tuple, often empty) when a record is
certainly valid and has no undeclared fields, and ``FAIL`` otherwise. Anything unusual —
a missing field, a wrong or subclassed type, NaN, a bound crossed, an unknown field — makes
it return ``FAIL`` and the full ``RecordInspector`` then explains the record. So the fast path
may only ever be *stricter* than the rules, never looser (a property test holds it to that).

The generated source contains no contract data: names and bounds are bound as constants in
the function's namespace, so field names cannot inject code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final

from stream_validator.contracts.model import FieldSpec, SchemaContract
from stream_validator.verify.valuecheck import ValueCheck

FAIL: Final = object()
_MISSING: Final = object()

FastCheck = Callable[[Mapping[Any, Any]], "tuple[int, ...] | object"]


def _iso(text: str) -> bool:
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def _iso_tz(text: str) -> bool:
    try:
        return datetime.fromisoformat(text).utcoffset() is not None
    except ValueError:
        return False


def _field_lines(i: int, spec: FieldSpec, slot: int, ns: dict[str, Any]) -> list[str]:
    ns[f"n{i}"], ns[f"lo{i}"], ns[f"hi{i}"] = spec.name, spec.min_value, spec.max_value
    lines = [f"v = get(n{i}, MISSING)"]
    if spec.is_nullable:
        lines += ["if v is None:", f"    nulls.append({slot})", "else:"]
        indent = "    "
    else:
        indent = ""
    body: list[str] = []
    tp = spec.expected_type
    if tp is float:
        body += ["t = type(v)", "if t is not float_ and t is not int_:", "    return FAIL"]
        # v - v is 0.0 for every finite float and NaN for NaN and ±Inf (ints are exact).
        body += ["if t is float_ and v - v != 0.0:", "    return FAIL"]
    elif tp is int:
        body += ["if type(v) is not int_:", "    return FAIL"]
    elif tp is str:
        body += ["if type(v) is not str_:", "    return FAIL"]
    elif tp is bool:
        body += ["if v is not True and v is not False:", "    return FAIL"]
    else:  # datetime
        tz = spec.require_timezone
        body += [
            "t = type(v)",
            "if t is str_:",
            f"    if not {'iso_tz' if tz else 'iso'}(v):",
            "        return FAIL",
            "elif t is not datetime_:",
            "    return FAIL",
        ]
        if tz:
            body += ["elif v.utcoffset() is None:", "    return FAIL"]
    if spec.min_value is not None:
        body += [f"if v < lo{i}:", "    return FAIL"]
    if spec.max_value is not None:
        body += [f"if v > hi{i}:", "    return FAIL"]
    values = ValueCheck.of(spec)
    if values is not None:  # allowed, pattern, lengths: v has the field's type here
        ns[f"ok{i}"] = values.accepts
        body += [f"if not ok{i}(v):", "    return FAIL"]
    return lines + [indent + line for line in body]


def _always_fail(record: Mapping[Any, Any]) -> object:
    return FAIL


def compile_fast_check(contract: SchemaContract) -> FastCheck:
    """Compile the clean-record check for a contract that check_contract accepted.

    A contract with object or array fields gets a check that always returns ``FAIL``: the
    full rules (``nested``) walk every record of it."""
    if contract.has_nested_fields:
        return _always_fail
    ns: dict[str, Any] = {
        "FAIL": FAIL,
        "MISSING": _MISSING,
        "float_": float,
        "int_": int,
        "str_": str,
        "datetime_": datetime,
        "iso": _iso,
        "iso_tz": _iso_tz,
        "len_": len,
        "NFIELDS": len(contract.fields),
    }
    lines = ["def fast_check(record):", "    get = record.get", "    nulls = []"]
    slot = 0
    for i, spec in enumerate(contract.fields):
        lines += ["    " + line for line in _field_lines(i, spec, slot, ns)]
        slot += spec.is_nullable
    lines += ["    if len_(record) != NFIELDS:", "        return FAIL", "    return tuple(nulls)"]
    exec(compile("\n".join(lines), f"<fast check of contract {contract.name!r}>", "exec"), ns)
    check: FastCheck = ns["fast_check"]
    return check
