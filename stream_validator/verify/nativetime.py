"""Datetime strings on the native fast path: which rows the rules must judge again.

msgspec's datetime decoder is only a hint here (it takes a lowercase ``z`` and rounds
sub-microsecond digits); ``datetime.fromisoformat``, the rules' own parser, decides.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime
from typing import Any, Final, NamedTuple

from stream_validator.codec import NativeDecodeError
from stream_validator.codec import encode_json as _encode_json

_ELEMENT: Final = re.compile(r"at `\$\[(\d+)\]")


def is_iso(text: str) -> bool:
    """What the rules accept for a datetime field."""
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


def is_aware_iso(text: str) -> bool:
    """What the rules accept for a datetime field with require_timezone."""
    try:
        return datetime.fromisoformat(text).utcoffset() is not None
    except ValueError:
        return False


class DatetimeField(NamedTuple):
    """How ``bad_datetimes`` judges one datetime field's strings."""

    get: Callable[[Any], Any]
    decode: Callable[[bytes], Any]  # msgspec's list[datetime | None]: a fast hint
    valid: Callable[[str], bool]  # fromisoformat's verdict, the rules' own


def bad_datetimes(fields: tuple[DatetimeField, ...], structs: list[Any]) -> list[int]:
    """Rows whose datetime strings fromisoformat refuses (msgspec's decode is a hint)."""
    bad: list[int] = []
    for getter, decode, valid in fields:
        values = list(map(getter, structs))
        if "z" in "".join([v for v in values if v is not None]):
            bad.extend(i for i, v in enumerate(values) if v is not None and not valid(v))
            continue
        start = 0
        while start < len(values):
            try:
                decode(_encode_json(values[start:]))
                break
            except (NativeDecodeError, TypeError) as exc:  # TypeError: not encodable
                match = _ELEMENT.search(str(exc))
                if match is None:  # cannot tell which: ask fromisoformat about each
                    bad.extend(
                        i
                        for i in range(start, len(values))
                        if values[i] is not None and not valid(values[i])
                    )
                    break
                failed = start + int(match.group(1))
                if values[failed] is not None and not valid(values[failed]):
                    bad.append(failed)
                start = failed + 1
    return bad
