"""The lines of a block read in Python as ``_native.scan_lines`` reads them: the fallback
of ``rustcore.add_lines`` when the core raises, so the chunk is still judged (by the
Python rules), line for line the same. PURE.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

__all__ = ["PyScannedLines", "read_lines"]


class PyScannedLines:
    """``_native.ScannedLines`` in Python: the records (non-blank lines) of one call, as
    spans of its block (``len``, ``[i]``, ``line(i)``, ``runs``, ``join``, ``dlq_lines``)."""

    __slots__ = ("_data", "_lines", "_spans")

    def __init__(self, data: bytes, spans: list[tuple[int, int]], lines: list[int]) -> None:
        self._data = data
        self._spans = spans
        self._lines = lines  # per record, its line's index among the lines read

    def __len__(self) -> int:
        return len(self._spans)

    def __getitem__(self, at: int) -> bytes:
        start, end = self._spans[at]
        return self._data[start:end]

    def line(self, at: int) -> int:
        return self._lines[at]

    def dlq_lines(self, first_line: int, quarantined: Mapping[int, object]) -> list[bytes | None]:
        """As ``ScannedLines.dlq_lines`` declining them all: the Python writer writes them."""
        return [None] * len(quarantined)

    def _kept(self, left_out: list[int]) -> list[tuple[int, int]]:
        skip = set(left_out)
        return [span for i, span in enumerate(self._spans) if i not in skip]

    def runs(self, left_out: list[int]) -> list[tuple[int, int]] | None:
        """As ``ScannedLines.runs``: runs of whole kept lines with their ``\\n`` as
        ``(start, end)`` of the block, or None when a kept line is not followed by one."""
        out: list[tuple[int, int]] = []
        data = self._data
        for start, end in self._kept(left_out):
            if data[end : end + 1] != b"\n":
                return None
            if out and out[-1][1] == start:
                out[-1] = (out[-1][0], end + 1)
            else:
                out.append((start, end + 1))
        return out

    def join(self, left_out: list[int]) -> bytes:
        """The kept records, each followed by ``\\n``."""
        data = self._data
        return b"".join(data[start:end] + b"\n" for start, end in self._kept(left_out))


class ReadLines(NamedTuple):
    """What ``read_lines`` read: the position after the last line, lines, blank lines."""

    after: int
    lines: int
    blanks: int
    records: PyScannedLines


def read_lines(
    data: bytes, start: int, end: int, *, tail: bool, cut_first: bool, take: int, max_bytes: int
) -> ReadLines:
    """The lines of ``data[start:end]``, at most ``take`` records, as ``scan_lines`` finds
    them: split at ``\\n``, trailing ``\\r``s stripped (not with ``tail``), blank lines
    (empty or ASCII whitespace) counted and skipped, a cut first line kept to
    ``max_bytes + 1`` bytes."""
    if not 0 <= start <= end <= len(data):
        raise ValueError("a span outside the block")
    at, lines, blanks = start, 0, 0
    spans: list[tuple[int, int]] = []
    numbers: list[int] = []
    while at < end and len(spans) < take:
        found = -1 if tail else data.find(b"\n", at, end)
        line_end, after = (found, found + 1) if found >= 0 else (end, end)
        stop = line_end
        if cut_first and lines == 0:
            stop = min(stop, at + max_bytes + 1)
        if not tail:
            while stop > at and data[stop - 1] == 0x0D:
                stop -= 1
        line = data[at:stop]
        if not line or line.isspace():
            blanks += 1
        else:
            spans.append((at, stop))
            numbers.append(lines)
        lines += 1
        at = after
    return ReadLines(at, lines, blanks, PyScannedLines(data, spans, numbers))
