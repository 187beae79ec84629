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

Unknown keys are errors, so a typo such as ``nulable`` cannot silently weaken a
contract. Every error names the file and, where there is one, the field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from stream_validator.contracts.check import contract_problems
from stream_validator.contracts.model import SUPPORTED_TYPES, FieldSpec, SchemaContract
from stream_validator.errors import ContractFileError

_CONTRACT_KEYS = frozenset(
    {"name", "version", "description", "max_allowed_null_pct", "forbid_unknown_fields", "fields"}
)
_FIELD_KEYS = frozenset(
    {"name", "type", "nullable", "min_value", "max_value", "allow_non_finite", "description"}
)
# PyYAML follows YAML 1.1, where "1e-9" (no dot) is a string, not a float.
_LOOKS_NUMERIC = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def load_contract(path: str | Path) -> SchemaContract:
    """Read one contract file; raise ContractFileError naming the file and field."""
    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ContractFileError(source, f"cannot read file: {exc}") from exc
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ContractFileError(source, f"not valid YAML: {exc}") from exc
    return contract_from_mapping(document, source=source)


def contract_from_mapping(document: object, *, source: str = "<contract>") -> SchemaContract:
    """Build and check a SchemaContract from a parsed contract document."""
    if not isinstance(document, Mapping):
        raise ContractFileError(source, "a contract must be a mapping with 'name' and 'fields'")
    _reject_unknown_keys(source, "contract", document, _CONTRACT_KEYS)
    name = document.get("name")
    if not isinstance(name, str) or not name:
        raise ContractFileError(source, "'name' is required and must be a non-empty string")
    version = document.get("version", "1")
    if isinstance(version, int | float) and not isinstance(version, bool):
        version = str(version)
    raw_fields = document.get("fields")
    if not isinstance(raw_fields, list) or not raw_fields:
        raise ContractFileError(source, "'fields' is required and must be a non-empty list")
    fields = tuple(_field_from_mapping(source, i, item) for i, item in enumerate(raw_fields))
    description = document.get("description", "")
    contract = SchemaContract(
        name=name,
        fields=fields,
        max_allowed_null_pct=_number(
            source, "max_allowed_null_pct", document.get("max_allowed_null_pct", 1.0)
        ),
        forbid_unknown_fields=_flag(
            source, "forbid_unknown_fields", document.get("forbid_unknown_fields", False)
        ),
        version=version if isinstance(version, str) else repr(version),
        description=description if isinstance(description, str) else str(description),
    )
    problems = contract_problems(contract)
    if problems:
        raise ContractFileError(source, "; ".join(problems))
    return contract


def _field_from_mapping(source: str, index: int, item: object) -> FieldSpec:
    where = f"fields[{index}]"
    if not isinstance(item, Mapping):
        raise ContractFileError(source, f"{where}: each field must be a mapping")
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise ContractFileError(source, f"{where}: 'name' is required (a non-empty string)")
    where = f"{where} ({name})"
    _reject_unknown_keys(source, where, item, _FIELD_KEYS)
    type_label = item.get("type")
    if type_label not in SUPPORTED_TYPES:
        supported = ", ".join(SUPPORTED_TYPES)
        raise ContractFileError(
            source, f"{where}: 'type' must be one of {supported}, got {type_label!r}"
        )
    bounds = {
        key: None if item.get(key) is None else _number(source, f"{where}: {key}", item[key])
        for key in ("min_value", "max_value")
    }
    return FieldSpec(
        name=name,
        expected_type=SUPPORTED_TYPES[type_label],
        is_nullable=_flag(source, f"{where}: nullable", item.get("nullable", False)),
        min_value=bounds["min_value"],
        max_value=bounds["max_value"],
        allow_non_finite=_flag(
            source, f"{where}: allow_non_finite", item.get("allow_non_finite", False)
        ),
    )


def _reject_unknown_keys(
    source: str, where: str, document: Mapping[Any, Any], allowed: frozenset[str]
) -> None:
    unknown = sorted(str(key) for key in document if key not in allowed)
    if unknown:
        raise ContractFileError(
            source,
            f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {', '.join(sorted(allowed))})",
        )


def _number(source: str, where: str, value: object) -> float | int:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    hint = ""
    if isinstance(value, str) and _LOOKS_NUMERIC.match(value):
        hint = " (YAML reads exponents without a dot as text: write e.g. 1.0e-9)"
    raise ContractFileError(source, f"{where} must be a number, got {value!r}{hint}")


def _flag(source: str, where: str, value: object) -> bool:
    if isinstance(value, bool):
        return value
    raise ContractFileError(source, f"{where} must be true or false, got {value!r}")
