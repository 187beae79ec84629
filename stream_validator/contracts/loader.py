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
      - name: event_ts
        type: datetime
        require_timezone: true      # datetime fields only: Z or +HH:MM required
        max_future_s: 5             # datetime only: at most 5 s after the validation time
        max_age_s: 86400            # datetime only: at most a day before it
      - name: side
        type: str
        allowed: [buy, sell]        # str and int fields: the only values accepted
      - name: exchange
        type: str
        pattern: '[A-Z0-9]{4}'      # str only: matches the whole value (contracts.pattern)
        min_length: 1               # str only: Unicode code points, inclusive
        max_length: 16
        action: flag                # quarantine (default) | flag: every check of the field
    rules:                          # optional, see contracts.rulespec
      - name: crossed_book
        check: "bid <= ask"
        action: quarantine          # quarantine (default) | flag
        description: bid above ask
    state:                          # optional, see contracts.statespec
      key: symbol
      sequence: {field: seq, action: flag}

The file is decoded into the Structs below (msgspec: unknown keys and wrong types are errors,
so a typo such as ``nulable`` cannot silently weaken a contract), keys written twice are
found by the YAML reader, and the built contract goes through ``contract_problems``. A file's
error lists every problem found, one per line: each duplicate key (with its lines), every
problem of the contract's own keys and of each field (with its path, e.g.
``fields[2].min_value``), every problem of the rules (``rules[1] (spread_band).check``) and
of the ``state`` section (``state.sequence.field ...``), or else every consistency problem.
A YAML syntax error gives line and column only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import msgspec
from msgspec import Meta

from stream_validator.contracts.check import contract_problems
from stream_validator.contracts.model import SUPPORTED_TYPES, FieldSpec, SchemaContract
from stream_validator.contracts.rulespec import RuleAction, RuleSpec, parse_rules
from stream_validator.contracts.statespec import SymbolStateSpec, state_spec_from_mapping
from stream_validator.errors import (
    ContractFileError,
    RuleListError,
    StateSpecError,
    YamlFileError,
    problem_listing,
)
from stream_validator.yamlfile import decode_all, read_text_file, read_yaml

#: The names of SUPPORTED_TYPES (a test keeps the two equal).
TypeLabel = Literal["float", "int", "str", "bool", "datetime"]
Number = int | float
T = TypeVar("T")


class FieldDoc(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """One item of ``fields`` as written in the file."""

    name: Annotated[str, Meta(min_length=1)]
    type: TypeLabel
    nullable: bool = False
    min_value: Number | None = None
    max_value: Number | None = None
    allow_non_finite: bool = False
    require_timezone: bool = False
    max_future_s: Number | None = None
    max_age_s: Number | None = None
    allowed: list[str | int] | None = None
    pattern: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    action: Literal["quarantine", "flag"] = "quarantine"
    description: str = ""


class ContractDoc(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """A contract file's top level; its fields are decoded one by one to report each."""

    name: Annotated[str, Meta(min_length=1)]
    fields: Annotated[list[Any], Meta(min_length=1)]
    version: str | int | float = "1"
    description: str = ""
    max_allowed_null_pct: Number = 1.0
    forbid_unknown_fields: bool = False
    # Read by parse_rules, which names each problem with its rules[i] path.
    rules: list[Any] | None = None
    # Read by state_spec_from_mapping, which names each problem with its state.* path.
    state: Any = None


def load_contract(path: str | Path) -> SchemaContract:
    """Read one contract file; ContractFileError lists every problem, naming path and line."""
    source = str(path)
    try:
        text = read_text_file(path)
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
    head = _decode(document, ContractDoc, (), problems)
    raw_fields = head.fields if head else _follow_fields(document)
    specs = [_decode(document, FieldDoc, ("fields", i), problems) for i in range(len(raw_fields))]
    fields = tuple(_spec(doc) for doc in specs if doc is not None)
    rules: tuple[RuleSpec, ...] = ()
    state: SymbolStateSpec | None = None
    if head is not None:
        types = {spec.name: spec.expected_type for spec in fields}
        try:
            rules = parse_rules(head.rules, types)
        except RuleListError as exc:
            problems.extend(exc.problems)
        try:
            state = state_spec_from_mapping(head.state, types)
        except StateSpecError as exc:
            problems.extend(exc.problems)
    if head is not None and not problems:
        contract = SchemaContract(
            name=head.name,
            fields=fields,
            max_allowed_null_pct=head.max_allowed_null_pct,
            forbid_unknown_fields=head.forbid_unknown_fields,
            version=str(head.version),
            description=head.description,
            rules=rules,
            state=state,
        )
        problems.extend(contract_problems(contract))
        if not problems:
            return contract
    raise ContractFileError(source, problem_listing(problems), problems)


def _decode(document: object, into: type[T], at: tuple[str | int, ...], out: list[str]) -> T | None:
    try:
        return decode_all(document, into, at)
    except YamlFileError as exc:
        out.extend(exc.problems)
        return None


def _follow_fields(document: object) -> list[object]:
    """The raw ``fields`` list when the top level failed, so each field is still checked."""
    fields = document.get("fields") if isinstance(document, dict) else None
    return fields if isinstance(fields, list) else []


def _spec(doc: FieldDoc) -> FieldSpec:
    return FieldSpec(
        name=doc.name,
        expected_type=SUPPORTED_TYPES[doc.type],
        is_nullable=doc.nullable,
        min_value=doc.min_value,
        max_value=doc.max_value,
        allow_non_finite=doc.allow_non_finite,
        require_timezone=doc.require_timezone,
        max_future_s=doc.max_future_s,
        max_age_s=doc.max_age_s,
        allowed=None if doc.allowed is None else tuple(doc.allowed),
        pattern=doc.pattern,
        min_length=doc.min_length,
        max_length=doc.max_length,
        action=RuleAction(doc.action),
    )
