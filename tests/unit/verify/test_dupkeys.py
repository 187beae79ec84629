"""The duplicate-key checks are exact: no false negatives, no false positives."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from stream_validator.codec import loads_raw
from stream_validator.verify.dupkeys import duplicate_keys, no_duplicates_possible

KEYS = st.sampled_from(["price", "pr", "a,b", 'q"', "x\\", ":", "é", ""])
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.sampled_from(['", "price": 1', "a\\b", ",:"])
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(st.tuples(KEYS, inner), max_size=3).map(lambda ps: {"__pairs__": ps})
    ),
    max_leaves=6,
)
SPACE = st.sampled_from(["", " ", "\n", "\t ", "\r\n"])


def spell_key(key: str, escape_all: bool) -> str:
    """A JSON string token for key, optionally with every character \\u-escaped."""
    if escape_all:
        return '"' + "".join(f"\\u{ord(c):04x}" for c in key) + '"'
    return json.dumps(key, ensure_ascii=False)


def encode(value: object, draw_space: st.DrawFn, escape: bool) -> str:
    if isinstance(value, dict):
        members = [
            f"{draw_space(SPACE)}{spell_key(k, escape)}{draw_space(SPACE)}:"
            f"{draw_space(SPACE)}{encode(v, draw_space, escape)}"
            for k, v in value["__pairs__"]
        ]
        return "{" + ",".join(members) + "}"
    if isinstance(value, list):
        return "[" + ",".join(encode(v, draw_space, escape) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False)


@st.composite
def objects(draw: st.DrawFn) -> tuple[bytes, list[str]]:
    pairs = draw(st.lists(st.tuples(KEYS, VALUES), max_size=6))
    escape = draw(st.booleans())
    raw = encode({"__pairs__": pairs}, draw, escape).encode()
    expected: list[str] = []
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen and key not in expected:
            expected.append(key)
        seen.add(key)
    return raw, expected


@settings(max_examples=500, deadline=None)
@given(objects())
def test_duplicate_keys_finds_exactly_the_repeated_top_level_keys(
    case: tuple[bytes, list[str]],
) -> None:
    """Any spelling (escapes, whitespace, nesting, quotes in strings) gives the exact duplicates."""
    raw, expected = case
    assert duplicate_keys(raw) == expected


@settings(max_examples=500, deadline=None)
@given(objects())
def test_prefilter_never_clears_an_object_with_duplicates(case: tuple[bytes, list[str]]) -> None:
    """The cheap comma count only says "no duplicates" when there are none."""
    raw, expected = case
    decoded = loads_raw(raw)
    if no_duplicates_possible(raw, len(decoded)):
        assert expected == []


def test_prefilter_clears_a_plain_record() -> None:
    """A plain record without commas in its strings needs no token scan (the point of it)."""
    raw = b'{"symbol":"A","event_ts":"2026-11-30T14:00:00+00:00","price":1.5}'
    assert no_duplicates_possible(raw, 3)
