"""How many sampled records a contract change would flip. PURE (payloads in, counts out).

Each chunk of the sample is validated against the old and the new contract (the bytes path,
as the service does; no clock, so skew windows are not applied, and no per-symbol state).
A record that passes the old and is quarantined by the new is *newly quarantined*, the
reverse *newly passing*; each is put down to every change that explains one of the
violations making the difference (``Change.explains``: the new contract's violations for a
newly quarantined record, the old one's for a newly passing one), or counted as
unattributed. Null rates are summed over the whole sample and held against both ceilings.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from stream_validator.contracts.model import SchemaContract
from stream_validator.lifecycle.change import Change, Effect
from stream_validator.verify import DataSchemaContractVerifier, QuarantinedRecord

#: First line numbers kept per change.
MAX_EXAMPLES = 3


@dataclass(slots=True)
class Flips:
    """The totals: ``by_change[i]`` and ``examples[i]`` belong to ``changes[i]``."""

    records: int = 0
    newly_quarantined: int = 0
    newly_passing: int = 0
    unattributed: int = 0
    by_change: Counter[int] = field(default_factory=Counter)
    examples: dict[int, list[int]] = field(default_factory=dict)
    nulls_old: Counter[str] = field(default_factory=Counter)
    nulls_new: Counter[str] = field(default_factory=Counter)
    valid_old: int = 0
    valid_new: int = 0

    def null_breaches(self, contract: SchemaContract, new: bool) -> dict[str, float]:
        """Null rates (percent of the valid records) over the ceiling of ``contract``."""
        nulls, valid = (self.nulls_new, self.valid_new) if new else (self.nulls_old, self.valid_old)
        ceiling = contract.max_allowed_null_pct
        rates = {path: n * 100 / valid for path, n in nulls.items() if valid and n}
        return {path: rate for path, rate in rates.items() if rate > ceiling}

    def as_dict(self, old: SchemaContract, new: SchemaContract) -> dict[str, Any]:
        """JSON-ready totals (per-change counts go with each change)."""
        return {
            "records": self.records,
            "newly_quarantined": self.newly_quarantined,
            "newly_passing": self.newly_passing,
            "unattributed": self.unattributed,
            "null_ceiling_breaches": {
                "old": self.null_breaches(old, False),
                "new": self.null_breaches(new, True),
            },
        }


class FlipCounter:
    """Validates chunks of a sample against both contracts and counts the flips."""

    def __init__(
        self,
        old: SchemaContract,
        new: SchemaContract,
        changes: Sequence[Change],
        max_payload_bytes: int,
    ) -> None:
        self._old = DataSchemaContractVerifier(old, max_payload_bytes)
        self._new = DataSchemaContractVerifier(new, max_payload_bytes)
        self._changes = list(changes)
        self.flips = Flips()

    def add(self, payloads: list[bytes | None], numbers: Sequence[int]) -> None:
        """One chunk; ``numbers``: each payload's line (or sample position) number."""
        flips = self.flips
        flips.records += len(payloads)
        old = self._old.validate_payloads(payloads)
        new = self._new.validate_payloads(payloads)
        flips.valid_old += old.valid_count
        flips.valid_new += new.valid_count
        flips.nulls_old.update(old.null_counts)
        flips.nulls_new.update(new.null_counts)
        failed_old = {q.index: q for q in old.quarantined_records}
        failed_new = {q.index: q for q in new.quarantined_records}
        for index, record in failed_new.items():
            if index not in failed_old:
                flips.newly_quarantined += 1
                self._attribute(record, Effect.TIGHTENING, numbers[index])
        for index, record in failed_old.items():
            if index not in failed_new:
                flips.newly_passing += 1
                self._attribute(record, Effect.LOOSENING, numbers[index])

    def _attribute(self, record: QuarantinedRecord, effect: Effect, number: int) -> None:
        causes = {
            i
            for i, change in enumerate(self._changes)
            if change.effect is effect
            for violation in record.violations
            if not violation.flagged and change.explains(violation)
        }
        if not causes:
            self.flips.unattributed += 1
        for i in causes:
            self.flips.by_change[i] += 1
            examples = self.flips.examples.setdefault(i, [])
            if len(examples) < MAX_EXAMPLES:
                examples.append(number)
