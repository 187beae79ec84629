"""RouteProcessor.successor: a reloaded contract's processor, carrying the per-symbol state
and the null window on only while what they depend on is unchanged."""

from __future__ import annotations

from dataclasses import replace

from stream_validator.contracts import load_contract
from stream_validator.contracts.model import FieldSpec
from stream_validator.service.plan.planner import RouteProcessor
from tests.support.ticks import TICK_YAML

from .test_planner_state import plan, processor, ticks


def reloaded(old: RouteProcessor, **changes: object) -> tuple[RouteProcessor, str]:
    contract = replace(old.route.contract, **changes)  # type: ignore[arg-type]
    return old.successor(replace(old.route, contract=contract))


def gaps(p: RouteProcessor, seqs: list[int]) -> int:
    summary = plan(p, ticks(seqs)).state
    assert summary is not None
    return summary.counts.get("sequence_gap", 0)


def test_an_unchanged_state_section_carries_the_tracker_on() -> None:
    """A new version with the same state: seq 10 after 0-4 is still a gap of 5."""
    old = processor()
    assert gaps(old, [0, 1, 2, 3, 4]) == 0
    new, fate = reloaded(old, version="2", description="widened")
    assert fate == "carried"
    assert new.state is not None and new.state.tracker is old.state.tracker  # type: ignore[union-attr]
    assert gaps(new, [10]) == 1


def test_a_changed_state_section_starts_a_fresh_tracker() -> None:
    """Another sequence window: a fresh tracker, so seq 10 is a first sighting, no gap."""
    old = processor()
    gaps(old, [0, 1, 2, 3, 4])
    spec = old.route.contract.state
    assert spec is not None
    new, fate = reloaded(old, version="2", state=replace(spec, sequence_window=3))
    assert fate == "reset"
    assert gaps(new, [10]) == 0


def test_a_changed_type_of_a_field_the_state_reads_starts_a_fresh_tracker() -> None:
    """The tracker holds the values of the fields it reads: their types must not change."""
    old = processor(event_time_field="event_ts")
    fields = tuple(
        FieldSpec("event_ts", float) if f.name == "event_ts" else f
        for f in old.route.contract.fields
    )
    _, fate = reloaded(old, fields=fields)
    assert fate == "reset"


def test_a_contract_without_state_keeps_none() -> None:
    """The new contract drops its state section: the processor keeps no state."""
    new, fate = reloaded(processor(), state=None)
    assert (fate, new.state) == ("none", None)


def test_the_null_window_goes_on_only_with_the_same_ceiling_and_nullable_fields() -> None:
    """Same ceiling and nullable fields: the window carries on; another ceiling: a new one."""
    contract = load_contract(TICK_YAML)
    old = processor()
    same, _ = reloaded(old, version="2")
    other, _ = reloaded(old, max_allowed_null_pct=contract.max_allowed_null_pct + 1)
    assert same._null_window is old._null_window
    assert other._null_window is not old._null_window


def test_a_reset_tracker_keeps_the_choice_of_native_or_reference() -> None:
    """SV_NATIVE=0 (``native_state=False``) still holds after a reload that resets the state:
    the fresh tracker is the Python reference again, not the native one."""
    from stream_validator.state import SymbolStateTracker
    from stream_validator.state.native import NativeSymbolStateTracker, native_state_available

    old = processor()
    python_only = RouteProcessor(
        old.route,
        consumer_group="g",
        max_message_bytes=1_048_576,
        null_window=500,
        native_state=False,
    )
    assert python_only.state is not None
    assert type(python_only.state.tracker) is SymbolStateTracker
    spec = old.route.contract.state
    assert spec is not None
    new, fate = reloaded(python_only, version="2", state=replace(spec, sequence_window=3))
    assert fate == "reset" and new.state is not None
    assert type(new.state.tracker) is SymbolStateTracker
    if native_state_available():
        native, _ = reloaded(old, version="2", state=replace(spec, sequence_window=3))
        assert native.state is not None
        assert isinstance(native.state.tracker, NativeSymbolStateTracker)
