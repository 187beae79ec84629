"""Value types the verifier returns: Violation, QuarantinedRecord, the batch report."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, Final, overload

from stream_validator.codec import loads_raw
from stream_validator.verify.kept import listed
from stream_validator.verify.quickinit import quick_init

#: Per record, the undeclared (``unknown_field``) and repeated (``duplicate_key``) keys
#: listed one violation each; past it, one last violation of the kind (field None)
#: counts the rest: "and N more undeclared fields". Keeps a record's violations, its DLQ
#: entry and the batch's violation counts bounded however many keys a payload holds.
MAX_NAMED_VIOLATIONS: Final = 50
#: Per batch, the distinct undeclared field names a report keeps
#: (``observed_unknown_fields``), the first seen; the rest are counted in
#: ``unknown_fields_left_out``.
MAX_UNKNOWN_NAMES: Final = 1000
#: Characters kept of a payload-derived key name in a violation or a report; a longer
#: name is cut and ends in "...".
MAX_KEY_CHARS: Final = 256


class ViolationKind(StrEnum):
    """Stable violation codes; DLQ consumers and metric labels depend on them."""

    NOT_A_MAPPING = "not_a_mapping"
    MISSING_FIELD = "missing_field"
    NULL_VALUE = "null_value"
    TYPE_MISMATCH = "type_mismatch"
    NON_FINITE = "non_finite"
    BELOW_MIN = "below_min"
    ABOVE_MAX = "above_max"
    UNKNOWN_FIELD = "unknown_field"
    UNDECODABLE = "undecodable"
    OVERSIZED = "oversized"
    #: The same key appears twice in one JSON object: parsers disagree on which wins.
    DUPLICATE_KEY = "duplicate_key"
    #: Checking the record raised unexpectedly; the record is quarantined, not the batch.
    VALIDATOR_ERROR = "validator_error"
    #: A str or int field's value is not in its ``allowed`` list.
    NOT_ALLOWED = "not_allowed"
    #: A str field's value does not match its ``pattern`` as a whole.
    PATTERN_MISMATCH = "pattern_mismatch"
    #: A str field's value has fewer code points than ``min_length`` / more than ``max_length``.
    TOO_SHORT = "too_short"
    TOO_LONG = "too_long"
    #: An array field has fewer items than ``min_items`` / more than its ``max_items``
    #: (a wrong container type is a ``type_mismatch``).
    TOO_FEW_ITEMS = "too_few_items"
    TOO_MANY_ITEMS = "too_many_items"
    #: A record rule with action ``quarantine`` does not hold; ``rule`` names it.
    RULE_VIOLATION = "rule_violation"
    #: A datetime field is outside its skew window (``max_future_s``/``max_age_s``)
    #: around the time of validation.
    TIMESTAMP_OUT_OF_RANGE = "timestamp_out_of_range"
    #: Set by the streaming service when a route quarantines a whole batch on a
    #: null-ceiling breach; the verifier itself never emits it.
    NULL_CEILING_BREACH = "null_ceiling_breach"
    #: Set by the streaming service when the broker refused a record for good (too large
    #: for the topic, invalid timestamp, invalid record); the verifier itself never emits it.
    DELIVERY_REJECTED = "delivery_rejected"
    #: Set by the streaming service when a contract's ``state`` quarantines a record
    #: (action ``quarantine``): the symbol's sequence skipped numbers, stepped back, or its
    #: event time went back beyond the tolerance. The verifier itself never emits them.
    SEQUENCE_GAP = "sequence_gap"
    SEQUENCE_REGRESSION = "sequence_regression"
    EVENT_TIME_REGRESSION = "event_time_regression"


#: The kinds a field with ``action: flag`` flags (every check of the field, its skew window
#: included); the others (undecodable, oversized, not a mapping, a duplicate or unknown key,
#: a validator error) are about the whole record and always quarantine it.
FLAGGABLE_KINDS: Final = frozenset(
    str(kind)
    for kind in (
        ViolationKind.MISSING_FIELD,
        ViolationKind.NULL_VALUE,
        ViolationKind.TYPE_MISMATCH,
        ViolationKind.NON_FINITE,
        ViolationKind.BELOW_MIN,
        ViolationKind.ABOVE_MAX,
        ViolationKind.NOT_ALLOWED,
        ViolationKind.PATTERN_MISMATCH,
        ViolationKind.TOO_SHORT,
        ViolationKind.TOO_LONG,
        ViolationKind.TOO_FEW_ITEMS,
        ViolationKind.TOO_MANY_ITEMS,
        ViolationKind.TIMESTAMP_OUT_OF_RANGE,
    )
)


@quick_init  # built once per bad record
@dataclass(frozen=True, slots=True)
class Violation:
    """One broken check: which field (None for record-level problems), a stable kind, a
    message, and for ``rule_violation`` the contract's name of the rule. ``flagged``: the
    check has action ``flag`` (listed on a record quarantined for its other violations;
    alone it would have let the record flow); such a violation is a ``FlaggedViolation``."""

    field: str | None
    kind: str
    message: str
    rule: str | None = None
    # A class attribute, not a slot: a bad record's violations are built without setting it.
    flagged: ClassVar[bool] = False

    def as_dict(self) -> dict[str, str | None]:
        """The JSON-ready form used in DLQ entries (``rule`` only when set, ``action``:
        ``"flag"`` only on a flagged violation)."""
        out = {"field": self.field, "kind": str(self.kind), "message": self.message}
        if self.rule is not None:
            out["rule"] = self.rule
        if self.flagged:
            out["action"] = "flag"
        return out

    def as_flagged(self) -> FlaggedViolation:
        """The same violation, marked as one of a check with action ``flag``."""
        return FlaggedViolation(self.field, self.kind, self.message, self.rule)


@quick_init
@dataclass(frozen=True, slots=True)
class FlaggedViolation(Violation):
    """A violation of a check with action ``flag`` (``flagged`` is True), listed on a record
    quarantined for its other violations. Never equal to a plain ``Violation``."""

    flagged: ClassVar[bool] = True

    def as_flagged(self) -> FlaggedViolation:
        """This violation: it is marked already."""
        return self


@quick_init  # built once per bad record
@dataclass(frozen=True, slots=True)
class QuarantinedRecord:
    """A record that failed validation, with every violation it has.

    ``raw_payload`` is a shallow snapshot taken at validation time (the original
    bytes on the bytes path), so later mutation of the caller's record cannot
    rewrite the DLQ evidence.
    """

    index: int
    raw_payload: Any
    violations: list[Violation]

    @property
    def violation_reason(self) -> str:
        """Every violation message, joined by '; '."""
        return "; ".join(v.message for v in self.violations)

    @property
    def kinds(self) -> list[str]:
        """The violation kinds, in order."""
        return [str(v.kind) for v in self.violations]


class DecodedRecords(Sequence[Any]):
    """Valid records of a payload batch, decoded on access (the fast path builds no dicts).

    Items are the original payload bytes, decoded with the verifier's decoder each time
    one is read; records given already decoded are returned as they are.
    """

    __slots__ = ("_items", "_len", "_parts")

    def __init__(
        self,
        items: list[Any] | None = None,
        parts: tuple[list[Sequence[Any]], list[int], list[int]] | None = None,
    ) -> None:
        # Given as ``parts`` (seqs, los, his): the items seqs[i][los[i]:his[i]] in order,
        # listed in one list on first read (a payload batch keeps its valid records as runs
        # of its own list of the payloads: ``verify.kept``).
        if items is None and parts is None:
            items = []
        self._items = items
        self._parts = parts
        self._len = len(items) if items is not None else sum(parts[2]) - sum(parts[1])  # type: ignore[index]

    @property
    def _listed(self) -> list[Any]:
        items = self._items
        if items is None:
            seqs, los, his = self._parts or ([], [], [])
            if len(seqs) == 1 and los[0] == 0 and his[0] == len(seqs[0]) and type(seqs[0]) is list:
                items = seqs[0]  # the batch's own list, all of it valid
            else:
                items = listed(seqs, los, his)
            self._items = items
            self._parts = None
        return items

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return [_decoded(item) for item in self._listed[index]]
        return _decoded(self._listed[index])

    def __iter__(self) -> Iterator[Any]:
        return map(_decoded, self._listed)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"DecodedRecords({self._len} records)"


def _decoded(item: Any) -> Any:
    return loads_raw(item) if type(item) is bytes else item


@dataclass(frozen=True, slots=True)
class SchemaContractValidationReport:
    """The outcome of validating one batch against one contract.

    ``null_rates`` holds the null percentage (0-100) of every nullable field over the
    records that survived per-record validation; ``null_breach_fields`` only the
    fields whose rate is above the contract's ``max_allowed_null_pct``.
    ``valid_indices[i]`` is the batch position of ``valid_records[i]``, which lets a
    caller of ``validate_payloads`` forward the original bytes unchanged; a read-only
    sequence of ints (``verify.kept.Positions``, runs of positions: no int object per
    record) that compares equal to a list of the same ints.
    ``flagged_counts`` counts, per rule with action ``flag``, the valid records that
    broke it (they are in ``valid_records``; a quarantined record is not counted there);
    ``flagged_field_counts`` the same per (field, kind) of a field with action ``flag``,
    and ``flagged_records`` the valid records with at least one flagged breach.
    ``violation_counts`` (and ``rule_violation_counts``, per rule name) count the
    violations that quarantined records, never the flagged ones a DLQ entry also lists.
    ``nan_counts``/``inf_counts`` count the valid records holding NaN / ±Inf, per float
    field with ``allow_non_finite`` (the only fields where they pass; other fields have no
    entry). Only decoded records can hold them: the JSON decoder refuses NaN and ±Inf, so
    on the bytes path (``validate_payloads``, Kafka) they are always 0.
    ``observed_unknown_fields`` holds at most ``MAX_UNKNOWN_NAMES`` names (each cut to
    ``MAX_KEY_CHARS``), the first seen; ``unknown_fields_left_out`` counts the undeclared
    keys whose names it does not hold, once per record carrying them.
    """

    contract_name: str
    contract_version: str
    max_allowed_null_pct: float
    total_records: int
    valid_records: Sequence[Any]
    valid_indices: Sequence[int]
    quarantined_records: list[QuarantinedRecord]
    null_rates: dict[str, float]
    null_breach_fields: dict[str, float]
    observed_unknown_fields: set[str]
    violation_counts: Counter[tuple[str | None, str]] = field(default_factory=Counter)
    null_counts: dict[str, int] = field(default_factory=dict)
    valid_count: int = -1
    quarantined_count: int = -1
    flagged_counts: Counter[str] = field(default_factory=Counter)
    nan_counts: dict[str, int] = field(default_factory=dict)
    inf_counts: dict[str, int] = field(default_factory=dict)
    unknown_fields_left_out: int = 0
    flagged_field_counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    flagged_records: int = 0
    rule_violation_counts: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        # Counts default to the list lengths; the streaming CLI keeps counts only.
        if self.valid_count < 0:
            object.__setattr__(self, "valid_count", len(self.valid_records))
        if self.quarantined_count < 0:
            object.__setattr__(self, "quarantined_count", len(self.quarantined_records))

    @property
    def drift_detected(self) -> bool:
        """True when any undeclared field was seen anywhere in the batch."""
        return bool(self.observed_unknown_fields) or self.unknown_fields_left_out > 0

    @property
    def is_batch_valid(self) -> bool:
        """True only when nothing was quarantined and no null ceiling was breached."""
        return self.quarantined_count == 0 and not self.null_breach_fields

    @property
    def nan_rates(self) -> dict[str, float]:
        """NaN % (0-100) of the valid records, per field in ``nan_counts``."""
        return _rates(self.nan_counts, self.valid_count)

    @property
    def inf_rates(self) -> dict[str, float]:
        """±Inf % (0-100) of the valid records, per field in ``inf_counts``."""
        return _rates(self.inf_counts, self.valid_count)

    def counts_by_kind(self) -> dict[str, int]:
        """Violations per kind, over the whole batch."""
        out: Counter[str] = Counter()
        for (_, kind), n in self.violation_counts.items():
            out[kind] += n
        return dict(out)

    def counts_by_field(self) -> dict[str, int]:
        """Violations per field name ('<record>' for record-level problems)."""
        out: Counter[str] = Counter()
        for (name, _), n in self.violation_counts.items():
            out[name if name is not None else "<record>"] += n
        return dict(out)

    def flagged_by_field(self) -> dict[str, dict[str, int]]:
        """Flagged breaches on valid records, per field of action ``flag``, then per kind."""
        out: dict[str, dict[str, int]] = {}
        for (name, kind), n in sorted(self.flagged_field_counts.items()):
            out.setdefault(name, {})[kind] = n
        return out

    def summary(self) -> Mapping[str, object]:
        """A JSON-ready digest (no payloads) for logs and the CLI."""
        return {
            "contract": self.contract_name,
            "contract_version": self.contract_version,
            "total_records": self.total_records,
            "valid": self.valid_count,
            "quarantined": self.quarantined_count,
            "violations_by_kind": self.counts_by_kind(),
            "violations_by_field": self.counts_by_field(),
            "flagged": self.flagged_records,
            "flagged_by_rule": dict(self.flagged_counts),
            "flagged_by_field": self.flagged_by_field(),
            "null_rates": self.null_rates,
            "null_breach_fields": self.null_breach_fields,
            "nan_rates": self.nan_rates,
            "inf_rates": self.inf_rates,
            "max_allowed_null_pct": self.max_allowed_null_pct,
            "observed_unknown_fields": sorted(self.observed_unknown_fields),
            "observed_unknown_fields_left_out": self.unknown_fields_left_out,
            "drift_detected": self.drift_detected,
            "is_batch_valid": self.is_batch_valid,
        }


def _rates(counts: Mapping[str, int], survivors: int) -> dict[str, float]:
    return {name: n * 100.0 / survivors if survivors else 0.0 for name, n in counts.items()}
