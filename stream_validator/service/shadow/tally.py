"""What a route's shadow contract judged differently, summed over delivered batches.

Two tallies per route: one since the shadow contract was loaded (``/status``), one since the
last periodic event. Each keeps counts (records compared, rescued, newly quarantined), the
violations of the differing records by difference, kind and field, the null-ceiling changes,
and the last ``MAX_EXAMPLES`` records of each difference as topic/partition/offset (never a
key or a value). Payload-derived names (undeclared fields) are bounded as in batch events.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Sequence
from typing import Any, Final

from stream_validator.labels import RECORD_LABEL, bounded_counts
from stream_validator.records import OutputRecord
from stream_validator.service.plan.shadowdiff import CEILING_CHANGES, DIFFERENCES, ShadowDiff

#: Example records kept per difference (the latest).
MAX_EXAMPLES: Final = 5


class ShadowTally:
    """Differences of one route's shadow over some delivered batches."""

    def __init__(self) -> None:
        self.records = 0
        self.counts: Counter[str] = Counter()
        self.violations: Counter[tuple[str, str | None, str]] = Counter()
        self.ceiling: Counter[tuple[str, str]] = Counter()
        self.examples: dict[str, deque[dict[str, object]]] = {
            d: deque(maxlen=MAX_EXAMPLES) for d in DIFFERENCES
        }

    @property
    def differs(self) -> bool:
        """True when a record's verdict or a null-ceiling breach differed."""
        return bool(self.counts or self.ceiling)

    def add(self, diff: ShadowDiff, outputs: Sequence[OutputRecord]) -> None:
        """One delivered batch: its diff and its outputs (for the source coordinates)."""
        self.records += diff.records
        if not diff.differs:
            return
        for difference, indices in (
            ("rescued", diff.rescued),
            ("newly_quarantined", diff.newly_quarantined),
        ):
            if not indices:
                continue
            self.counts[difference] += len(indices)
            examples = self.examples[difference]
            for index in indices[-MAX_EXAMPLES:]:
                source = outputs[index].source
                examples.append(
                    {"topic": source.topic, "partition": source.partition, "offset": source.offset}
                )
        self.violations.update(diff.violations)
        self.ceiling.update(diff.ceiling.items())

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: counts, violations by difference -> kind -> field (bounded), the
        null-ceiling changes by change -> field, and the examples."""
        violations: dict[str, dict[str, dict[str, int]]] = {}
        left_out = 0
        for difference in DIFFERENCES:
            by_kind: dict[str, Counter[str]] = {}
            for (diff, name, kind), n in self.violations.items():
                if diff == difference:
                    by_kind.setdefault(kind, Counter())[name or RECORD_LABEL] += n
            kinds = {}
            for kind, fields in sorted(by_kind.items()):
                kinds[kind], cut = bounded_counts(fields)
                left_out += cut
            violations[difference] = kinds
        ceiling = {
            change: dict(
                bounded_counts({f: n for (f, c), n in self.ceiling.items() if c == change})[0]
            )
            for change in CEILING_CHANGES
        }
        return {
            "records": self.records,
            "rescued": self.counts["rescued"],
            "newly_quarantined": self.counts["newly_quarantined"],
            "unchanged": self.records - self.counts.total(),
            "violations": violations,
            "violations_left_out": left_out,
            "null_ceiling_changes": ceiling,
            "examples": {d: list(e) for d, e in self.examples.items()},
        }
