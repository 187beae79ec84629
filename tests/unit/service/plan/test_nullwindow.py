"""NullWindow: the null ceiling over a route's last max_records records, across batches."""

from __future__ import annotations

import random

import pytest

from stream_validator.service.plan.nullwindow import NullWindow, WindowRate
from stream_validator.verify import DataSchemaContractVerifier
from tests.support.ticks import TickFactory, counted, tick_contract, tick_processor
from tests.unit.service.plan.test_planner import source


def test_small_batches_are_judged_together() -> None:
    """One null in a 5-record batch is 20 %; over the last 500 records it is 0.2 %."""
    window = NullWindow(500, 1.0)
    for _ in range(99):
        assert window.breaches(window.add(5, {"bid": 0}), {"bid": 0}) == {}
    rates = window.add(5, {"bid": 1})
    assert rates == {"bid": WindowRate(1, 500, 0.2)}
    assert window.breaches(rates, {"bid": 1}) == {}  # 1 of 500 = 0.2 % <= 1 %
    assert window.survivors == 500


def test_a_full_batch_is_judged_alone() -> None:
    """A batch of at least the window's size pushes every older batch out."""
    window = NullWindow(10, 1.0)
    window.add(5, {"bid": 5})
    rates = window.add(10, {"bid": 1})
    assert window.breaches(rates, {"bid": 1}) == rates == {"bid": WindowRate(1, 10, 10.0)}
    assert window.survivors == 10
    assert window.add(20, {"bid": 0}) == {"bid": WindowRate(0, 20, 0.0)}


def test_whole_batches_until_the_rest_holds_the_size() -> None:
    window = NullWindow(10, 10.0)
    window.add(6, {"bid": 3})
    window.add(6, {"bid": 0})  # 12 survivors: dropping the first would leave 6 < 10: kept
    assert window.survivors == 12
    assert window.add(4, {"bid": 0}) == {"bid": WindowRate(0, 10, 0.0)}  # the first left
    assert window.survivors == 10


def test_exact_ceiling_is_not_a_breach() -> None:
    """Rate equal to the ceiling passes, as in the verifier (exact fractions, no rounding)."""
    window = NullWindow(1000, 0.1)
    assert window.breaches(window.add(1000, {"bid": 1}), {"bid": 1}) == {}
    window = NullWindow(999, 0.1)
    rates = window.add(999, {"bid": 1})
    assert window.breaches(rates, {"bid": 1}) == {"bid": WindowRate(1, 999, 100 / 999)}


def test_no_survivors_no_verdict() -> None:
    window = NullWindow(10, 1.0)
    window.add(10, {"bid": 10})
    assert window.add(0, {"bid": 0}) == {}


def test_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="size"):
        NullWindow(0, 1.0)


def test_batches_of_at_least_the_size_agree_with_the_verifier(make_tick: TickFactory) -> None:
    """For batches of max_records or more, the window's verdict is the verifier's."""
    rng = random.Random(5)
    verifier = DataSchemaContractVerifier(tick_contract())
    window = NullWindow(50, verifier.contract.max_allowed_null_pct)
    for _ in range(30):
        size = rng.randint(50, 120)
        values = [make_tick.json(i, bid=None if rng.random() < 0.015 else 1.0) for i in range(size)]
        report = verifier.validate_payloads(values)
        rates = window.add(report.valid_count, report.null_counts)
        assert {name: rate.rate for name, rate in rates.items()} == report.null_rates
        breaches = window.breaches(rates, report.null_counts)
        assert {name: rate.rate for name, rate in breaches.items()} == report.null_breach_fields


def test_plan_judges_the_ceiling_over_the_window(make_tick: TickFactory) -> None:
    """A 5-record batch with one null bid is no breach after 495 clean records: the
    service no longer quarantines small batches for one null."""
    processor = tick_processor(on_null_ceiling_breach="quarantine", null_window=500)
    for start in range(0, 495, 99):
        plan = processor.plan(
            source([make_tick.json(i) for i in range(start, start + 99)]), validated_at="t"
        )
        assert plan.null_ceiling_action is None
    small = [make_tick.json(1, bid=None), *(make_tick.json(i) for i in range(4))]
    plan = processor.plan(source(small), validated_at="t")
    # The batch's own rate would be 20 %; the report carries the window's, 1 of 500.
    assert plan.report.null_rates["bid"] == 0.2
    assert plan.null_ceiling_action is None and counted(plan)[1] == 0
    # Six more nulls in the next batch: the window is 506 records (whole batches: without the
    # first 99 it would hold fewer than 500); 7 of 506 > 1 %: this batch is quarantined.
    nulls = [make_tick.json(i, bid=None) for i in range(6)]
    plan = processor.plan(source(nulls), validated_at="t")
    assert plan.null_ceiling_action == "quarantine" and counted(plan)[1] == 6
    assert plan.report.null_breach_fields == {"bid": pytest.approx(700 / 506)}
    assert (
        "over the route's last 506 valid records (7 null)"
        in (plan.outputs[0].value or b"").decode()
    )


def test_a_batch_without_nulls_never_breaches_after_a_spike(make_tick: TickFactory) -> None:
    """After a null spike the window stays over the ceiling for a while; batches with no null
    in the field are not quarantined for it (the rate still shows the window's)."""
    processor = tick_processor(on_null_ceiling_breach="quarantine", null_window=500)
    spike = [make_tick.json(i, bid=None) for i in range(10)]
    assert counted(processor.plan(source(spike), validated_at="t"))[1] == 10
    after = processor.plan(source([make_tick.json(i) for i in range(10)]), validated_at="t")
    assert after.null_ceiling_action is None and counted(after)[1] == 0
    assert after.report.null_rates["bid"] == 50.0  # 10 of the window's 20
    # A single null while the window is still over the ceiling: that batch is quarantined.
    one = [make_tick.json(1, bid=None), make_tick.json(2)]
    assert counted(processor.plan(source(one), validated_at="t"))[1] == 2
