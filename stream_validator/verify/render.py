"""Bounded, non-recursive renderings of payload values for violation messages.

``repr()`` recurses into containers (a RecursionError near depth 1000, which orjson
happily decodes), can be huge, and runs arbitrary ``__repr__`` code. Messages go into
DLQ envelopes and logs, so every rendering here is capped in length and never looks
inside a container.
"""

from __future__ import annotations

from datetime import date, datetime, time
from typing import Final

from stream_validator.verify.report import MAX_KEY_CHARS

SHOW_LIMIT: Final = 60
_NAME_LIMIT: Final = 40
# Ints beyond this many bits render as a size: str(int) is quadratic and refused past
# 4300 digits by Python itself.
_INT_BITS_SHOWN: Final = 128


def _cap(text: str, limit: int = SHOW_LIMIT) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def type_label(value: object) -> str:
    """The value's type name, capped (a class name is payload-independent but unbounded)."""
    return _cap(type(value).__name__, _NAME_LIMIT)


def show(value: object) -> str:
    """A short, single-line rendering of a value for violation messages.

    Scalars are shown as Python literals, capped at SHOW_LIMIT characters; a container
    is shown by its type and size only; any other object by its type name.
    """
    tp = type(value)
    if value is None or tp is bool or tp is float:
        return repr(value)
    if tp is int:
        assert isinstance(value, int)
        if value.bit_length() > _INT_BITS_SHOWN:
            return f"<int of {value.bit_length()} bits>"
        return repr(value)
    if tp is str or tp is bytes:
        assert isinstance(value, str | bytes)
        return _cap(repr(value[:SHOW_LIMIT]))
    if tp is datetime or tp is date or tp is time:
        assert isinstance(value, datetime | date | time)
        return _cap(value.isoformat())
    if tp is list or tp is dict or tp is tuple or tp is set or tp is frozenset:
        assert isinstance(value, list | dict | tuple | set | frozenset)
        return f"<{tp.__name__} of {len(value)} items>"
    return f"<{type_label(value)}>"


def show_name(name: object) -> str:
    """A field or key name for a message: quoted like repr, capped."""
    if type(name) is str:
        assert isinstance(name, str)
        return _cap(repr(name[:SHOW_LIMIT]))
    return show(name)


def key_name(key: object) -> str:
    """A payload key as a report or violation names it: a str cut to MAX_KEY_CHARS
    (ending in "..."), any other key rendered by ``show``."""
    if type(key) is str:
        assert isinstance(key, str)
        return key if len(key) <= MAX_KEY_CHARS else key[: MAX_KEY_CHARS - 3] + "..."
    return show(key)
