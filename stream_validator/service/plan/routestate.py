"""PURE: a route's per-symbol state (``stream_validator.state``) applied to one planned batch.

Which records the tracker sees, in source order: the valid ones, and the quarantined ones
whose key field passed its own checks, each state field used only when it passed its own
(``state.distrusted``): a record quarantined for a bad ``size``, or a crossed book,
still carries the feed's next sequence number, and leaving it out would report a gap the
vendor never made. A record-level problem (undecodable, not a mapping, oversized) feeds
nothing. The state so describes the feed as sent; the clean topic's own holes are the
records sent to the DLQ, counted there, not state events.

What an event does follows the contract's ``state`` actions: ``flag`` (the default) only
counts and reports it; ``quarantine`` sends the record to the DLQ with the event kind as
its violation (``sequence_gap``, ``sequence_regression``, ``event_time_regression``), unless
it is headed there already. ``frozen_quote`` is an alert event, never a quarantine.

State is keyed by (topic, partition) and symbol. The service drops a partition's state when
the partition is revoked or lost and when it rewinds the partition after a failed batch, so
the first record after an assignment or a rewind starts fresh: replayed records are never
taken for regressions.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Final

from stream_validator.contracts.model import SchemaContract
from stream_validator.contracts.rulespec import RuleAction
from stream_validator.contracts.statespec import SymbolStateSpec
from stream_validator.records import SourceRecord, TopicPartitionKey
from stream_validator.state import (
    EventTally,
    StateFeed,
    SymbolEventKind,
    SymbolStateTracker,
    distrusted,
)
from stream_validator.state.native import symbol_state_tracker
from stream_validator.verify import SchemaContractValidationReport, Violation, ViolationKind

#: Example symbols per event kind in a batch event (each cut to 32 characters).
MAX_EXAMPLES: Final = 5
_VALUE, _TOPIC_PARTITION = attrgetter("value"), attrgetter("topic", "partition")


@dataclass(frozen=True, slots=True)
class StateSummary:
    """What the state saw in one batch: events per kind (with capped example symbols),
    the LRU evictions it made, and the symbols held after it (all partitions)."""

    events: dict[str, dict[str, object]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    evictions: int = 0
    symbols: int = 0
    quarantined: int = 0

    def as_event(self) -> dict[str, object]:
        """JSON-ready, for the batch event."""
        return {
            "events": self.events,
            "evictions": self.evictions,
            "symbols": self.symbols,
            "quarantined": self.quarantined,
        }


class RouteState:
    """One route's tracker and the actions of its contract's ``state`` section."""

    __slots__ = ("_feed", "_fields", "_quarantine", "rows", "spec", "tracker")

    def __init__(
        self,
        spec: SymbolStateSpec,
        field_types: Mapping[str, type],
        field_getter: Callable[..., Callable[[Any], Any] | None] | None = None,
        *,
        native: bool = True,
        tracker: SymbolStateTracker | None = None,
        state_rows: Callable[..., Any] | None = None,
    ) -> None:
        """``field_getter``: the verifier's (see ``StateFeed``); ``tracker``: one to carry
        on (a reloaded contract whose state is ``unchanged_state``), else a fresh one:
        ``native``, the tracker in the native core (``state.native``; same events), else
        the Python reference. ``state_rows``: the verifier's; with a native tracker,
        ``rows`` is then the ``StateRows`` to hand ``validate_payloads`` (None: none)."""
        self.spec = spec
        self.tracker = tracker if tracker is not None else symbol_state_tracker(spec, native)
        self._feed = StateFeed(self.tracker, field_types, field_getter)
        self.rows: Any = None
        if state_rows is not None and hasattr(self.tracker, "observe_scanned"):
            frozen = spec.frozen_max_updates is not None or spec.frozen_max_s is not None
            quotes = spec.quote_fields if frozen else ()
            self.rows = state_rows(
                spec.key_field, spec.sequence_field, spec.event_time_field, quotes
            )
        quarantine: set[SymbolEventKind] = set()
        if spec.sequence_action is RuleAction.QUARANTINE:
            quarantine |= {SymbolEventKind.SEQUENCE_GAP, SymbolEventKind.SEQUENCE_REGRESSION}
        if spec.event_time_action is RuleAction.QUARANTINE:
            quarantine.add(SymbolEventKind.EVENT_TIME_REGRESSION)
        self._quarantine = frozenset(quarantine)
        self._fields = {
            SymbolEventKind.SEQUENCE_GAP: spec.sequence_field,
            SymbolEventKind.SEQUENCE_REGRESSION: spec.sequence_field,
            SymbolEventKind.EVENT_TIME_REGRESSION: spec.event_time_field,
        }

    def apply(
        self,
        records: Sequence[SourceRecord],
        report: SchemaContractValidationReport,
        dlq_violations: dict[int, list[Violation]],
        added: Counter[tuple[str | None, str]],
        decoded: Sequence[Any] | None = None,
        rows: Any = None,
    ) -> StateSummary:
        """Feed the batch to the tracker; quarantine per the actions (into ``dlq_violations``
        and ``added``, records not headed for the DLQ yet only). ``decoded``: what
        ``validate_payloads`` decoded of each record (its ``decoded``), or None; ``rows``:
        the ``StateRows`` (``self.rows``) it filled, one per record, or None."""
        tracker = self.tracker
        evictions = tracker.evictions
        tally = EventTally(MAX_EXAMPLES)
        moved = 0
        indices, values, partitions, distrust = _fed(records, report, self.spec)
        if rows is not None and len(rows) == len(records):
            found = self._feed.observe_scanned(partitions, values, indices, rows, distrust)
        else:
            structs = list(map(decoded.__getitem__, indices)) if decoded is not None else None
            found = self._feed.observe_many(partitions, values, structs, distrust)
        for position, events in found:
            index = indices[position]
            tally.add(events)
            if index in dlq_violations or not self._quarantine:
                continue
            violations = [
                Violation(self._fields.get(event.kind), ViolationKind(event.kind), event.detail)
                for event in events
                if event.kind in self._quarantine
            ]
            if violations:
                dlq_violations[index] = violations
                moved += 1
                added.update((v.field, str(v.kind)) for v in violations)
        counts = {str(kind): n for kind, n in tally.counts.items()}
        evicted = tracker.evictions - evictions
        return StateSummary(tally.summary(), counts, evicted, len(tracker), moved)

    def drop(self, keys: Iterable[TopicPartitionKey]) -> int:
        """Forget partitions' state (revoked, lost or rewound); the symbols dropped."""
        return sum(self.tracker.drop(key) for key in keys)


