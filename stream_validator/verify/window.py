"""Framing a run of payloads as one JSON array, and finding where a failed decode stopped.

Payload ``k`` of a framed run starts at byte ``2 + sum(len(p_j) for j < k) + 4 * k``:
``[[`` opens the run, and each payload is followed by ``]\\n,[`` (or by ``]]`` at the
end). ``resume`` turns the ``,`` two bytes before a payload into ``[``, so the framed
bytes from there on are again a run of their own, decoded without copying.
"""

from __future__ import annotations

import re
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


def locate(
    message: str, rows: list[bytes], a: int, start: int, mean: float
) -> tuple[int, int, int] | None:
    """Where a decode of the run from ``rows[a]`` (at ``start``) failed: ``(f, f_start,
    last)``, the fault being in one of rows[f:last + 1] and rows[a:f] complete; f_start is
    where rows[f] starts (-1: not worked out). None when the message does not say.

    ``$[i]`` in a validation error names element i (f = last). A malformed-JSON error
    names a byte: msgspec stops reading past the fault when it reads a literal or an
    escape whole (``f`` + ``alse`` reads 4 bytes of the next frame, a surrogate pair
    escape 12), so the fault is at most LOOKAHEAD bytes before that byte: f is the payload
    holding that point, last the one holding the byte (``mean``, the mean bytes per payload
    with its separator, is where the search starts). Without the bracket guarantee
    (module ``native``) the answer is a hint, which the caller re-proves.
    """
    n = len(rows)
    match = _ELEMENT.search(message)
    if match is not None:
        f = a + int(match.group(1))
        return (f, -1, f) if f < n else None
    match = _BYTE.search(message)
    if match is None:
        return None
    x = start - 2 + int(match.group(1))  # absolute offset in the framed bytes
    f, pos = _row_at(rows, a, start, mean, x - LOOKAHEAD)
    last, end = f, pos + len(rows[f]) + STEP
    while last + 1 < n and end - 1 <= x:
        end += len(rows[last + 1]) + STEP
        last += 1
    return f, pos, last


def _row_at(rows: list[bytes], a: int, start: int, mean: float, x: int) -> tuple[int, int]:
    """The last of rows[a:] whose ``[`` is at or before offset x, and where it starts."""
    n = len(rows)
    # Guess from the mean size, then step: payloads of a run are alike in size.
    f = min(n - 1, a + max(0, int((x - start + 1) / mean)))
    pos = start + sum(map(len, rows[a:f])) + STEP * (f - a)
    while f > a and pos - 1 > x:
        f -= 1
        pos -= len(rows[f]) + STEP
    while f + 1 < n and pos + len(rows[f]) + STEP - 1 <= x:
        pos += len(rows[f]) + STEP
        f += 1
    return f, pos
