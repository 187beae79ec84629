"""FieldSpec and SchemaContract: the declared structure records must match.

Both are frozen value objects. They are checked for consistency by
``check_contract`` (called by DataSchemaContractVerifier and the file loader),
so a malformed contract fails at setup instead of silently passing records.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Final

from stream_validator.contracts.rulespec import RuleAction, RuleSpec
from stream_validator.contracts.statespec import SymbolStateSpec

#: The Python types a field may declare, keyed by the name contract files use.
SUPPORTED_TYPES: dict[str, type] = {
    "float": float,
    "int": int,
    "str": str,
    "bool": bool,
    "datetime": datetime,
    "object": dict,
    "array": list,
}
NUMERIC_TYPES: frozenset[type] = frozenset({float, int})
#: The container types: ``object`` (``dict``, with ``fields``) and ``array`` (``list``,
#: with ``items``).
NESTED_TYPES: frozenset[type] = frozenset({dict, list})
#: Containers nest at most this deep (a top-level field is at depth 1, its ``fields`` or
#: ``items`` at depth 2, ...): records are never walked deeper than their contract.
MAX_NESTING_DEPTH = 8
#: ``max_items`` of an array that declares none, and the largest ``max_items`` allowed.
DEFAULT_MAX_ITEMS = 10_000
MAX_ITEMS_LIMIT = 1_000_000


def type_name(expected_type: object) -> str:
    """The contract-file name of a supported type, else a readable repr."""
    for name, tp in SUPPORTED_TYPES.items():
        if expected_type is tp:
            return name
    return getattr(expected_type, "__name__", repr(expected_type))


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One field of a record: a scalar, an object (``dict``) or an array (``list``).

    ``min_value``/``max_value`` are inclusive and apply to numeric fields only.
    ``allow_non_finite`` lets NaN/±Inf through a float field (NaN then skips the
    bounds, ±Inf is compared like any number).

    Datetime fields only: ``require_timezone`` rejects a value without a UTC offset
    (``Z`` or ``±HH:MM``); ``max_future_s``/``max_age_s`` bound the value against the
    time of validation (when the caller gives one; a naive value is read as UTC).

    ``allowed`` (str and int fields): the only values accepted, compared exactly (a list is
    stored as a tuple). Str fields only: ``pattern`` must match the whole value (the syntax
    of ``contracts.pattern``); ``min_length``/``max_length`` count Unicode code points,
    inclusive.

    ``action``: what a broken check of this field does (``RuleAction``): ``quarantine``
    (the default), or ``flag``: the record flows to the clean topic when its only
    violations are flagged ones, and the breach is counted (docs/contracts/format.md,
    "Flagged fields").

    ``dict`` fields only: ``fields``, the object's own FieldSpecs (a list is stored as a
    tuple), checked like the record's, by path (``book.bid``). ``list`` fields only:
    ``items``, the spec every item must match (a scalar with its checks, or a ``dict``
    spec; its ``name`` is not used, the path is ``levels[3]``), and ``min_items`` /
    ``max_items``, inclusive (``max_items`` None: ``DEFAULT_MAX_ITEMS``). Example::

        FieldSpec("levels", list, max_items=50,
                  items=FieldSpec("level", dict, fields=[FieldSpec("price", float)]))
    """

    name: str
    expected_type: type
    is_nullable: bool = False
    min_value: float | int | None = None
    max_value: float | int | None = None
    allow_non_finite: bool = False
    require_timezone: bool = False
    max_future_s: float | int | None = None
    max_age_s: float | int | None = None
    allowed: tuple[str | int, ...] | None = None
    pattern: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    fields: tuple[FieldSpec, ...] | None = None
    items: FieldSpec | None = None
    min_items: int | None = None
    max_items: int | None = None
    action: RuleAction = RuleAction.QUARANTINE

    def __post_init__(self) -> None:
        for name in ("allowed", "fields"):
            value: object = getattr(self, name)
            if isinstance(value, Iterable) and not isinstance(value, tuple | str | bytes):
                object.__setattr__(self, name, tuple(value))
        action: object = self.action
        if isinstance(action, str) and action in RuleAction.__members__.values():
            object.__setattr__(self, "action", RuleAction(action))  # "flag" is accepted too

    @property
    def is_nested(self) -> bool:
        """True for an object or array field."""
        return self.expected_type in NESTED_TYPES

    @property
    def item_limit(self) -> int:
        """The most items an array field accepts (``max_items`` or ``DEFAULT_MAX_ITEMS``)."""
        return DEFAULT_MAX_ITEMS if self.max_items is None else self.max_items

    @property
    def has_text_checks(self) -> bool:
        """True when the value is checked beyond its type and bounds (allowed, pattern,
        lengths)."""
        return (
            self.allowed is not None
            or self.pattern is not None
            or self.min_length is not None
            or self.max_length is not None
        )

    @property
    def has_skew_window(self) -> bool:
        """True when the value is bounded against the time of validation."""
        return self.max_future_s is not None or self.max_age_s is not None


