"""Duplicate keys in a JSON object, which orjson and msgspec silently collapse.

``{"price": -1, "price": 5}`` decodes to ``{"price": 5}`` here, but a first-key-wins
parser downstream reads -1 from the same bytes. So the verifier rejects such records.

Two checks, both exact:

* ``no_duplicates_possible`` is the cheap pre-filter: a top-level object with K key
  tokens has K - 1 commas between its members, outside any string, and nested values
  and strings only add commas. So when the payload holds exactly ``len(decoded) - 1``
  commas, there were exactly ``len(decoded)`` key tokens: no duplicates. ``False``
  only means "cannot tell".
* ``duplicate_keys`` tokenizes the top-level object (strings, brackets, colons;
  iterative, linear) and decodes each key the way the decoder does, so ``"pr\\u0069ce"``
  equals ``"price"``.
"""

from __future__ import annotations

import re
from typing import Final

from stream_validator.codec import loads_raw

# A JSON string (unrolled loop: linear, no nested backtracking), or a structural byte.
_TOKEN: Final = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]:]')


def no_duplicates_possible(payload: bytes, keys: int) -> bool:
    """True when a JSON object that decoded to ``keys`` keys cannot have had duplicates."""
    return payload.count(b",") == keys - 1


def duplicate_keys(payload: bytes) -> list[str]:
    """Keys named more than once in the top-level object of valid JSON bytes, in order.

    ``payload`` must be one JSON object that the decoder accepted.
    """
    depth = 0
    last_string: bytes | None = None
    seen: set[str] = set()
    repeated: set[str] = set()  # the list's members: a list lookup made this quadratic
    duplicates: list[str] = []
    for match in _TOKEN.finditer(payload):
        token = match.group()
        first = token[0]
        if first == 0x22:  # '"'
            last_string = token if depth == 1 else None
        elif first == 0x3A:  # ':'
            if last_string is not None:
                key = _decode_key(last_string)
                if key in seen:
                    if key not in repeated:
                        repeated.add(key)
                        duplicates.append(key)
                else:
                    seen.add(key)
            last_string = None
        else:
            depth += 1 if first in b"{[" else -1
            last_string = None
    return duplicates


def _decode_key(token: bytes) -> str:
    if b"\\" in token:
        key: str = loads_raw(token)
        return key
    return token[1:-1].decode("utf-8")
