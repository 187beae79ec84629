"""Which parts of the per-symbol state a quarantined record may still feed. PURE."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from stream_validator.contracts.statespec import SymbolStateSpec
from stream_validator.verify.report import Violation

__all__ = ["TRUSTED", "UNFED", "distrusted"]

#: What a record feeds the state in full (``SymbolStateTracker.observe_record``'s ``distrust``).
TRUSTED: Final[frozenset[str]] = frozenset()
#: A record that feeds the state nothing (``distrusted``).
UNFED: Final[frozenset[str]] = frozenset({"key"})


def distrusted(spec: SymbolStateSpec, violations: Iterable[Violation]) -> frozenset[str]:
    """The parts of the state a quarantined record with these violations cannot feed.

    Each of the spec's fields is used only when it passed its own checks (declared type,
    bounds, not null, skew window), whatever the record's other fields did: a record
    quarantined for its ``size`` still carries the feed's next sequence number, and leaving
    it out would report a gap the vendor never made. So: ``"key"`` (nothing is fed) for a
    record-level problem (undecodable, not a mapping, oversized, a validator error) or a
    failed key field; else ``"seq"``, ``"time"`` for a failed sequence or event-time
    field, and ``"quote"`` when any quote field failed (the frozen-quote detector compares
    whole quotes). Record rules read only fields that passed: a rule violation distrusts
    nothing. Empty (``TRUSTED``): the record feeds the state in full.
    """
    out: set[str] = set()
    for violation in violations:
        name = violation.field
        if name is None:
            if violation.kind != "rule_violation":
                return UNFED
            continue
        # a nested path (``levels[3].price``) fails its top-level field
        head = name.split(".", 1)[0].split("[", 1)[0]
        if head == spec.key_field:
            return UNFED
        if head == spec.sequence_field:
            out.add("seq")
        if head == spec.event_time_field:
            out.add("time")
        if head in spec.quote_fields:
            out.add("quote")
    return frozenset(out) if out else TRUSTED
