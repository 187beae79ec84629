"""The contract's per-symbol state over a JSON-lines file (offline ``validate``). PURE."""

from __future__ import annotations

from bisect import bisect_left
from typing import Any

from stream_validator.offline.lines import without
from stream_validator.state import EventTally, StateFeed, distrusted
from stream_validator.state.native import symbol_state_tracker
from stream_validator.verify import DataSchemaContractVerifier, QuarantinedRecord, Violation

__all__ = ["FileState"]

#: Tuples of violated fields whose ``distrusted`` parts a ``FileState`` remembers.
_MEMO = 1024


class FileState:
    """The contract's per-symbol state over a file: one partition, in file order.

    It reports events only (counts per kind, five example symbols each): an action
    ``quarantine`` moves no record to the DLQ output here, so the file's verdict and its
    valid/DLQ outputs are the schema's alone. Records are read from the fast path's decoded
    Structs where there are some (``state.StateFeed``), so no line is decoded twice.
    """

    def __init__(self, verifier: DataSchemaContractVerifier, *, native: bool = True) -> None:
        spec = verifier.contract.state
        assert spec is not None
        types = {f.name: f.expected_type for f in verifier.contract.fields}
        self._spec = spec
        # the native tracker unless native is False (SV_NATIVE=0); the same events either way
        self.tracker = symbol_state_tracker(spec, native)
        self._feed = StateFeed(self.tracker, types, verifier.field_getter)
        self.tally = EventTally(5)
        self._memo: dict[tuple[str | None, ...], frozenset[str]] = {}
        # The state's fields as the Rust verdict scan reads them (None: no core or tracker
        # to take them): ``add_payloads`` fills it, ``feed`` hands it to the tracker.
        self.rows: Any = None
        if hasattr(self.tracker, "observe_scanned"):
            frozen = spec.frozen_max_updates is not None or spec.frozen_max_s is not None
            self.rows = verifier.state_rows(
                spec.key_field,
                spec.sequence_field,
                spec.event_time_field,
                spec.quote_fields if frozen else (),
            )

    def feed(
        self,
        payloads: list[bytes],
        quarantined: dict[int, QuarantinedRecord],
        decoded: list[Any],
    ) -> None:
        """Fold one share of a batch in: valid lines, and quarantined ones whose key passed,
        each state field used only when it passed (``state.distrusted``; ``decoded``:
        what ``add_payloads`` decoded of each)."""
        parts, unfed = self._distrusted(quarantined)
        values, rows = without(payloads, unfed), without(decoded, unfed)
        # each position once the unfed lines before it are left out
        distrust = {
            position - bisect_left(unfed, position): part for position, part in parts.items()
        }
        scanned = self.rows
        if scanned is not None and len(scanned) == len(payloads):
            indices = without(list(range(len(payloads))), unfed)
            found = self._feed.observe_scanned(
                [0] * len(values), values, indices, scanned, distrust
            )
        else:
            found = self._feed.observe_many([0] * len(values), values, rows, distrust)
        for _, events in found:
            self.tally.add(events)

    def feed_scanned(
        self,
        records: Any,
        quarantined: dict[int, QuarantinedRecord],
        fed: int = 0,
        events: tuple[Any, ...] = (),
    ) -> None:
        """Fold in the records of one ``add_lines`` call (``records``: its ``ScannedLines``;
        ``quarantined`` by ascending position): as ``feed``, without a list per record.
        The scan fed the first ``fed`` itself (``add_lines(..., tracker=self.tracker)``),
        raising ``events``; ``self.rows`` holds the rows of the rest."""
        self.tally.add(events)
        if fed >= len(records):
            return
        if fed:
            quarantined = {at: q for at, q in quarantined.items() if at >= fed}
        distrust, unfed = self._distrusted(quarantined)
        for found in self._feed.observe_rows(0, records, self.rows, unfed, distrust, fed):
            self.tally.add(found)

    def _parts(self, violations: list[Violation]) -> frozenset[str]:
        """``state.distrusted`` of a quarantined record, remembered per tuple of violated
        fields (what it depends on when no violation is record-level, i.e. field None):
        a feed's bad lines mostly repeat a few."""
        fields = tuple([v.field for v in violations])
        part = self._memo.get(fields)
        if part is None:
            part = distrusted(self._spec, violations)
            if None not in fields and len(self._memo) < _MEMO:
                self._memo[fields] = part
        return part

    def _distrusted(
        self, quarantined: dict[int, QuarantinedRecord]
    ) -> tuple[dict[int, frozenset[str]], list[int]]:
        """Of the quarantined lines (not every line: most are valid), those whose key
        passed and whose other state fields did not all pass, with the fields they may not
        feed (``state.distrusted``); and the positions, ascending, of those whose key did
        not pass: they feed nothing."""
        distrust: dict[int, frozenset[str]] = {}
        unfed: list[int] = []
        parts = self._parts
        for position, q in quarantined.items():
            part = parts(q.violations)
            if part:
                if "key" in part:
                    unfed.append(position)
                else:
                    distrust[position] = part
        unfed.sort()
        return distrust, unfed

    def summary(self) -> dict[str, Any]:
        """JSON-ready, for the file summary."""
        return {
            "events": self.tally.summary(),
            "evictions": self.tracker.evictions,
            "symbols": len(self.tracker),
        }
