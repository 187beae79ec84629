"""The ``state`` section of a contract file: SymbolStateSpec and its load errors."""

from __future__ import annotations

from datetime import datetime

import pytest

from stream_validator.contracts.rulespec import RuleAction
from stream_validator.contracts.statespec import (
    SymbolStateSpec,
    state_spec_from_mapping,
)
from stream_validator.errors import StateSpecError
from stream_validator.yamlfile import parse_yaml

TYPES: dict[str, type] = {
    "symbol": str,
    "seq": int,
    "event_ts": datetime,
    "bid": float,
    "ask": float,
    "halted": bool,
}


def problems_of(raw: object) -> list[str]:
    """The problems state_spec_from_mapping reports for ``raw``."""
    with pytest.raises(StateSpecError) as info:
        state_spec_from_mapping(raw, TYPES)
    return info.value.problems


def test_yaml_state_section_becomes_a_spec() -> None:
    """The proposed YAML form maps onto every SymbolStateSpec setting."""
    document = parse_yaml(
        """
state:
  key: symbol
  max_symbols: 5000
  sequence: {field: seq, window: 4, resync_after: null, action: quarantine}
  event_time: {field: event_ts, max_regression_s: 1.5}
  frozen_quote: {fields: [bid, ask], max_updates: 500, max_seconds: 120}
"""
    )
    assert isinstance(document, dict)
    assert state_spec_from_mapping(document["state"], TYPES) == SymbolStateSpec(
        key_field="symbol",
        sequence_field="seq",
        sequence_window=4,
        resync_after=None,
        sequence_action=RuleAction.QUARANTINE,
        event_time_field="event_ts",
        max_time_regression_s=1.5,
        event_time_action=RuleAction.FLAG,
        quote_fields=("bid", "ask"),
        frozen_max_updates=500,
        frozen_max_s=120.0,
        max_symbols=5000,
    )


def test_no_state_section_gives_none() -> None:
    """A contract without 'state' tracks nothing."""
    assert state_spec_from_mapping(None, TYPES) is None


def test_sections_left_out_are_disabled() -> None:
    """Only a key: no sequence, no event time, no frozen-quote check."""
    spec = state_spec_from_mapping({"key": "symbol"}, TYPES)
    assert spec is not None
    assert (spec.sequence_field, spec.event_time_field, spec.quote_fields) == (None, None, ())


def test_key_must_be_a_declared_str_field() -> None:
    """A numeric key field is refused with the expected type."""
    assert problems_of({"key": "seq"}) == ["state.key: field 'seq' is int, expected str"]


def test_sequence_field_must_be_int_not_bool() -> None:
    """bool is never a sequence number."""
    (problem,) = problems_of({"key": "symbol", "sequence": {"field": "halted"}})
    assert problem == "state.sequence.field: field 'halted' is bool, expected int"


def test_undeclared_field_is_named() -> None:
    """A typo in a field name is reported with its place."""
    (problem,) = problems_of({"key": "symbol", "event_time": {"field": "event_tss"}})
    assert problem == "state.event_time.field must name a declared field, got 'event_tss'"


def test_unknown_keys_are_rejected_per_section() -> None:
    """A typo such as 'windw' cannot silently leave the default window."""
    (problem,) = problems_of({"key": "symbol", "sequence": {"field": "seq", "windw": 3}})
    assert problem.startswith("state.sequence: unknown key(s) windw")


def test_frozen_quote_needs_a_limit() -> None:
    """A frozen_quote section without max_updates or max_seconds is an error."""
    assert problems_of({"key": "symbol", "frozen_quote": {"fields": ["bid"]}}) == [
        "state.frozen_quote needs max_updates or max_seconds"
    ]


def test_frozen_seconds_need_event_time() -> None:
    """max_seconds is measured in event time, so event_time must be declared."""
    (problem,) = problems_of(
        {"key": "symbol", "frozen_quote": {"fields": ["bid"], "max_seconds": 60}}
    )
    assert "needs state.event_time" in problem


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"max_symbols": 0}, "state.max_symbols must be >= 1"),
        ({"max_symbols": 1.5}, "state.max_symbols must be a whole number >= 0, got 1.5"),
        ({"sequence": {"field": "seq", "window": -1}}, "state.sequence.window must be a whole"),
        ({"sequence": {"field": "seq", "action": "drop"}}, "must be flag or quarantine"),
        ({"sequence": {"field": "seq", "action": ["flag"]}}, "must be flag or quarantine"),
        ({"event_time": {"field": "event_ts", "action": {"a": 1}}}, "must be flag or quarantine"),
        ({"event_time": {"field": "event_ts", "max_regression_s": "1s"}}, "seconds >= 0"),
    ],
)
def test_bad_limits_are_named(section: dict[str, object], message: str) -> None:
    """Out-of-range or mistyped limits name their key."""
    with pytest.raises(StateSpecError) as info:
        state_spec_from_mapping({"key": "symbol", **section}, TYPES)
    assert message in str(info.value)


def test_every_problem_is_listed() -> None:
    """Problems in several sections are reported together."""
    problems = problems_of({"key": "nope", "sequence": {"field": "nope"}, "extra": 1})
    assert len(problems) == 3


def test_hole_bounds_are_read_from_the_sequence_section() -> None:
    """state.sequence.max_holes and max_holes_total set the hole bounds."""
    raw = {"key": "symbol", "sequence": {"field": "seq", "max_holes": 7, "max_holes_total": 70}}
    spec = state_spec_from_mapping(raw, TYPES)
    assert spec is not None
    assert (spec.max_holes, spec.max_holes_total) == (7, 70)


def test_hole_bounds_default_to_1000_and_100000() -> None:
    """Without them, a symbol holds 1,000 hole ranges at most, all symbols 100,000."""
    spec = state_spec_from_mapping({"key": "symbol", "sequence": {"field": "seq"}}, TYPES)
    assert spec is not None
    assert (spec.max_holes, spec.max_holes_total) == (1_000, 100_000)


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("max_holes", 0, "state.sequence.max_holes must be 1 .. 10000"),
        ("max_holes", 10_001, "state.sequence.max_holes must be 1 .. 10000"),
        ("max_holes_total", 0, "state.sequence.max_holes_total must be >= 1"),
    ],
)
def test_hole_bounds_out_of_range_are_refused(key: str, value: int, problem: str) -> None:
    """No bound of zero holes, and no per-symbol bound whose list moves cost more than µs."""
    raw = {"key": "symbol", "sequence": {"field": "seq", key: value}}
    assert problem in problems_of(raw)


@pytest.mark.parametrize(
    "bad",
    [
        {"sequence_window": -1},
        {"max_symbols": 0},
        {"resync_after": 0},
        {"frozen_max_updates": 0},
        {"frozen_max_s": -1.0},
    ],
)
def test_spec_rejects_nonsense(bad: dict[str, object]) -> None:
    """Negative windows, zero capacity and zero limits are refused at setup."""
    with pytest.raises(ValueError):
        SymbolStateSpec(**bad)  # type: ignore[arg-type]
