"""Load SchemaContracts from YAML (or JSON) contract files.

The format, key by key, is docs/contracts/format.md (rules: docs/contracts/rules.md, the
``state`` section: docs/contracts/state.md); this module is its reader.

The file is decoded into the Structs below (msgspec: unknown keys and wrong types are errors,
so a typo such as ``nulable`` cannot silently weaken a contract), keys written twice are
found by the YAML reader, and the built contract goes through ``contract_problems``. A file's
error lists every problem found, one per line: each duplicate key (with its lines), every
problem of the contract's own keys and of each field (with its path, e.g.
``fields[2].min_value``, ``fields[3].items.fields[0].type``), every problem of the rules
(``rules[1] (spread_band).check``) and of the ``state`` section
(``state.sequence.field ...``), or else every consistency problem.
A YAML syntax error gives line and column only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import msgspec
from msgspec import Meta

from stream_validator.contracts.check import contract_problems
from stream_validator.contracts.model import (
    MAX_NESTING_DEPTH,
    SUPPORTED_TYPES,
    FieldSpec,
    SchemaContract,
    rule_field_types,
)
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
TypeLabel = Literal["float", "int", "str", "bool", "datetime", "object", "array"]
Number = int | float
T = TypeVar("T")


class ItemDoc(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    """An array's ``items`` as written in the file: a field without a name."""

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
    # Decoded one by one (each problem with its path), as the top level's fields.
    fields: list[Any] | None = None
    items: Any = None
    min_items: int | None = None
    max_items: int | None = None
    action: Literal["quarantine", "flag"] = "quarantine"
    description: str = ""


class FieldDoc(ItemDoc, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """One item of ``fields`` as written in the file."""

    name: Annotated[str, Meta(min_length=1)]


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
    return contract_from_text(text, source=source)


def contract_from_text(text: str, *, source: str = "<contract>") -> SchemaContract:
    """Build and check a SchemaContract from a contract file's text (``load_contract``
    once the file is read: the service's reload reads it once, to hash what it loads)."""
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
    fields = _specs(document, ("fields",), len(raw_fields), problems, 1)
    rules: tuple[RuleSpec, ...] = ()
    state: SymbolStateSpec | None = None
    if head is not None:
        types = {spec.name: spec.expected_type for spec in fields}
        try:
            rules = parse_rules(head.rules, rule_field_types(SchemaContract("", fields)))
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


def _specs(
    document: object, at: tuple[str | int, ...], count: int, problems: list[str], depth: int
) -> tuple[FieldSpec, ...]:
    """The FieldSpecs of the ``fields`` list at ``at`` (those that decode)."""
    docs = [_decode(document, FieldDoc, (*at, i), problems) for i in range(count)]
    return tuple(
        _spec(doc, document, (*at, i), problems, depth, doc.name)
        for i, doc in enumerate(docs)
        if doc is not None
    )


def _spec(
    doc: ItemDoc,
    document: object,
    at: tuple[str | int, ...],
    problems: list[str],
    depth: int,
    name: str,
) -> FieldSpec:
    """The FieldSpec of a decoded field (``name``: an item's is its array's, with ``[]``);
    its ``fields`` and ``items`` are decoded below ``at``, as deep as the depth limit lets
    the contract check name the problem."""
    fields: tuple[FieldSpec, ...] | None = None
    items: FieldSpec | None = None
    if depth < MAX_NESTING_DEPTH:
        if isinstance(doc.fields, list):
            fields = _specs(document, (*at, "fields"), len(doc.fields), problems, depth + 1)
        if doc.items is not None:
            item = _decode(document, ItemDoc, (*at, "items"), problems)
            if item is not None:
                items = _spec(item, document, (*at, "items"), problems, depth + 1, name + "[]")
    elif doc.fields is not None or doc.items is not None:
        fields = () if doc.fields is not None else None
        items = FieldSpec(name + "[]", int) if doc.items is not None else None
    return FieldSpec(
        name=name,
        fields=fields,
        items=items,
        min_items=doc.min_items,
        max_items=doc.max_items,
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