@dataclass(frozen=True, slots=True)
class SchemaContract:
    """A named, versioned set of FieldSpecs plus the batch-level policies.

    ``max_allowed_null_pct`` is a percentage on a 0-100 scale applied per nullable
    field over a batch; ``forbid_unknown_fields`` quarantines records carrying
    undeclared fields instead of only reporting them as drift (keys of nested objects beyond
    their ``fields`` included). ``rules`` are the
    record rules (``RuleSpec``), checked on records whose fields passed their own checks.
    ``state`` is the per-symbol state (``SymbolStateSpec``: sequence, event time, frozen
    quotes) the streaming service keeps per partition; None: no state is kept.
    """

    name: str
    fields: tuple[FieldSpec, ...]
    max_allowed_null_pct: float = 1.0
    forbid_unknown_fields: bool = False
    version: str = "1"
    description: str = field(default="", compare=False)
    rules: tuple[RuleSpec, ...] = ()
    state: SymbolStateSpec | None = None

    def __post_init__(self) -> None:
        # Accept any iterable (lists are the natural literal) but store a tuple so
        # the contract stays immutable after the verifier has checked it.
        for name in ("fields", "rules"):
            value: object = getattr(self, name)
            if isinstance(value, Iterable) and not isinstance(value, tuple | str | bytes):
                object.__setattr__(self, name, tuple(value))

    @property
    def field_names(self) -> tuple[str, ...]:
        """Declared top-level field names in declaration order."""
        return tuple(spec.name for spec in self.fields)

    @property
    def has_nested_fields(self) -> bool:
        """True when a field is an object or an array."""
        return any(spec.is_nested for spec in self.fields)


_INDEX: Final = re.compile(r"\[\d+\]")


def metric_path(path: str) -> str:
    """A violation's path without its indexes, as metrics label it: ``levels[3].price`` ->
    ``levels[].price`` (a closed set: one per declared path)."""
    return _INDEX.sub("[]", path) if "[" in path else path


def item_path(path: str) -> str:
    """The metric path of an array's items: ``levels`` -> ``levels[]``."""
    return path + "[]"


def child_path(path: str, name: str) -> str:
    """The path of an object's field: ``book`` + ``bid`` -> ``book.bid``."""
    return f"{path}.{name}"


def field_paths(specs: Iterable[FieldSpec], prefix: str = "") -> list[tuple[str, FieldSpec]]:
    """Every declared field by its metric path, depth first in declaration order.

    The metric path never holds an index: an array's items are ``levels[]``, their fields
    ``levels[].price``, an object's fields ``book.bid``. Null rates, drift and the null
    ceiling use these paths, so their labels stay a closed set.
    """
    out: list[tuple[str, FieldSpec]] = []
    for spec in specs:
        path = child_path(prefix, spec.name) if prefix else spec.name
        out.append((path, spec))
        out.extend(_inner_paths(spec, path))
    return out


def _inner_paths(spec: FieldSpec, path: str) -> list[tuple[str, FieldSpec]]:
    if spec.expected_type is dict and spec.fields:
        return field_paths(spec.fields, path)
    if spec.expected_type is list and spec.items is not None:
        inner = item_path(path)
        return [(inner, spec.items), *_inner_paths(spec.items, inner)]
    return []


def nested_paths(contract: SchemaContract) -> list[tuple[str, FieldSpec]]:
    """The fields below the top level, by metric path (see ``field_paths``)."""
    return [inner for spec in contract.fields for inner in _inner_paths(spec, spec.name)]


def nullable_paths(contract: SchemaContract) -> list[str]:
    """The metric paths of the nullable fields: the top-level ones, then the nested ones."""
    paths = [spec.name for spec in contract.fields if spec.is_nullable]
    return paths + [path for path, spec in nested_paths(contract) if spec.is_nullable]


def rule_field_types(contract: SchemaContract) -> dict[str, type]:
    """The fields a rule may read, by path, with their types: the top-level fields and the
    fields of objects (``book.bid``), never through an array (rules cannot index arrays)."""
    types = {spec.name: spec.expected_type for spec in contract.fields}
    for path, spec in nested_paths(contract):
        if "[]" not in path:
            types[path] = spec.expected_type
    return types
