"""``_native.clean_outputs``: the service's clean outputs built natively (native/src/records.rs)."""

from __future__ import annotations

import gc
import sys
from typing import Any, NamedTuple

import pytest

from stream_validator._native import clean_outputs


class Source(NamedTuple):
    topic: str
    key: bytes | None
    value: bytes | None
    headers: list[Any]
    stamp: int | None


class Out(NamedTuple):
    kind: str
    topic: str
    key: bytes | None
    value: bytes | None
    headers: list[Any]
    stamp: int | None
    source: Source
    truncated: bool = False
    first: str | None = None


AT = (1, 2, 3, 4)


def test_each_output_is_the_named_tuple_built_by_keyword() -> None:
    records = [Source("s", b"k", b"v", [("h", b"x")], 5), Source("s", None, None, [], None)]
    got = clean_outputs(Out, "clean", "t", records, AT, (False, None))
    assert got == [Out("clean", "t", r.key, r.value, r.headers, r.stamp, r) for r in records]
    assert [type(o) for o in got] == [Out, Out]
    assert got[0].source is records[0] and got[0].headers is records[0].headers
    assert gc.is_tracked(got[0])  # a container like any tuple that holds a list


def test_references_are_counted_exactly() -> None:
    value = b"a value only this test holds" * 3
    record = Source("s", None, value, [], None)
    before = sys.getrefcount(value), sys.getrefcount(record)
    outputs = clean_outputs(Out, "clean", "t", [record] * 100, AT, (False, None))
    assert (sys.getrefcount(value), sys.getrefcount(record)) == (before[0] + 100, before[1] + 100)
    del outputs
    assert (sys.getrefcount(value), sys.getrefcount(record)) == before


def test_an_empty_batch_gives_an_empty_list() -> None:
    assert clean_outputs(Out, "clean", "t", [], AT, (False, None)) == []


@pytest.mark.parametrize(
    ("records", "error"),
    [([Source("s", None, None, [], None), "not a tuple"], TypeError), ([("s", b"k")], IndexError)],
    ids=["not-a-tuple", "too-short"],
)
def test_a_record_it_cannot_read_raises_and_leaks_nothing(
    records: list[Any], error: type[Exception]
) -> None:
    with pytest.raises(error):
        clean_outputs(Out, "clean", "t", records, AT, (False, None))


def test_the_output_type_must_be_a_tuple() -> None:
    with pytest.raises(TypeError, match="not a tuple"):
        clean_outputs(dict, "clean", "t", [], AT, (False, None))  # type: ignore[arg-type]