def unchanged_state(old: SchemaContract, new: SchemaContract) -> bool:
    """True when a tracker built for ``old`` can go on under ``new``: the same ``state``
    section, and the fields it reads declared with the same types (the tracker holds their
    values)."""
    if old.state is None or old.state != new.state:
        return False
    spec = old.state
    names = {spec.key_field, spec.sequence_field, spec.event_time_field, *spec.quote_fields}
    names.discard(None)
    before = {f.name: f.expected_type for f in old.fields if f.name in names}
    return before == {f.name: f.expected_type for f in new.fields if f.name in names}


def _fed(
    records: Sequence[SourceRecord], report: SchemaContractValidationReport, spec: SymbolStateSpec
) -> tuple[Sequence[int], list[object], list[TopicPartitionKey], dict[int, frozenset[str]]]:
    """The batch indices, payloads and (topic, partition) of the records the state sees,
    in source order, and by position the parts of those it cannot trust."""
    fed: dict[int, frozenset[str]] = {}  # quarantined records fed: index -> distrusted parts
    for q in report.quarantined_records:
        parts = distrusted(spec, q.violations)
        if "key" not in parts:
            fed[q.index] = parts
    indices: Sequence[int] = report.valid_indices
    distrust: dict[int, frozenset[str]] = {}
    if fed:
        indices = sorted([*indices, *fed])
        if any(fed.values()):
            # Positions of the few distrusting ones (indices: sorted, each index once).
            distrust = {bisect_left(indices, i): parts for i, parts in fed.items() if parts}
    chosen = list(map(records.__getitem__, indices))
    return indices, list(map(_VALUE, chosen)), list(map(_TOPIC_PARTITION, chosen)), distrust
