"""A draft contract as a contract file: YAML in the shipped files' layout, commented with
what was observed. PURE (text out).

Scalar fields are one flow mapping a line (``- {name: bid, type: float, ...}``), objects and
arrays blocks; each field's comment gives its null rate and observed extremes; the file ends
with the fields left out and why. Every string from the sample (field names, the source's
name) is written double-quoted with escapes unless it is a plain identifier, and comments
name fields with ``ascii()``, so no payload text can end a comment or a scalar early.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fractions import Fraction
from typing import Final

import yaml

from stream_validator.contracts.model import FieldSpec, child_path, item_path, type_name
from stream_validator.lifecycle.infer import Draft, Facts

_PLAIN: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Plain words YAML 1.1 would read as a bool or null.
_RESERVED: Final = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})
_ESCAPES: Final = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
#: Left-out fields listed in the file (and in the report); the rest are counted.
MAX_LISTED: Final = 50


def scalar(value: object) -> str:
    """One YAML scalar: a plain identifier as is, other text double-quoted, escaped to ASCII."""
    if isinstance(value, str):
        if _PLAIN.fullmatch(value) and value.lower() not in _RESERVED:
            return value
        return '"' + "".join(_escape(ch) for ch in value) + '"'
    text: str = yaml.safe_dump([value], default_flow_style=True, width=2**31).strip()
    return text[1:-1]


def _escape(ch: str) -> str:
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    if " " <= ch <= "~":
        return ch
    code = ord(ch)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def render_draft(draft: Draft, source: str, margin: Fraction) -> str:
    """The contract file of a draft with a contract; ``source``: where the sample came from."""
    contract = draft.contract
    assert contract is not None
    lines = [
        f"# Drafted by `stream-validator infer` from {draft.records} records of"
        f" {source!a}, margin {float(margin):g}.",
        "# Review before use: types, nullability, bounds and the null ceiling come from the"
        " sample alone.",
        f"name: {scalar(contract.name)}",
        f"version: {scalar(contract.version)}",
    ]
    if contract.description:
        lines.append(f"description: {scalar(contract.description)}")
    ceiling = f"max_allowed_null_pct: {scalar(contract.max_allowed_null_pct)}"
    if draft.ceiling_from is not None:
        path, rate = draft.ceiling_from
        ceiling += f"  # the highest null rate seen: {rate:.2f}% ({path!a})"
    else:
        ceiling += "  # no field was seen null"
    lines += [ceiling, "forbid_unknown_fields: false", "fields:"]
    for spec in contract.fields:
        lines += _field(spec, spec.name, "  ", draft.facts)
    lines += left_out_lines(draft, "# ")
    return "\n".join(lines) + "\n"


def _field(spec: FieldSpec, path: str, indent: str, facts: dict[str, Facts]) -> list[str]:
    """The lines of one field (``- ...``) at ``indent``."""
    head = {"name": spec.name, **_keys(spec)}
    note = _note(facts.get(path))
    if not spec.is_nested:
        return [f"{indent}- {_flow(head)}{note}"]
    first, *rest = head.items()
    lines = [f"{indent}- {first[0]}: {scalar(first[1])}{note}"]
    lines += [f"{indent}  {key}: {scalar(value)}" for key, value in rest]
    lines += _inner(spec, path, indent + "  ", facts)
    return lines


def _inner(spec: FieldSpec, path: str, indent: str, facts: dict[str, Facts]) -> list[str]:
    """An object's ``fields:`` or an array's ``items:`` lines."""
    if spec.fields:
        lines = [f"{indent}fields:"]
        for inner in spec.fields:
            lines += _field(inner, child_path(path, inner.name), indent + "  ", facts)
        return lines
    items = spec.items
    if items is None:
        return []
    inner_path = item_path(path)
    note = _note(facts.get(inner_path))
    if not items.is_nested:
        return [f"{indent}items: {_flow(_keys(items))}{note}"]
    lines = [f"{indent}items:{note}"]
    lines += [f"{indent}  {key}: {scalar(value)}" for key, value in _keys(items).items()]
    return lines + _inner(items, inner_path, indent + "  ", facts)


def _keys(spec: FieldSpec) -> dict[str, object]:
    """The keys a draft's field sets, in the file's order (name, fields, items apart)."""
    keys: dict[str, object] = {"type": type_name(spec.expected_type)}
    if spec.is_nullable:
        keys["nullable"] = True
    if spec.require_timezone:
        keys["require_timezone"] = True
    for key in ("min_value", "max_value", "min_items", "max_items"):
        value = getattr(spec, key)
        if value is not None:
            keys[key] = value
    return keys


def _flow(keys: dict[str, object]) -> str:
    return "{" + ", ".join(f"{key}: {scalar(value)}" for key, value in keys.items()) + "}"


def _note(facts: Facts | None) -> str:
    if facts is None:
        return ""
    parts = [f"null {facts.null_pct:.2f}%" if facts.null_pct else "never null"]
    if facts.lo is not None and facts.hi is not None:
        parts.append(f"seen {facts.lo!r} .. {facts.hi!r}")
    if facts.min_items is not None and facts.max_items is not None:
        parts.append(f"{facts.min_items} .. {facts.max_items} items")
    return "  # " + ", ".join(parts)


def left_out_lines(draft: Draft, prefix: str) -> list[str]:
    """One line per field left out of the draft (at most ``MAX_LISTED``), each ``prefix``ed."""
    entries = [
        f"{path!a} seen in {seen} of {total} (a declared field is required)"
        for path, seen, total in draft.partial
    ] + [f"{path!a}: {reason}" for path, reason in draft.untyped]
    if not entries:
        return []
    lines = [f"{prefix}Left out (records carrying them still pass: unknown fields are allowed):"]
    lines += _bounded(entries, prefix + "  ")
    return lines


def _bounded(entries: Iterable[str], prefix: str) -> list[str]:
    listed = list(entries)
    lines = [prefix + entry for entry in listed[:MAX_LISTED]]
    if len(listed) > MAX_LISTED:
        lines.append(f"{prefix}... and {len(listed) - MAX_LISTED} more")
    return lines
