"""The input's lines: read in blocks of about ``BLOCK_BYTES`` (as lists of lines, or as
spans of the block for the native core to split), and left out by position."""

from __future__ import annotations

from collections.abc import Iterator
from typing import IO, Final, NamedTuple, TypeVar

__all__ = ["BLOCK_BYTES", "Block", "blocks", "spans", "without"]

#: Read size: big enough that per-block costs vanish, small enough for flat memory.
BLOCK_BYTES: Final = 1 << 20

T = TypeVar("T")


def blocks(stream: IO[bytes], limit: int) -> Iterator[tuple[list[bytes], int | None]]:
    """The input's lines (without line endings) in lists of about BLOCK_BYTES, and the
    length of the block's first line when it was cut (else None).

    A line that runs over several blocks is kept only up to ``limit + 1`` bytes, enough
    for the verifier to judge it oversized: a file that is one huge line (a JSON array
    dump, say) is never held whole, nor copied again with each block.
    """
    rest = b""  # the start of the line not yet ended, at most limit + 1 bytes of it
    length = 0  # that line's length so far
    while True:
        data = stream.read(BLOCK_BYTES)
        if not data:
            if length:
                yield [rest], (length if length > len(rest) else None)
            return
        if b"\n" not in data:  # the line goes on
            length += len(data)
            if len(rest) <= limit:
                rest += data[: limit + 1 - len(rest)]
            continue
        first_cut = length > len(rest)
        if rest:
            data = rest + data
        lines = data.split(b"\n")
        cut = None
        if first_cut:
            cut = length + len(lines[0]) - len(rest)
            lines[0] = lines[0][: limit + 1]
        rest = lines.pop()
        length = len(rest)
        if length > limit:
            rest = rest[: limit + 1]
        if b"\r" in data:
            lines = [line.rstrip(b"\r") for line in lines]
        yield lines, cut


class Block(NamedTuple):
    """Whole lines of the input: ``data[start:end]``, each ended by ``\\n`` (with ``tail``,
    all of ``data`` is the input's unended last line); ``cut``: the true length of the first
    line when it was cut to ``limit + 1`` bytes (kept so in ``data``), else None."""

    data: bytes
    start: int
    end: int
    cut: int | None
    tail: bool


def spans(stream: IO[bytes], limit: int) -> Iterator[Block]:
    """The input in blocks of about BLOCK_BYTES, unsplit: the same lines as ``blocks``
    (lines ``blocks`` yields from a block are those of the ``Block``, read by
    ``_native.scan_lines``), a line running over several blocks kept to ``limit + 1`` bytes."""
    rest = b""  # as in ``blocks``
    length = 0
    while True:
        data = stream.read(BLOCK_BYTES)
        if not data:
            if length:
                yield Block(rest, 0, len(rest), length if length > len(rest) else None, True)
            return
        last = data.rfind(b"\n")
        if last < 0:  # the line goes on
            length += len(data)
            if len(rest) <= limit:
                rest += data[: limit + 1 - len(rest)]
            continue
        first = data.index(b"\n")
        cut = length + first if length > len(rest) else None
        if rest:  # the line begun in the blocks before, alone: the block is not copied
            yield Block(rest + data[: first + 1], 0, len(rest) + first + 1, cut, False)
            yield Block(data, first + 1, last + 1, None, False)
        else:
            yield Block(data, 0, last + 1, cut, False)
        rest = data[last + 1 : last + 2 + limit]
        length = len(data) - last - 1


def without(items: list[T], positions: list[int]) -> list[T]:
    """``items`` without those at ``positions`` (ascending), copied slice by slice."""
    if not positions:
        return items
    kept: list[T] = []
    start = 0
    for position in positions:
        kept += items[start:position]
        start = position + 1
    kept += items[start:]
    return kept
