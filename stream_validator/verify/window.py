"""Framing a run of payloads as one JSON array, and finding where a failed decode stopped.

Payload ``k`` of a framed run starts at byte ``2 + sum(len(p_j) for j < k) + 4 * k``:
``[[`` opens the run, and each payload is followed by ``]\\n,[`` (or by ``]]`` at the
end). ``resume`` turns the ``,`` two bytes before a payload into ``[``, so the framed
bytes from there on are again a run of their own, decoded without copying.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate
from operator import add
from typing import Final

OPEN: Final = b"[["
SEP: Final = b"]\n,["
CLOSE: Final = b"]]"
STEP: Final = len(SEP)
FIRST: Final = len(OPEN)  # where payload 0 starts
LOOKAHEAD: Final = 16
_ELEMENT: Final = re.compile(r" - at `\$\[(\d+)\]")
_BYTE: Final = re.compile(r"\(byte (\d+)\)$")


def frame(rows: list[bytes]) -> bytearray:
    """``[[p0]\\n,[p1]...]]`` (one copy of the payloads)."""
    if len(rows) == 1:
        return bytearray(OPEN + rows[0] + CLOSE)
    return bytearray(SEP).join([OPEN + rows[0], *rows[1:-1], rows[-1] + CLOSE])


def span(rows: list[bytes], a: int, b: int) -> tuple[int, bool]:
    """The bytes rows[a:b] take in a framed run, and whether one of them holds a ``]`` byte
    (in a string or not)."""
    joined = b"".join(rows[a:b])
    return len(joined) + STEP * (b - a), joined.find(b"]") >= 0


def resume(framed: bytearray, start: int) -> memoryview:
    """The framed run from the payload starting at ``start`` on, as a run of its own."""
    framed[start - 2] = 0x5B  # '[' over the separator's ','
    return memoryview(framed)[start - 2 :]


def run_bytes(framed: bytearray, lo: int, hi: int) -> bytes:
    """Payloads framed[lo:hi] (whole payloads and their separators) as a run of their own."""
    return b"[" + framed[lo - 1 : hi + 1] + b"]"


def starts(rows: list[bytes]) -> list[int]:
    """Where each payload of a framed run from rows[0] starts, and ``starts[n]`` where a
    next one would (so rows[k] ends at ``starts[k + 1] - STEP``)."""
    return list(
        map(add, accumulate(map(len, rows), initial=FIRST), range(0, STEP * (len(rows) + 1), STEP))
    )


def failed_element(message: str) -> int | None:
    """The element a validation error names (``$[i]``), relative to the run; None for a
    malformed-JSON error (see ``near_byte``)."""
    match = _ELEMENT.search(message)
    return None if match is None else int(match.group(1))


def near_byte(message: str, starts: list[int], a: int) -> tuple[int, int] | None:
    """Where a decode of the run from ``rows[a]`` failed on malformed JSON: ``(f, last)``,
    the fault being in one of rows[f:last + 1] and rows[a:f] complete (``starts`` from
    ``starts``). None when the message names no byte.

    msgspec stops reading past the fault when it reads a literal or an escape whole
    (``f`` + ``alse`` reads 4 bytes of the next frame, a surrogate pair escape 12), so the
    fault is at most LOOKAHEAD bytes before the byte it names: f is the payload holding
    that point, last the one holding the byte.
    """
    match = _BYTE.search(message)
    if match is None:
        return None
    n = len(starts) - 1
    x = starts[a] - 2 + int(match.group(1))  # absolute offset in the framed bytes
    # rows[k]'s '[' is at starts[k] - 1.
    f = max(a, bisect_right(starts, x - LOOKAHEAD + 1, a, n) - 1)
    return f, bisect_right(starts, x + 1, f + 1, n) - 1
