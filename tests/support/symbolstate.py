"""The per-symbol state's test helpers: a tracker factory fixture (loaded once through
``pytest_plugins``), the event kinds, and readers of a tracker's holes."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from stream_validator.contracts.statespec import SymbolStateSpec
from stream_validator.state import SymbolEvent, SymbolEventKind, SymbolStateTracker

Make = Callable[..., SymbolStateTracker]
GAP = SymbolEventKind.SEQUENCE_GAP
REGRESSION = SymbolEventKind.SEQUENCE_REGRESSION
TIME_BACK = SymbolEventKind.EVENT_TIME_REGRESSION
FROZEN = SymbolEventKind.FROZEN_QUOTE
GIVEN_UP = SymbolEventKind.HOLES_GIVEN_UP
LATE = SymbolEventKind.SEQUENCE_LATE


@pytest.fixture
def make_tracker() -> Make:
    """A tracker factory: keyword arguments override SymbolStateSpec defaults."""

    def make(**spec: object) -> SymbolStateTracker:
        return SymbolStateTracker(SymbolStateSpec(**spec))  # type: ignore[arg-type]

    return make


def feed_seqs(
    tracker: SymbolStateTracker, seqs: list[int], symbol: str = "AAPL"
) -> list[SymbolEvent]:
    """Every event raised by feeding ``seqs`` for one symbol on partition 0."""
    return [e for seq in seqs for e in tracker.observe(0, symbol, seq=seq)]


def held_holes(tracker: SymbolStateTracker) -> list[tuple[int, int]]:
    """The pending hole ranges [start, end) of the tracker's one symbol."""
    ((_, state),) = tracker._items()
    flat = state.gaps.holes if state.gaps is not None else []
    return list(zip(flat[::2], flat[1::2], strict=True))
