"""Replay selections: ranges, filters, and the canonical form stored as commit metadata."""

from __future__ import annotations

import pytest

from stream_validator.replay.selection import OffsetBound, Selection, parse_offset_bound
from stream_validator.verify import FlaggedViolation, Violation

PRICE_LOW = Violation("price", "below_min", "m")
SIZE_TYPE = Violation("size", "type_mismatch", "m")
GARBAGE = Violation(None, "undecodable", "m")


def _rejects(selection: Selection, *violations: Violation, **facts: str) -> str | None:
    defaults = {"route": "ticks", "contract_version": "1", "source_topic": "ticks"}
    return selection.rejects(**(defaults | facts), violations=violations)


def test_offset_bound_parses_default_and_per_partition_forms() -> None:
    """``N`` bounds every partition, ``P:N`` one partition, which wins over the default."""
    bound = parse_offset_bound(["10", "2:7"])
    assert (bound.get(0), bound.get(2)) == (10, 7)
    assert parse_offset_bound([]).get(0) is None
    assert not parse_offset_bound([]).is_set()


# Kafka offsets are int64 and partitions int32: past them the selection could not be stored
# (a TypeError traceback) or named a partition no topic can have.
@pytest.mark.parametrize(
    "text", ["x", "1:x", "-1", "-1:5", "1:2:3", str(2**63), f"{2**31}:1", "²", "1:²"]
)
def test_offset_bound_rejects_bad_text(text: str) -> None:
    """Anything but N or PARTITION:N with non-negative numbers is a ValueError."""
    with pytest.raises(ValueError):
        parse_offset_bound([text])


def test_in_range_applies_offsets_per_partition() -> None:
    """[from_offset, until_offset) holds per partition."""
    selection = Selection(from_offset=OffsetBound(2), until_offset=OffsetBound(None, ((1, 4),)))
    assert [o for o in range(6) if selection.in_range(0, o, None)] == [2, 3, 4, 5]
    assert [o for o in range(6) if selection.in_range(1, o, None)] == [2, 3]


def test_in_range_applies_timestamps_half_open() -> None:
    """from_ms is inclusive, until_ms exclusive; a record without a timestamp is out."""
    selection = Selection(from_ms=100, until_ms=200)
    assert [selection.in_range(0, 0, t) for t in (99, 100, 199, 200, None)] == [
        False,
        True,
        True,
        False,
        False,
    ]
    assert Selection().in_range(0, 0, None)


def test_filters_and_across_or_within() -> None:
    """Values of one filter are alternatives; different filters must all match."""
    selection = Selection(source_topics=frozenset({"a", "b"}), contract_versions=frozenset({"1"}))
    assert _rejects(selection, PRICE_LOW, source_topic="b") is None
    assert _rejects(selection, PRICE_LOW, source_topic="c") == "source_topic"
    assert _rejects(selection, PRICE_LOW, source_topic="a", contract_version="2") == (
        "contract_version"
    )


def test_route_filter() -> None:
    """Envelopes of another route are filtered out when the selection names a route."""
    assert _rejects(Selection(route="ticks"), PRICE_LOW) is None
    assert _rejects(Selection(route="bars"), PRICE_LOW) == "route"
    assert _rejects(Selection(), PRICE_LOW, route="anything") is None


def test_kind_and_field_must_match_one_violation() -> None:
    """--kind K --field F selects records with a violation of kind K on field F."""
    both = Selection(kinds=frozenset({"below_min"}), fields=frozenset({"size"}))
    assert _rejects(both, PRICE_LOW, SIZE_TYPE) == "kind"
    assert _rejects(Selection(kinds=frozenset({"type_mismatch"})), PRICE_LOW, SIZE_TYPE) is None
    assert _rejects(Selection(fields=frozenset({"size"})), PRICE_LOW) == "field"


def test_record_level_violations_match_field_record() -> None:
    """Record-level violations (field None) are selected with --field '<record>'."""
    assert _rejects(Selection(fields=frozenset({"<record>"})), GARBAGE) is None


def test_encode_decode_round_trip() -> None:
    """The canonical JSON decodes back to an equal selection."""
    selection = Selection(
        route="ticks",
        kinds=frozenset({"b", "a"}),
        fields=frozenset({"price"}),
        source_topics=frozenset({"ticks"}),
        contract_versions=frozenset({"1"}),
        from_ms=5,
        until_ms=9,
        from_offset=OffsetBound(1, ((2, 3),)),
        until_offset=OffsetBound(None, ((0, 10),)),
    )
    assert Selection.decode(selection.encode()) == selection


def test_digest_is_stable_and_tells_selections_apart() -> None:
    """Equal selections share a digest (set order does not matter); others differ."""
    one = Selection(kinds=frozenset({"a", "b"}))
    assert one.digest() == Selection(kinds=frozenset({"b", "a"})).digest()
    assert one.digest() != Selection(kinds=frozenset({"a"})).digest()
    assert len(one.digest()) == 12


@pytest.mark.parametrize(
    "text",
    ["", "[]", '{"format": 2}', '{"format": 1}', '{"format": 1, "route": 5}', "nope"],
)
def test_decode_rejects_anything_else(text: str) -> None:
    """Metadata not written by a replay is a ValueError, so it can be ignored."""
    with pytest.raises(ValueError):
        Selection.decode(text)


CROSSED = Violation(None, "rule_violation", "m", rule="crossed_book")
LOCKED_FLAG = FlaggedViolation(None, "rule_violation", "m", rule="locked_book")


def test_rules_select_records_listing_one_of_them() -> None:
    """--rule: some violation names the rule, a flagged one included; else "rule"."""
    selection = Selection(rules=frozenset({"crossed_book", "locked_book"}))
    assert _rejects(selection, PRICE_LOW, CROSSED) is None
    assert _rejects(selection, PRICE_LOW, LOCKED_FLAG) is None
    assert _rejects(selection, PRICE_LOW, GARBAGE) == "rule"


def test_rules_and_kinds_must_both_hold() -> None:
    """A rule filter is ANDed with the kind filter."""
    selection = Selection(rules=frozenset({"crossed_book"}), kinds=frozenset({"below_min"}))
    assert _rejects(selection, CROSSED) == "kind"
    assert _rejects(selection, PRICE_LOW) == "rule"
    assert _rejects(selection, PRICE_LOW, CROSSED) is None


def test_rules_round_trip_and_leave_older_digests_alone() -> None:
    """rules survive encode/decode; a selection without rules encodes as before (no key)."""
    selection = Selection(rules=frozenset({"crossed_book"}))
    assert Selection.decode(selection.encode()) == selection
    assert "rules" not in Selection().as_json()
    assert Selection.decode(Selection().encode()) == Selection()
