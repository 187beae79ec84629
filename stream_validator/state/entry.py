"""What the per-symbol state holds for one (partition, symbol). PURE.

A healthy symbol holds only its ``SymbolEntry``; the sequence's rarer state (``Gaps``) is
made on first need and let go when it holds nothing again.
"""

from __future__ import annotations

from stream_validator.state.eventtime import EventTime

__all__ = ["Gaps", "SymbolEntry"]


class Gaps:
    """A symbol's sequence state beyond its highest number: held only while it has pending
    holes, a renumbering streak, or given-up holes still inside the window."""

    __slots__ = ("candidate", "holes", "mark", "streak")

    def __init__(self) -> None:
        # missing numbers inside the window, flat: ascending, disjoint, non-adjacent ranges
        # [start, end) as start0, end0, start1, end1, ... (an odd bisect position: inside one)
        self.holes: list[int] = []
        self.streak = 0  # increasing regressions in a row (a renumbered feed?)
        self.candidate = 0  # the last of those
        self.mark: int | None = None  # holes given up lay below this number


class SymbolEntry:
    """The mutable state of one (partition, symbol); the sequence's rarer state lazily."""

    __slots__ = ("alerted", "gaps", "high", "latest", "quote", "seen", "since", "updates")

    def __init__(self, stamp: int) -> None:
        self.high: int | None = None  # highest sequence number seen
        self.gaps: Gaps | None = None
        self.latest: EventTime | None = None  # latest event time seen
        self.quote: tuple[object, ...] | None = None
        self.updates = 0  # updates in a row carrying ``quote``
        self.since: EventTime | None = None  # event time of the first of them
        self.alerted = False
        self.seen = stamp  # the tracker's clock when last observed (LRU order)
