"""The valid records a batch keeps (``keep_records``) and their batch positions, held as
runs instead of one list entry and one ``int`` object per record. PURE.

A payload batch accepts valid records in runs (the records between two bad ones of a
chunk). Extending a report-long list with each run's payloads and another with a
``range`` of positions cost about 200 instructions a valid record: an ``int`` object per
position above 256 (allocated, and freed with the report), both lists regrown and copied
as they grew, and traversed by the cyclic collector. ``KeptRecords`` notes each run as
(the chunk's own list, lo, hi) and its positions as (start, stop) instead, and builds the
report's ``Positions`` (``valid_indices``) and ``DecodedRecords`` parts from them; both
list a run's records only when read.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate, chain
from operator import sub
from typing import Any, overload

__all__ = ["KeptRecords", "Positions", "listed"]


def listed(seqs: Sequence[Sequence[Any]], los: Sequence[int], his: Sequence[int]) -> list[Any]:
    """The items ``seqs[i][los[i]:his[i]]`` in order, in one new list."""
    out: list[Any] = []
    for rows, lo, hi in zip(seqs, los, his, strict=True):
        out += rows[lo:hi]
    return out


class Positions(Sequence[int]):
    """Increasing batch positions held as runs: ``range(starts[i], stops[i])`` in order.

    A read-only sequence of ints: indexing, slicing (a list), iteration, ``len``, ``in``,
    and equality with any sequence of the same ints (``report.valid_indices == [0, 2]``);
    ``+`` with a list gives a list. The report's ``valid_indices``.
    """

    __slots__ = ("_ends", "_len", "_starts", "_stops")

    def __init__(self, starts: list[int], stops: list[int]) -> None:
        self._starts = starts
        self._stops = stops
        self._len = sum(stops) - sum(starts)
        # _ends[i]: how many positions runs 0..i hold together (built on first indexing).
        self._ends: list[int] | None = None

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, index: int) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> list[int]: ...

    def __getitem__(self, index: int | slice) -> int | list[int]:
        if isinstance(index, slice):
            return list(self)[index]
        size = len(self)
        at = index.__index__()
        if at < 0:
            at += size
        if not 0 <= at < size:
            raise IndexError("Positions index out of range")
        ends = self._ends
        if ends is None:
            ends = self._ends = list(accumulate(map(sub, self._stops, self._starts)))
        run = bisect_right(ends, at)
        before = ends[run - 1] if run else 0
        return self._starts[run] + at - before

    def __iter__(self) -> Iterator[int]:
        return chain.from_iterable(map(range, self._starts, self._stops))

    def __contains__(self, value: object) -> bool:
        if not isinstance(value, int):
            return any(value == p for p in self)
        run = bisect_right(self._starts, value) - 1
        return run >= 0 and value < self._stops[run]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Positions):
            return list(self) == list(other)
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(other) == len(self) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: object) -> list[int]:
        if isinstance(other, list):
            return [*self, *other]
        return NotImplemented

    def __radd__(self, other: object) -> list[int]:
        if isinstance(other, list):
            return [*other, *self]
        return NotImplemented

    def __repr__(self) -> str:
        return repr(list(self))


class KeptRecords:
    """Collects a batch's valid records and positions in acceptance order."""

    # Parallel lists, not a tuple per run: a tuple holding a list stays tracked by the
    # cyclic collector, and a few thousand of them per batch set it off.
    __slots__ = ("_his", "_los", "_own", "_seqs", "_starts", "_stops")

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._stops: list[int] = []
        # The records seqs[i][los[i]:his[i]], in order; those accepted one at a time go
        # to _own.
        self._seqs: list[Sequence[Any]] = []
        self._los: list[int] = []
        self._his: list[int] = []
        self._own: list[Any] = []

    def run(self, rows: Sequence[Any], base: int, lo: int, hi: int) -> None:
        """Keep ``rows[lo:hi]`` (``rows``: a sequence nobody changes later, such as the
        chunk's own list), at batch positions ``base + lo`` on."""
        stops = self._stops
        if stops and stops[-1] == base + lo:
            stops[-1] = base + hi
        else:
            self._starts.append(base + lo)
            stops.append(base + hi)
        seqs, his = self._seqs, self._his
        if seqs and seqs[-1] is rows and his[-1] == lo:
            his[-1] = hi  # the run goes on in the same list (the next chunk of a batch)
        else:
            seqs.append(rows)
            self._los.append(lo)
            his.append(hi)

    def runs(self, rows: Sequence[Any], base: int, los: list[int], his: list[int]) -> None:
        """``run`` of each ``rows[los[i]:his[i]]`` in order (none touching the next: a
        record not kept between each two), without a Python call per run."""
        if not los:
            return
        starts = [base + lo for lo in los]
        stops = [base + hi for hi in his]
        if self._stops and self._stops[-1] == starts[0]:
            self._stops[-1] = stops[0]
            del starts[0], stops[0]
        self._starts += starts
        self._stops += stops
        seqs = self._seqs
        if seqs and seqs[-1] is rows and self._his[-1] == los[0]:
            self._his[-1] = his[0]
            los, his = los[1:], his[1:]
        seqs += [rows] * len(los)
        self._los += los
        self._his += his

    def one(self, index: int, record: Any) -> None:
        """Keep one record at batch position ``index``."""
        stops = self._stops
        if stops and stops[-1] == index:
            stops[-1] = index + 1
        else:
            self._starts.append(index)
            stops.append(index + 1)
        own = self._own
        seqs, his = self._seqs, self._his
        if seqs and seqs[-1] is own and his[-1] == len(own):
            his[-1] += 1
        else:
            seqs.append(own)
            self._los.append(len(own))
            his.append(len(own) + 1)
        own.append(record)

    def positions(self) -> Positions:
        """The positions kept so far."""
        return Positions(list(self._starts), list(self._stops))

    def records(self) -> list[Any]:
        """The records kept so far: the list of those accepted one at a time when all
        were (as the batch kept them before, not a copy), else a new list."""
        seqs = self._seqs
        if not seqs or (len(seqs) == 1 and seqs[0] is self._own):
            return self._own
        return listed(seqs, self._los, self._his)

    def parts(self) -> tuple[list[Sequence[Any]], list[int], list[int]]:
        """The kept records as parts: ``seqs[i][los[i]:his[i]]`` in order (copies of the
        three lists)."""
        return list(self._seqs), list(self._los), list(self._his)
