"""What a sample of records holds, field by field: the observations a draft contract is
inferred from (``infer``). PURE: decoded records in, counts out; no I/O.

Every value is classified as the verifier would read it (``rules._check_field``): ``bool``
apart from ``int``; ``int`` and ``float`` (the decoder's own types); a string is a
``datetime`` when it looks like an ISO-8601 date *and time* (``YYYY-MM-DD[T ]HH:MM...``)
and ``datetime.fromisoformat`` reads it, with or without a UTC offset; ``object`` (dict)
and ``array`` (list). Objects and arrays are walked as deep as a contract may declare them
(``MAX_NESTING_DEPTH``), never deeper, so memory and time stay linear in the sample.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final

from stream_validator.contracts.model import MAX_NESTING_DEPTH

# A date and a time: ``fromisoformat`` alone also reads "20240101" and "2024-01-01",
# which are as likely codes or plain dates; those stay ``str``.
_DATETIME_SHAPE: Final = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}")

#: Value kinds, as the observations count them.
NULL, BOOL, INT, FLOAT, STR = "null", "bool", "int", "float", "str"
DATETIME_TZ, DATETIME_NAIVE, OBJECT, ARRAY = "datetime+offset", "datetime", "object", "array"


def value_kind(value: object) -> str:
    """The kind of one decoded JSON value (``NULL`` ... ``ARRAY``)."""
    if value is None:
        return NULL
    if value is True or value is False:
        return BOOL
    if isinstance(value, int):
        return INT
    if isinstance(value, float):
        return FLOAT
    if isinstance(value, str):
        if _DATETIME_SHAPE.match(value):
            try:
                parsed = datetime.fromisoformat(value)
            except ValueError:
                return STR
            return DATETIME_TZ if parsed.utcoffset() is not None else DATETIME_NAIVE
        return STR
    if isinstance(value, dict):
        return OBJECT
    if isinstance(value, list | tuple):
        return ARRAY
    return type(value).__name__  # not from JSON: never typed


@dataclass(slots=True)
class Observed:
    """The values seen at one path (a record's field, an object's field, an array's items).

    ``present``: values seen (null included); ``kinds``: per kind; ``null_records``: records
    with a null here at least once (the verifier's null rate of a nested path counts records,
    not values); ``lo``/``hi``: the numeric extremes; ``objects``/``children``: the object
    values and their fields; ``min_items``/``max_items``/``item``: the array values' lengths
    and their items; ``too_deep``: a container at a depth no contract may declare.
    """

    depth: int
    present: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    null_records: int = 0
    lo: int | float | None = None
    hi: int | float | None = None
    objects: int = 0
    children: dict[str, Observed] = field(default_factory=dict)
    min_items: int | None = None
    max_items: int | None = None
    item: Observed | None = None
    too_deep: bool = False
    _last_null: int = -1

    def add(self, value: Any, record: int) -> None:
        """Count one value of record number ``record`` (0-based, increasing)."""
        self.present += 1
        kind = value_kind(value)
        self.kinds[kind] += 1
        if kind == NULL:
            if self._last_null != record:
                self._last_null = record
                self.null_records += 1
        elif kind in (INT, FLOAT):
            # NaN (never from JSON) would poison the extremes: it cannot be compared.
            if value == value:
                if self.lo is None or value < self.lo:
                    self.lo = value
                if self.hi is None or value > self.hi:
                    self.hi = value
        elif kind == OBJECT:
            self._add_object(value, record)
        elif kind == ARRAY:
            self._add_array(value, record)

    def _add_object(self, value: dict[Any, Any], record: int) -> None:
        self.objects += 1
        if self.depth >= MAX_NESTING_DEPTH:
            self.too_deep = True
            return
        children = self.children
        for key, inner in value.items():
            child = children.get(key)
            if child is None:
                child = children[key] = Observed(self.depth + 1)
            child.add(inner, record)

    def _add_array(self, value: list[Any] | tuple[Any, ...], record: int) -> None:
        size = len(value)
        if self.min_items is None or size < self.min_items:
            self.min_items = size
        if self.max_items is None or size > self.max_items:
            self.max_items = size
        if self.depth >= MAX_NESTING_DEPTH:
            self.too_deep = True
            return
        item = self.item
        if item is None:
            item = self.item = Observed(self.depth + 1)
        for inner in value:
            item.add(inner, record)


class SampleObservations:
    """Every record of a sample, folded in one by one (``add``), plus the lines or values
    that are no record at all (``skip``: undecodable, not an object, duplicate keys, ...)."""

    def __init__(self) -> None:
        self.root = Observed(0)
        self.records = 0
        self.skipped: Counter[str] = Counter()
        #: The first line (or sample position, 1-based) of each skip reason.
        self.first_skipped: dict[str, int] = {}

    def add(self, record: dict[Any, Any]) -> None:
        """Fold in one record (a decoded JSON object)."""
        self.root._add_object(record, self.records)
        self.root.present += 1
        self.records += 1

    def skip(self, reason: str, where: int) -> None:
        """Count a line that is no record: ``reason`` (a closed set of texts), ``where`` its
        line or sample position."""
        self.skipped[reason] += 1
        self.first_skipped.setdefault(reason, where)
