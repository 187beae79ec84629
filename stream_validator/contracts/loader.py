"""Load SchemaContracts from YAML (or JSON) contract files.

Format (see README, "Contract files")::

    name: tick                      # required
    version: "3"                    # string; default "1"
    description: Top-of-book ticks  # optional
    max_allowed_null_pct: 1.0       # percent, 0-100; default 1.0
    forbid_unknown_fields: false    # default false
    fields:
      - name: price
        type: float                 # float | int | str | bool | datetime
        nullable: false             # default false
        min_value: 1.0e-9           # inclusive, numeric fields only
        max_value: 1000000.0
        allow_non_finite: false     # float fields only

Unknown keys and keys written twice are errors, so a typo such as ``nulable`` or a
second ``min_value`` cannot silently weaken a contract. A file's error lists every
problem found, each naming the field (and for a duplicate key, its line); a YAML syntax
error gives line and column only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from stream_validator.contracts.check import contract_problems
from stream_validator.contracts.model import SUPPORTED_TYPES, FieldSpec, SchemaContract
from stream_validator.errors import ContractFileError, YamlFileError
from stream_validator.yamlfile import read_yaml

_CONTRACT_KEYS = frozenset(
    {"name", "version", "description", "max_allowed_null_pct", "forbid_unknown_fields", "fields"}
)
_FIELD_KEYS = frozenset(
    {"name", "type", "nullable", "min_value", "max_value", "allow_non_finite", "description"}
)
# PyYAML follows YAML 1.1, where "1e-9" (no dot) is a string, not a float.
_LOOKS_NUMERIC = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def load_contract(path: str | Path) -> SchemaContract:
    """Read one contract file; ContractFileError lists every problem, naming key, field, line."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ContractFileError(source, f"cannot read file: {exc}") from exc
    try:
        document, duplicates = read_yaml(text)
    except YamlFileError as exc:
        raise ContractFileError(source, str(exc)) from None
    return _build(document, source, list(duplicates))


def contract_from_mapping(document: object, *, source: str = "<contract>") -> SchemaContract:
    """Build and check a SchemaContract from a parsed contract document."""
    return _build(document, source, [])


def _build(document: object, source: str, problems: list[str]) -> SchemaContract:
    contract = _contract(document, problems)
    if contract is not None:
        problems.extend(contract_problems(contract))
    if problems or contract is None:
        raise ContractFileError(source, "; ".join(problems))
    return contract


def _contract(document: object, problems: list[str]) -> SchemaContract | None:
    """The contract a document describes, or None; every problem found goes to ``problems``."""
    if not isinstance(document, Mapping):
        problems.append("a contract must be a mapping with 'name' and 'fields'")
        return None
    _reject_unknown_keys(problems, "contract", document, _CONTRACT_KEYS)
    name = document.get("name")
    if not isinstance(name, str) or not name:
        problems.append("'name' is required and must be a non-empty string")
    version = document.get("version", "1")
    if isinstance(version, int | float) and not isinstance(version, bool):
        version = str(version)
    raw_fields = document.get("fields")
    fields: list[FieldSpec | None] = []
    if not isinstance(raw_fields, list) or not raw_fields:
        problems.append("'fields' is required and must be a non-empty list")
    else:
        fields = [_field_from_mapping(problems, i, item) for i, item in enumerate(raw_fields)]
    description = document.get("description", "")
    pct = _number(problems, "max_allowed_null_pct", document.get("max_allowed_null_pct", 1.0))
    forbid = _flag(problems, "forbid_unknown_fields", document.get("forbid_unknown_fields", False))
    specs = [spec for spec in fields if spec is not None]
    if problems or not isinstance(name, str) or len(specs) != len(fields):
        return None
    return SchemaContract(
        name=name,
        fields=tuple(specs),
        max_allowed_null_pct=pct,
        forbid_unknown_fields=forbid,
        version=version if isinstance(version, str) else repr(version),
        description=description if isinstance(description, str) else str(description),
    )


def _field_from_mapping(problems: list[str], index: int, item: object) -> FieldSpec | None:
    where = f"fields[{index}]"
    if not isinstance(item, Mapping):
        problems.append(f"{where}: each field must be a mapping")
        return None
    before = len(problems)
    name = item.get("name")
    if not isinstance(name, str) or not name:
        problems.append(f"{where}: 'name' is required (a non-empty string)")
    else:
        where = f"{where} ({name})"
    _reject_unknown_keys(problems, where, item, _FIELD_KEYS)
    type_label = item.get("type")
    if type_label not in SUPPORTED_TYPES:
        supported = ", ".join(SUPPORTED_TYPES)
        problems.append(f"{where}: 'type' must be one of {supported}, got {type_label!r}")
    bounds = {
        key: None if item.get(key) is None else _number(problems, f"{where}: {key}", item[key])
        for key in ("min_value", "max_value")
    }
    nullable = _flag(problems, f"{where}: nullable", item.get("nullable", False))
    non_finite = _flag(problems, f"{where}: allow_non_finite", item.get("allow_non_finite", False))
    if len(problems) > before or not isinstance(name, str) or not isinstance(type_label, str):
        return None
    return FieldSpec(
        name=name,
        expected_type=SUPPORTED_TYPES[type_label],
        is_nullable=nullable,
        min_value=bounds["min_value"],
        max_value=bounds["max_value"],
        allow_non_finite=non_finite,
    )


def _reject_unknown_keys(
    problems: list[str], where: str, document: Mapping[Any, Any], allowed: frozenset[str]
) -> None:
    unknown = sorted(str(key) for key in document if key not in allowed)
    if unknown:
        problems.append(
            f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(allowed))})"
        )


def _number(problems: list[str], where: str, value: object) -> float | int:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    hint = ""
    if isinstance(value, str) and _LOOKS_NUMERIC.match(value):
        hint = " (YAML reads exponents without a dot as text: write e.g. 1.0e-9)"
    problems.append(f"{where} must be a number, got {value!r}{hint}")
    return 0


def _flag(problems: list[str], where: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    problems.append(f"{where} must be true or false, got {value!r}")
    return False
