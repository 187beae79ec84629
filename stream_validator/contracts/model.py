"""FieldSpec and SchemaContract: the declared structure records must match.

Both are frozen value objects. They are checked for consistency by
``check_contract`` (called by DataSchemaContractVerifier and the file loader),
so a malformed contract fails at setup instead of silently passing records.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from stream_validator.contracts.rulespec import RuleAction, RuleSpec
from stream_validator.contracts.statespec import SymbolStateSpec

#: The Python types a field may declare, keyed by the name contract files use.
SUPPORTED_TYPES: dict[str, type] = {
    "float": float,
    "int": int,
    "str": str,
    "bool": bool,
    "datetime": datetime,
}
NUMERIC_TYPES: frozenset[type] = frozenset({float, int})


def type_name(expected_type: object) -> str:
    """The contract-file name of a supported type, else a readable repr."""
    for name, tp in SUPPORTED_TYPES.items():
        if expected_type is tp:
            return name
    return getattr(expected_type, "__name__", repr(expected_type))


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One flat, top-level field of a record.

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
    violations are flagged ones, and the breach is counted (README, "Contract files").
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
    action: RuleAction = RuleAction.QUARANTINE

    def __post_init__(self) -> None:
        value: object = self.allowed
        if isinstance(value, Iterable) and not isinstance(value, tuple | str | bytes):
            object.__setattr__(self, "allowed", tuple(value))
        action: object = self.action
        if isinstance(action, str) and action in RuleAction.__members__.values():
            object.__setattr__(self, "action", RuleAction(action))  # "flag" is accepted too

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
    undeclared fields instead of only reporting them as drift. ``rules`` are the
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
        """Declared field names in declaration order."""
        return tuple(spec.name for spec in self.fields)
