"""The per-symbol state's events tallied per batch."""

from __future__ import annotations

from stream_validator.state import (
    EventTally,
    SymbolEvent,
)
from tests.support.symbolstate import (
    FROZEN,
    GAP,
)

# --- tally -----------------------------------------------------------------------------


def test_tally_counts_per_kind_with_capped_examples() -> None:
    """Counts per kind; examples are distinct, capped and shortened symbols."""
    tally = EventTally(max_examples=2)
    tally.add(SymbolEvent(GAP, s, "", 3) for s in ("A", "A", "B", "C" * 100))
    assert tally.summary() == {"sequence_gap": {"count": 4, "examples": ["A", "B"]}}
    assert tally.missed_sequence_numbers == 12


def test_tally_shortens_long_symbols() -> None:
    """A payload-derived symbol never enters a batch event longer than 32 characters."""
    tally = EventTally()
    tally.add([SymbolEvent(FROZEN, "X" * 500, "")])
    assert tally.examples[FROZEN] == ["X" * 32]
