"""The per-symbol sequence check: gaps, regressions, late numbers, and bounded holes. PURE.

What must hold:

* Sequence (an int per symbol) must increase by one. A hole is ``sequence_gap`` once it
  is more than ``sequence_window`` numbers behind the highest seen (0: at once); a late
  number inside the window fills its hole silently. A number inside the window below a
  hole given up, and in no pending hole, is ``sequence_late`` (late for the hole given up,
  or a repeat: the state cannot tell) and leaves the state alone. Any other number already
  passed (a repeat, or older than the window) is ``sequence_regression`` and leaves the
  state alone, unless ``resync_after`` such numbers in a row are increasing: then the feed
  restarted its numbering and the state follows it.
* Pending holes are kept as ranges: a jump adds one however far it goes (listing every
  missing number of a jump of 10**9 under a window of 10**9 would take 16 GB for one
  record), and only a late number inside a range adds another. A symbol holds at most
  ``max_holes`` ranges, all symbols ``max_holes_total``: past either, the symbol adding one
  gives up its own lowest ranges (the new one when it has no other), a
  ``sequence_holes_given_up`` event counting their numbers as missed. A symbol's ranges
  are one flat list: finding a number's range is a bisect, and filling or splitting one
  moves at most 2 * ``max_holes`` pointers.

The tracker runs the common case (the next number, no holes) inline and calls ``check``
for every other one.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from stream_validator.contracts.statespec import SymbolStateSpec
from stream_validator.state.entry import Gaps, SymbolEntry
from stream_validator.state.events import SymbolEvent, SymbolEventKind

__all__ = ["SequenceCheck", "given_up_detail"]


class SequenceCheck:
    """The sequence state's rarer cases for one tracker, and its count of holes held."""

    __slots__ = ("given_up", "held", "spec")

    def __init__(self, spec: SymbolStateSpec) -> None:
        self.spec = spec
        self.held = 0  # hole ranges held, all symbols
        self.given_up = 0  # hole ranges given up to the bounds (their numbers: events)

    def release(self, gaps: Gaps | None) -> None:
        """A forgotten symbol's holes no longer count against ``max_holes_total``."""
        if gaps is not None:
            self.held -= len(gaps.holes) // 2

    def check(self, state: SymbolEntry, symbol: str, seq: int, events: list[SymbolEvent]) -> None:
        """Fold ``seq`` into ``state``; append the events it raises to ``events``."""
        high, window = state.high, self.spec.sequence_window
        if high is None:
            state.high = seq
            return
        gaps = state.gaps
        if seq > high:
            cutoff = seq - window  # numbers below this are beyond the window
            missed = max(0, min(seq, cutoff) - (high + 1))
            start = max(high + 1, cutoff)
            given = 0
            state.high = seq
            if gaps is None:
                if start >= seq:
                    return self._gap(symbol, seq, missed, 0, events)
                gaps = state.gaps = Gaps()
            else:
                gaps.streak = 0
            holes = gaps.holes
            if holes and holes[0] < cutoff:
                missed += self._pass(holes, cutoff)
            if start < seq:
                holes += (start, seq)  # above every range held: their ends are <= high
                self.held += 1
                given = self._bound(gaps)
            self._settle(state, gaps, seq - window)
            return self._gap(symbol, seq, missed, given, events)
        if gaps is not None:
            holes = gaps.holes
            at = bisect_right(holes, seq)
            if at & 1:  # late, but inside the window: fill its hole
                if holes[at - 1] == seq:
                    if holes[at] == seq + 1:
                        del holes[at - 1 : at + 1]
                        self.held -= 1
                        self._settle(state, gaps, high - window)
                    else:
                        holes[at - 1] = seq + 1
                elif holes[at] == seq + 1:
                    holes[at] = seq
                else:
                    holes[at:at] = (seq, seq + 1)  # splits the range in two
                    self.held += 1
                    given = self._bound(gaps)
                    if given:
                        detail = given_up_detail(given, self.spec)
                        events.append(
                            SymbolEvent(SymbolEventKind.HOLES_GIVEN_UP, symbol, detail, given)
                        )
                return
            mark = gaps.mark
            if mark is not None and high - window <= seq < mark:
                detail = f"seq {seq} after {high}: late for a hole given up, or a repeat"
                events.append(SymbolEvent(SymbolEventKind.SEQUENCE_LATE, symbol, detail))
                return
        detail = f"seq {seq} after {high}"
        events.append(SymbolEvent(SymbolEventKind.SEQUENCE_REGRESSION, symbol, detail))
        if gaps is None:
            gaps = state.gaps = Gaps()
        gaps.streak = gaps.streak + 1 if gaps.streak and seq > gaps.candidate else 1
        gaps.candidate = seq
        resync = self.spec.resync_after
        if resync is not None and gaps.streak >= resync:
            state.high = seq
            self.held -= len(gaps.holes) // 2
            state.gaps = None

    def _pass(self, holes: list[int], cutoff: int) -> int:
        """Take the numbers below ``cutoff`` (out of the window) out of ``holes``; how many."""
        at = bisect_left(holes, cutoff)  # holes[:at] are below cutoff
        whole = at & ~1  # the ranges wholly below
        missed = sum(holes[1:whole:2]) - sum(holes[0:whole:2])
        if at & 1:  # a range across the cutoff keeps its part from the cutoff on
            missed += cutoff - holes[whole]
            holes[whole] = cutoff
        del holes[:whole]
        self.held -= whole // 2
        return missed

    def _bound(self, gaps: Gaps) -> int:
        """Give up the oldest holes of a symbol past ``max_holes``, or past
        ``max_holes_total`` held in all; the numbers given up (0: none)."""
        holes, spec = gaps.holes, self.spec
        over = max(len(holes) // 2 - spec.max_holes, self.held - spec.max_holes_total, 0)
        if not over:
            return 0
        over = min(over, len(holes) // 2)  # the total is made room for by this symbol
        whole = 2 * over
        given = sum(holes[1:whole:2]) - sum(holes[0:whole:2])
        gaps.mark = holes[whole - 1]
        del holes[:whole]
        self.held -= over
        self.given_up += over
        return given

    def _settle(self, state: SymbolEntry, gaps: Gaps, floor: int) -> None:
        """Let ``gaps`` go when it holds nothing (``floor``: the lowest number in the window)."""
        if gaps.mark is not None and gaps.mark <= floor:
            gaps.mark = None  # the holes given up are beyond the window now
        if not gaps.holes and not gaps.streak and gaps.mark is None:
            state.gaps = None

    def _gap(
        self, symbol: str, seq: int, missed: int, given: int, events: list[SymbolEvent]
    ) -> None:
        if missed:
            detail = f"{missed} sequence number(s) missing before {seq}"
            events.append(SymbolEvent(SymbolEventKind.SEQUENCE_GAP, symbol, detail, missed))
        if given:
            detail = given_up_detail(given, self.spec)
            events.append(SymbolEvent(SymbolEventKind.HOLES_GIVEN_UP, symbol, detail, given))


def given_up_detail(given: int, spec: SymbolStateSpec) -> str:
    """The detail of a ``sequence_holes_given_up`` event."""
    return (
        f"{given} sequence number(s) in the oldest hole(s) given up (over"
        f" {spec.max_holes} holes for the symbol or {spec.max_holes_total} in all)"
    )
