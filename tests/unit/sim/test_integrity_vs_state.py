"""The stateful scenarios against the per-symbol state alone (tests/unit/service/plan/
test_planner_state.py runs them through the service pipeline with tick.yaml's state):
each raises exactly the per-symbol event it stands for, and a clean run raises none."""

from __future__ import annotations

from collections import Counter

from stream_validator.codec import decode_json
from stream_validator.contracts.statespec import SymbolStateSpec
from stream_validator.sim import Entity, Schedule, Simulator
from stream_validator.sim.integrity import SEQUENCE_GAP
from stream_validator.state import SymbolEvent, SymbolStateTracker

SEQUENCE = SymbolStateSpec(sequence_field="seq")
EVENT_TIME = SymbolStateSpec(sequence_field=None, event_time_field="event_ts")
FROZEN = SymbolStateSpec(
    sequence_field=None, quote_fields=("price", "bid", "ask"), frozen_max_updates=50
)


def events(spec: SymbolStateSpec, count: int, *specs: str) -> list[SymbolEvent]:
    sim = Simulator(Entity.TICK, symbols=8, seed=11, schedule=Schedule.parse(specs))
    tracker = SymbolStateTracker(spec)
    out: list[SymbolEvent] = []
    for message in sim.take(count):
        assert message.value is not None
        out.extend(tracker.observe_record(0, decode_json(message.value)))
    return out


def kinds(found: list[SymbolEvent]) -> Counter[str]:
    return Counter(event.kind.value for event in found)


def test_a_clean_run_raises_no_symbol_event() -> None:
    """Clean ticks keep sequence and event time in order and never freeze a quote."""
    assert events(SEQUENCE, 3000) == []
    assert events(EVENT_TIME, 3000) == []
    assert events(FROZEN, 3000) == []


def test_sequence_gap_raises_one_gap_of_its_size_per_gapped_tick() -> None:
    """Each gapped tick (after its symbol's first) is one sequence_gap of SEQUENCE_GAP numbers."""
    found = events(SEQUENCE, 1000, "sequence_gap@everyn100+3")
    assert kinds(found) == {"sequence_gap": 27}
    assert {event.count for event in found} == {SEQUENCE_GAP}


def test_sequence_regression_raises_only_regressions() -> None:
    """Each regressed tick is one sequence_regression, and it leaves no gap behind."""
    assert kinds(events(SEQUENCE, 1000, "sequence_regression@everyn100+3")) == {
        "sequence_regression": 27
    }


def test_stale_timestamp_goes_back_in_event_time() -> None:
    """A stale event time is an event_time_regression for its symbol."""
    assert kinds(events(EVENT_TIME, 1000, "stale_timestamp@everyn100+3")) == {
        "event_time_regression": 27
    }


def test_frozen_quote_raises_one_alert_per_frozen_symbol() -> None:
    """Symbols frozen for more than 50 updates raise one frozen_quote event each."""
    found = events(FROZEN, 1000, "frozen_quote@n0+1000")
    assert set(kinds(found)) == {"frozen_quote"}
    assert len(found) == len({event.symbol for event in found}) >= 3
