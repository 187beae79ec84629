"""PURE: the source records one replay run decided, in memory proportional to their gaps.

A run must recognise a second envelope of a source record it already decided (the
service is at-least-once, and a requeued copy can sit next to its original), so it
remembers every source record it decided. It keeps them per source partition as runs of
consecutive offsets (two int64 arrays, 16 bytes a run): quarantined records come in
bursts, so an incident's thousands of records are a handful of runs, and even scattered
ones cost 16 bytes each instead of a tuple, a string and two ints in a set (~190 bytes).
"""

from __future__ import annotations

from array import array
from bisect import bisect_right

__all__ = ["SourceOffsets"]

#: Offsets an int64 run can hold with its exclusive end; others (only in forged
#: envelopes: Kafka offsets are int64 >= 0) are kept as they are.
_LIMIT = 2**63 - 1


class _Runs:
    """Disjoint runs ``[starts[i], ends[i])`` of one source partition, in order."""

    __slots__ = ("ends", "starts")

    def __init__(self) -> None:
        self.starts = array("q")
        self.ends = array("q")

    def add(self, offset: int) -> bool:
        """Remember ``offset``; False when it was already there."""
        starts, ends = self.starts, self.ends
        if not ends or offset > ends[-1]:  # the common case: offsets arrive in order
            starts.append(offset)
            ends.append(offset + 1)
            return True
        if offset == ends[-1]:
            ends[-1] = offset + 1
            return True
        i = bisect_right(starts, offset)
        if i and ends[i - 1] > offset:
            return False
        after_previous = i > 0 and ends[i - 1] == offset
        before_next = i < len(starts) and starts[i] == offset + 1
        if after_previous and before_next:
            ends[i - 1] = ends[i]
            del starts[i], ends[i]
        elif after_previous:
            ends[i - 1] = offset + 1
        elif before_next:
            starts[i] = offset
        else:
            starts.insert(i, offset)
            ends.insert(i, offset + 1)
        return True

    def __len__(self) -> int:
        return len(self.starts)


class SourceOffsets:
    """A set of source records (topic, partition, offset) that only grows."""

    __slots__ = ("_odd", "_runs")

    def __init__(self) -> None:
        self._runs: dict[tuple[str, int], _Runs] = {}
        self._odd: set[tuple[str, int, int]] = set()

    def add(self, topic: str, partition: int, offset: int) -> bool:
        """Remember one source record; False when it was already there."""
        if not 0 <= offset < _LIMIT:
            identity = (topic, partition, offset)
            if identity in self._odd:
                return False
            self._odd.add(identity)
            return True
        runs = self._runs.get((topic, partition))
        if runs is None:
            runs = self._runs[(topic, partition)] = _Runs()
        return runs.add(offset)

    def runs(self) -> int:
        """How many runs of consecutive offsets are kept (what the memory grows with)."""
        return sum(map(len, self._runs.values())) + len(self._odd)
