"""The DLQ circuit breaker: trips, cool-down, probes, manual resume, its settings."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_validator.config.breaker import BreakerAction, BreakerSpec, breaker_spec_from_mapping
from stream_validator.errors import ConfigError
from stream_validator.service.breaker.machine import BreakerState, CircuitBreaker

CLOSED, OPEN, HALF_OPEN = BreakerState.CLOSED, BreakerState.OPEN, BreakerState.HALF_OPEN


class FakeClock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    """A fresh fake clock."""
    return FakeClock()


@pytest.fixture
def make_breaker(clock: FakeClock) -> Callable[..., CircuitBreaker]:
    """A breaker factory on the fake clock: keyword arguments override BreakerSpec."""

    def make(**spec: object) -> CircuitBreaker:
        return CircuitBreaker("ticks", BreakerSpec(**spec), clock)  # type: ignore[arg-type]

    return make


Make = Callable[..., CircuitBreaker]


def bad(n: int) -> tuple[int, list[int]]:
    """A batch of n records, all quarantined."""
    return n, list(range(n))


def good(n: int) -> tuple[int, list[int]]:
    """A batch of n clean records."""
    return n, []


def tripped(breaker: CircuitBreaker) -> CircuitBreaker:
    """The breaker after bad records opened it (a run, or a full window of them)."""
    breaker.record(*bad(breaker.spec.max_consecutive or breaker.spec.window_records))
    assert breaker.state is OPEN
    return breaker


# --- tripping --------------------------------------------------------------------------


def test_new_breaker_is_closed_and_consuming(make_breaker: Make) -> None:
    """A fresh breaker lets the route consume."""
    breaker = make_breaker()
    assert (breaker.state, breaker.consuming, breaker.trips) == (CLOSED, True, 0)


def test_share_over_threshold_trips_once_window_is_full(make_breaker: Make) -> None:
    """6 of 10 quarantined with a 0.5 threshold opens the breaker."""
    breaker = make_breaker(window_records=10, max_consecutive=None)
    transition = breaker.record(10, [0, 2, 4, 6, 8, 9])
    assert transition is not None
    assert (transition.before, transition.after, transition.route) == (CLOSED, OPEN, "ticks")
    assert transition.reason == "quarantined share 0.600 over the last 10 records > 0.5"
    assert breaker.trips == 1


def test_share_equal_to_threshold_does_not_trip(make_breaker: Make) -> None:
    """Exactly half quarantined with a 0.5 threshold stays closed."""
    breaker = make_breaker(window_records=10, max_consecutive=None)
    assert breaker.record(10, [0, 2, 4, 6, 8]) is None


def test_share_is_not_judged_before_min_records(make_breaker: Make) -> None:
    """Five bad records out of five do not trip a window that needs ten."""
    breaker = make_breaker(window_records=10, max_consecutive=None)
    assert breaker.record(*bad(5)) is None


def test_min_records_lets_a_partial_window_trip(make_breaker: Make) -> None:
    """With min_records=5, five bad records out of five trip."""
    breaker = make_breaker(window_records=10, min_records=5, max_consecutive=None)
    assert breaker.record(*bad(5)) is not None


def test_old_records_leave_the_window(make_breaker: Make) -> None:
    """Five bad then ten good: the window of ten holds no bad record."""
    breaker = make_breaker(window_records=10, max_consecutive=None)
    breaker.record(*bad(5))
    breaker.record(*good(10))
    assert breaker.window_share == 0.0


def test_batch_larger_than_window_keeps_its_last_records(make_breaker: Make) -> None:
    """Of a 30-record batch, only the last 10 are in a 10-record window."""
    breaker = make_breaker(window_records=10, max_consecutive=None)
    breaker.record(30, list(range(20, 24)))
    assert breaker.window_share == pytest.approx(0.4)


def test_consecutive_quarantined_records_trip(make_breaker: Make) -> None:
    """A run of max_consecutive quarantined records opens the breaker."""
    breaker = make_breaker(max_consecutive=3)
    transition = breaker.record(10, [4, 5, 6])
    assert transition is not None
    assert transition.reason == "3 consecutive records quarantined (limit 3)"


def test_run_counts_across_batches(make_breaker: Make) -> None:
    """Two quarantined at the end of one batch and one at the start of the next is 3."""
    breaker = make_breaker(max_consecutive=3)
    assert breaker.record(5, [3, 4]) is None
    assert breaker.record(5, [0]) is not None


def test_a_clean_record_breaks_the_run(make_breaker: Make) -> None:
    """Bad, bad, good, bad, bad never reaches a limit of 3."""
    breaker = make_breaker(max_consecutive=3)
    assert breaker.record(5, [0, 1, 3, 4]) is None


def test_run_limit_can_be_disabled(make_breaker: Make) -> None:
    """max_consecutive=None ignores runs (a partial window never trips either)."""
    breaker = make_breaker(max_consecutive=None, window_records=10_000)
    assert breaker.record(*bad(5000)) is None


def test_out_of_range_indices_are_refused(make_breaker: Make) -> None:
    """An index past the batch is a caller bug, not a silent miscount."""
    with pytest.raises(ValueError, match=r"\[0, 3\)"):
        make_breaker().record(3, [1, 3])


# --- open, cool-down, probe, resume ------------------------------------------------------


def test_pause_breaker_stops_consuming_while_open(make_breaker: Make) -> None:
    """An open pause breaker tells the service to keep the route paused."""
    breaker = tripped(make_breaker(action=BreakerAction.PAUSE, max_consecutive=3))
    assert breaker.consuming is False


def test_alert_breaker_keeps_consuming_while_open(make_breaker: Make) -> None:
    """An open alert breaker only alerts: the route keeps consuming."""
    breaker = tripped(make_breaker(action=BreakerAction.ALERT, max_consecutive=3))
    assert breaker.consuming is True


def test_open_breaker_ignores_outcomes(make_breaker: Make) -> None:
    """Records while open neither re-trip nor count."""
    breaker = tripped(make_breaker(max_consecutive=3))
    assert breaker.record(*bad(50)) is None
    assert breaker.trips == 1


def test_cool_down_must_pass_before_half_open(make_breaker: Make, clock: FakeClock) -> None:
    """poll() changes nothing before the cool-down and moves to half_open after it."""
    breaker = tripped(make_breaker(max_consecutive=3, cool_down_s=60.0))
    clock.now += 59.9
    assert breaker.poll() is None
    clock.now += 0.1
    transition = breaker.poll()
    assert transition is not None
    assert (transition.after, transition.reason) == (HALF_OPEN, "cool-down of 60 s over")
    assert breaker.consuming is True


def half_open(breaker: CircuitBreaker, clock: FakeClock) -> CircuitBreaker:
    """The breaker tripped and cooled down."""
    tripped(breaker)
    clock.now += breaker.spec.cool_down_s
    breaker.poll()
    assert breaker.state is HALF_OPEN
    return breaker


def test_passing_probe_closes_and_empties_the_window(make_breaker: Make, clock: FakeClock) -> None:
    """A clean probe batch closes the breaker with an empty window."""
    breaker = half_open(make_breaker(max_consecutive=3, probe_records=10), clock)
    transition = breaker.record(10, [4])
    assert transition is not None
    assert (transition.after, transition.reason) == (
        CLOSED,
        "probe passed: quarantined share 0.100",
    )
    assert breaker.snapshot()["window_records"] == 0


def test_failing_probe_reopens_with_a_new_cool_down(make_breaker: Make, clock: FakeClock) -> None:
    """A probe over the share limit reopens: counted as a reopen, not a trip."""
    breaker = half_open(
        make_breaker(max_consecutive=None, probe_records=4, window_records=10), clock
    )
    transition = breaker.record(4, [0, 2, 3])
    assert transition is not None
    assert transition.after is OPEN
    assert transition.reason == "probe failed: quarantined share 0.750 over 4 records > 0.5"
    assert (breaker.trips, breaker.reopens) == (1, 1)
    assert breaker.poll() is None  # the cool-down starts again


def test_probe_fails_at_once_on_a_run(make_breaker: Make, clock: FakeClock) -> None:
    """A run over the limit during the probe reopens before probe_records are seen."""
    breaker = half_open(make_breaker(max_consecutive=3, probe_records=100), clock)
    transition = breaker.record(*bad(3))
    assert transition is not None
    assert transition.reason == "probe failed: 3 consecutive records quarantined (limit 3)"


def test_probe_waits_for_enough_records(make_breaker: Make, clock: FakeClock) -> None:
    """A probe of 10 records is decided only once 10 have been seen, over batches."""
    breaker = half_open(make_breaker(max_consecutive=3, probe_records=10), clock)
    assert breaker.record(*good(6)) is None
    assert breaker.state is HALF_OPEN
    transition = breaker.record(*good(4))
    assert transition is not None
    assert transition.after is CLOSED


def test_run_before_the_trip_does_not_count_in_the_probe(
    make_breaker: Make, clock: FakeClock
) -> None:
    """The bad run that tripped the breaker is forgotten: one bad probe record is not 3."""
    breaker = half_open(make_breaker(max_consecutive=3, probe_records=10), clock)
    assert breaker.record(10, [0]) is not None
    assert breaker.state is CLOSED


def test_manual_resume_closes_an_open_breaker(make_breaker: Make) -> None:
    """resume() closes at once, without waiting for the cool-down."""
    breaker = tripped(make_breaker(action=BreakerAction.PAUSE, max_consecutive=3))
    transition = breaker.resume()
    assert transition is not None
    assert (transition.before, transition.after, transition.reason) == (
        OPEN,
        CLOSED,
        "resumed by operator",
    )
    assert breaker.consuming is True


def test_resume_of_a_closed_breaker_is_a_no_op(make_breaker: Make) -> None:
    """resume() on a closed breaker returns no transition."""
    assert make_breaker().resume() is None


def test_window_is_empty_after_resume(make_breaker: Make) -> None:
    """Old failures never re-trip a resumed breaker."""
    breaker = tripped(make_breaker(window_records=10, max_consecutive=None))
    breaker.resume()
    assert breaker.record(*good(1)) is None
    assert breaker.window_share == 0.0


def test_transition_carries_the_clock_time(make_breaker: Make, clock: FakeClock) -> None:
    """Transitions are stamped with the injected clock, never the wall clock."""
    clock.now = 42.0
    transition = make_breaker(max_consecutive=1).record(*bad(1))
    assert transition is not None
    assert transition.at == 42.0


def test_snapshot_reports_state_and_counts(make_breaker: Make) -> None:
    """/status gets state, action, trips and the window figures."""
    breaker = tripped(make_breaker(max_consecutive=2, window_records=4))
    assert breaker.snapshot() == {
        "state": "open",
        "action": "alert",
        "trips": 1,
        "reopens": 0,
        "window_records": 2,
        "window_share": 1.0,
        "consecutive_quarantined": 2,
    }


# --- generated: the window and the run agree with a plain list ---------------------------

# Short batches, so runs and windows often straddle batch boundaries.
batches = st.lists(st.lists(st.booleans(), min_size=1, max_size=8), max_size=30)


def as_batch(flags: list[bool]) -> list[int]:
    return [i for i, flag in enumerate(flags) if flag]


@settings(max_examples=100, deadline=None)
@given(batches, st.integers(1, 25))
def test_window_share_matches_the_last_records(stream: list[list[bool]], window: int) -> None:
    """window_share equals the quarantined share of the last window_records outcomes."""
    breaker = CircuitBreaker(
        "r",
        BreakerSpec(window_records=window, max_consecutive=None, max_quarantined_share=0.99),
        FakeClock(),
    )
    seen: list[bool] = []
    for flags in stream:
        breaker.record(len(flags), as_batch(flags))
        seen += flags
        if breaker.state is OPEN:
            break
        last = seen[-window:]
        assert breaker.window_share == pytest.approx(sum(last) / len(last))


@settings(max_examples=100, deadline=None)
@given(batches, st.integers(1, 12))
def test_run_trips_exactly_when_a_run_reaches_the_limit(
    stream: list[list[bool]], limit: int
) -> None:
    """The breaker opens at the first batch where a run of `limit` bad records completes."""
    spec = BreakerSpec(window_records=10_000, max_consecutive=limit)
    breaker = CircuitBreaker("r", spec, FakeClock())
    run = 0
    for flags in stream:
        expected = False
        for flag in flags:
            run = run + 1 if flag else 0
            expected = expected or run >= limit
        transition = breaker.record(len(flags), as_batch(flags))
        assert (transition is not None) == expected
        if expected:
            break


# --- settings ----------------------------------------------------------------------------


def test_mapping_becomes_a_spec() -> None:
    """The proposed YAML keys map onto BreakerSpec."""
    spec = breaker_spec_from_mapping(
        {"action": "pause", "window_records": 500, "max_quarantined_share": 0.2, "cool_down_s": 30},
        "routes[0].circuit_breaker",
    )
    assert (spec.action, spec.window_records, spec.max_quarantined_share, spec.cool_down_s) == (
        BreakerAction.PAUSE,
        500,
        0.2,
        30,
    )


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ([], "must be a mapping"),
        ({"windw_records": 5}, "unknown key(s) windw_records"),
        ({"action": "stop"}, "action must be alert or pause, got 'stop'"),
        ({"window_records": 10.5}, "window_records must be a whole number"),
        ({"cool_down_s": True}, "cool_down_s must be a number, got True"),
        ({"max_quarantined_share": 50}, "max_quarantined_share must be in [0, 1)"),
        (
            {"window_records": 10, "min_records": 11},
            "min_records must be between 1 and window_records",
        ),
        ({"max_consecutive": 0}, "max_consecutive must be >= 1"),
    ],
)
def test_bad_settings_name_the_route_and_key(raw: object, message: str) -> None:
    """Every bad setting is a ConfigError naming the route's key and the problem."""
    with pytest.raises(ConfigError) as info:
        breaker_spec_from_mapping(raw, "routes[0].circuit_breaker")
    assert str(info.value).startswith("routes[0].circuit_breaker: ")
    assert message in str(info.value)


def test_null_disables_the_run_limit() -> None:
    """max_consecutive: null turns the run limit off."""
    spec = breaker_spec_from_mapping({"max_consecutive": None}, "b")
    assert spec.max_consecutive is None
