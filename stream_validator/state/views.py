"""The few fields of a record the per-symbol state reads, and how to read them in C. PURE.

``view_struct`` makes a msgspec Struct of just the state's fields (a payload decoded as one
reads nothing else); ``row_getters`` makes the column readers of a row, for those views or for
the verifier's own Structs (``struct_types_fit``: when their types are the ones the state
takes as they are).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

import msgspec

from stream_validator.contracts.statespec import SymbolStateSpec

__all__ = ["Getter", "Getters", "row_getters", "struct_types_fit", "view_struct"]

Getter = Callable[[Any], Any]
#: Reads key, seq, event time and quote (a tuple) of a row; None: the spec has no such check.
Getters = tuple[Getter, Getter | None, Getter | None, Getter | None]


def view_struct(spec: SymbolStateSpec, time_is_datetime: bool, quotes: int, *, strict: bool) -> Any:
    """A Struct of just the state's fields (None when two of them share a name).

    ``strict``: the key is a required str and the seq an int or null, so a batch of views
    needs no type checks; otherwise any value (the per-record path skips odd ones).
    """
    names = {"key": spec.key_field}
    types: dict[str, Any] = {"key": str if strict else Any}
    if spec.sequence_field is not None:
        names["seq"], types["seq"] = spec.sequence_field, int | None if strict else Any
    if spec.event_time_field is not None:
        names["time"] = spec.event_time_field
        types["time"] = datetime | None if time_is_datetime else Any
    for i in range(quotes):
        names[f"q{i}"], types[f"q{i}"] = spec.quote_fields[i], Any
    if len(set(names.values())) != len(names):
        return None
    fields = [
        (attr, types[attr]) if attr == "key" and strict else (attr, types[attr], None)
        for attr in names
    ]
    # A check the spec leaves out reads None (a class attribute, not a field), so every
    # strict view has a seq and a time.
    absent = {attr: None for attr in ("seq", "time") if attr not in names}
    # gc=False: views hold only scalars, and a batch of tracked objects would wake the collector
    return msgspec.defstruct("StateView", fields, rename=names, gc=False, namespace=absent)


def row_getters(
    make: Callable[..., Getter | None],
    key: str,
    seq: str | None,
    time: str | None,
    quote: Sequence[str],
) -> Getters | None:
    """The getters of a row's state fields, or None when ``make`` cannot read one of them
    (``make(*names)``: a getter of one named field's value, or of several as a tuple,
    like ``attrgetter``)."""
    key_get = make(key)
    seq_get = make(seq) if seq is not None else None
    time_get = make(time) if time is not None else None
    quote_get = make(*quote) if quote else None
    if key_get is None or (seq and seq_get is None) or (time and time_get is None):
        return None
    if quote and quote_get is None:
        return None
    if len(quote) == 1 and quote_get is not None:
        only = quote_get
        quote_get = lambda row: (only(row),)  # noqa: E731  # a one-name getter gives the value
    return key_get, seq_get, time_get, quote_get


def struct_types_fit(spec: SymbolStateSpec, field_types: Mapping[str, type]) -> bool:
    """The verifier's Structs hold the state's fields in the types the strict views demand:
    a str key, an int seq (or null), a datetime or a number as the event time."""
    if field_types.get(spec.key_field) is not str:
        return False
    if spec.sequence_field is not None and field_types.get(spec.sequence_field) is not int:
        return False
    time_field = spec.event_time_field
    return time_field is None or field_types.get(time_field) in (datetime, int, float)
