"""The findings of the per-symbol state (``state.tracker``) and their tally per batch.

Events carry the symbol for examples in batch events; counts go per contract and kind,
never per symbol (``EventTally``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

_EXAMPLE_LENGTH: Final = 32


class SymbolEventKind(StrEnum):
    """Stable event codes (metric label values, with the contract name)."""

    SEQUENCE_GAP = "sequence_gap"
    SEQUENCE_REGRESSION = "sequence_regression"
    EVENT_TIME_REGRESSION = "event_time_regression"
    FROZEN_QUOTE = "frozen_quote"
    #: Pending holes past ``max_holes`` (or ``max_holes_total``) given up, oldest first;
    #: ``count`` is the numbers in them, counted as missed.
    HOLES_GIVEN_UP = "sequence_holes_given_up"
    #: A number inside the window but below a hole given up and in no pending hole: late
    #: for a hole given up, or a repeat (the state cannot tell). Not a regression.
    SEQUENCE_LATE = "sequence_late"


_MISSED: Final = frozenset({SymbolEventKind.SEQUENCE_GAP, SymbolEventKind.HOLES_GIVEN_UP})


@dataclass(frozen=True, slots=True)
class SymbolEvent:
    """One finding for one symbol; ``count`` is the sequence numbers missed for a gap (or
    given up with holes)."""

    kind: SymbolEventKind
    symbol: str
    detail: str
    count: int = 1


class EventTally:
    """Counts per kind over a batch, with a few example symbols each (capped, shortened)."""

    def __init__(self, max_examples: int = 5) -> None:
        self.max_examples = max_examples
        self.counts: Counter[SymbolEventKind] = Counter()
        self.missed_sequence_numbers = 0
        self.examples: dict[SymbolEventKind, list[str]] = {}

    def add(self, events: Iterable[SymbolEvent]) -> None:
        """Count events; keep the first ``max_examples`` distinct symbols per kind."""
        for event in events:
            self.counts[event.kind] += 1
            if event.kind in _MISSED:
                self.missed_sequence_numbers += event.count
            examples = self.examples.setdefault(event.kind, [])
            shown = event.symbol[:_EXAMPLE_LENGTH]
            if len(examples) < self.max_examples and shown not in examples:
                examples.append(shown)

    def summary(self) -> dict[str, dict[str, object]]:
        """JSON-ready: ``{kind: {"count": n, "examples": [symbols]}}``, kinds sorted."""
        return {
            str(kind): {"count": self.counts[kind], "examples": list(self.examples[kind])}
            for kind in sorted(self.counts)
        }
