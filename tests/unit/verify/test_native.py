"""NativeCheck.screen: each payload decoded on its own, a failure declining only itself."""

from __future__ import annotations

from datetime import datetime

import pytest

from stream_validator import FieldSpec, RuleSpec, SchemaContract
from stream_validator.verify.native import PROBE, PROBE_DECLINED, NativeCheck

CONTRACT = SchemaContract(
    "native",
    [
        FieldSpec("sym", str),
        FieldSpec("ts", datetime, require_timezone=True),
        FieldSpec("bid", float, is_nullable=True),
        FieldSpec("ask", float, is_nullable=True),
        FieldSpec("sz", int, is_nullable=True, min_value=0),
    ],
    rules=[RuleSpec.of("crossed", "bid <= ask")],
)
GOOD = b'{"sym":"A","ts":"2026-11-30T14:00:00+00:00","bid":1.5,"ask":2.5,"sz":3}'
# A null in a field the rule reads: the rule holds (an empty side of the book).
NULLS = b'{"sym":"A","ts":"2026-11-30T14:00:00Z","bid":null,"ask":2.5,"sz":null}'
# Each fails the native decode: a type, a bound, a rule, syntax, not an object.
FAILING = [
    GOOD.replace(b'"sz":3', b'"sz":-3'),
    GOOD.replace(b"1.5", b'"1.5"'),
    GOOD.replace(b"1.5", b"9.5"),
    GOOD[:-1],
    b"[1]",
    GOOD.replace(b'"A"', b"null"),  # holds the null probe, not a nullable null
]
# Each decodes natively but the rules must judge it (a repeated key, a lowercase 'z').
DUBIOUS = [
    GOOD.replace(b'"sz":3', b'"sz":4,"sz":3'),
    GOOD.replace(b"+00:00", b"z"),
    NULLS.replace(b'"sz":null', b'"sz":null,"sz":null'),  # its null is not counted
]


def screen(batch: list[object]) -> tuple[list[int], list[int]]:
    nulls = [0, 0, 0]
    declined = NativeCheck(CONTRACT, max_payload_bytes=200).screen(batch, nulls)
    return declined, nulls


@pytest.mark.parametrize("bad", FAILING + DUBIOUS)
@pytest.mark.parametrize(
    "where", [[0], [5], [2], [0, 1], [1, 2, 3], [0, 2, 4], [0, 1, 2, 3, 4, 5]], ids=str
)
def test_a_failure_declines_only_itself(bad: bytes, where: list[int]) -> None:
    """Failing payloads anywhere in a chunk (first, last, in a row, all) are declined, each
    payload between them is accepted and its nulls counted."""
    batch = [GOOD, NULLS, GOOD, NULLS, NULLS, GOOD]
    for i in where:
        batch[i] = bad
    declined, nulls = screen(batch)  # type: ignore[arg-type]
    assert declined == where
    kept = [p for i, p in enumerate(batch) if i not in where]
    assert nulls == [kept.count(NULLS), 0, kept.count(NULLS)]


def test_failures_of_every_kind_in_one_chunk() -> None:
    """Each kind of failure, between clean payloads, declines exactly its own position."""
    batch = [x for bad in FAILING + DUBIOUS for x in (GOOD, bad)] + [NULLS]
    declined, nulls = screen(batch)  # type: ignore[arg-type]
    assert declined == list(range(1, 2 * len(FAILING + DUBIOUS), 2))
    assert nulls == [1, 0, 1]


def test_payloads_not_to_decode_are_declined_alone() -> None:
    """A tombstone, a str, a bytearray and an oversized payload are declined without their
    neighbours (the full rules report them)."""
    big = GOOD.replace(b'"A"', b'"' + b"A" * 200 + b'"')
    batch = [GOOD, None, NULLS, GOOD.decode(), bytearray(GOOD), big, GOOD]
    assert screen(batch) == ([1, 3, 4, 5], [1, 0, 1])


def test_an_empty_chunk() -> None:
    """No payloads: nothing declined, nothing counted."""
    assert screen([]) == ([], [0, 0, 0])


@pytest.mark.parametrize("bad", [PROBE_DECLINED, PROBE_DECLINED - 1])
def test_a_chunk_that_starts_nearly_all_bad_goes_to_the_rules(bad: int) -> None:
    """When PROBE_DECLINED of a chunk's first PROBE rows do not decode (a vendor incident),
    the rest of the chunk is declined without a native try, its good rows too: the full
    rules judge them. One fewer, and the rest is decoded natively as usual."""
    batch = [FAILING[i % 4] if i < bad else GOOD for i in range(PROBE)] + [GOOD, NULLS] * 8
    declined, nulls = screen(batch)  # type: ignore[arg-type]
    rest = list(range(PROBE, len(batch))) if bad >= PROBE_DECLINED else []
    assert declined == list(range(bad)) + rest
    assert nulls == ([0, 0, 0] if rest else [8, 0, 8])


def test_a_short_chunk_is_never_cut() -> None:
    """A chunk of PROBE rows or fewer is decoded whole, however many fail."""
    batch = [FAILING[3]] * (PROBE - 1) + [GOOD]
    assert screen(batch) == (list(range(PROBE - 1)), [0, 0, 0])


@pytest.mark.parametrize("dubious", DUBIOUS)
def test_a_mostly_declined_chunk_still_finds_its_dubious_rows(dubious: bytes) -> None:
    """When most rows of a chunk fail to decode, the commas and 'z's are counted in the few
    accepted rows only: a repeated key or a lowercase 'z' among them is still declined."""
    batch: list[object] = [FAILING[i % len(FAILING)] for i in range(12)]
    batch[3:3] = [GOOD, dubious, NULLS]
    declined, nulls = screen(batch)
    assert declined == [i for i in range(len(batch)) if i not in (3, 5)]
    assert nulls == [1, 0, 1]
