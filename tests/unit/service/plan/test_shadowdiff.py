"""The pure classification of live vs shadow verdicts of one batch."""

from __future__ import annotations

from collections import Counter

from stream_validator.service.plan.shadowdiff import ShadowDiff, classify

MISSING = ("ask_sz", "missing_field")
BELOW = ("price", "below_min")


def test_records_failing_only_live_are_rescued_with_the_live_violations() -> None:
    """Live fails 1 and 3, the shadow only 3: 1 is rescued, counted by its live violations."""
    diff = classify(5, {1: [MISSING, BELOW], 3: [BELOW]}, {3: [BELOW]})
    assert (diff.rescued, diff.newly_quarantined, diff.unchanged) == ((1,), (), 4)
    assert diff.violations == Counter(
        {("rescued", "ask_sz", "missing_field"): 1, ("rescued", "price", "below_min"): 1}
    )


def test_records_failing_only_in_the_shadow_are_newly_quarantined_with_its_violations() -> None:
    """The shadow fails 0 and 2 that passed live: newly quarantined, by the shadow's kinds."""
    diff = classify(3, {}, {2: [("ask_volume", "missing_field")], 0: [(None, "undecodable")]})
    assert diff.newly_quarantined == (0, 2)
    assert diff.violations == Counter(
        {("newly_quarantined", "ask_volume", "missing_field"): 1,
         ("newly_quarantined", None, "undecodable"): 1}
    )  # fmt: skip
    assert diff.differs


def test_a_record_failing_under_both_is_unchanged_whatever_its_violations() -> None:
    """Failing for another reason under the shadow is no difference of routing."""
    diff = classify(2, {0: [MISSING]}, {0: [BELOW]})
    assert (diff.rescued, diff.newly_quarantined, diff.unchanged) == ((), (), 2)
    assert not diff.differs and not diff.violations


def test_a_check_broken_twice_by_one_record_counts_once() -> None:
    """Two rule violations of one field and kind on one record: one record counted."""
    diff = classify(1, {0: [BELOW, BELOW]}, {})
    assert diff.violations == Counter({("rescued", "price", "below_min"): 1})


def test_null_ceiling_breaches_that_change_are_reported_both_ways() -> None:
    """bid breached only by the shadow, ask only live; bid_sz by both: no change."""
    diff = classify(10, {}, {}, live_breaches={"ask", "bid_sz"}, shadow_breaches={"bid", "bid_sz"})
    assert diff.ceiling == {"bid": "newly_breached", "ask": "no_longer_breached"}
    assert diff.differs and diff.unchanged == 10


def test_identical_verdicts_make_an_empty_diff() -> None:
    """The same failures and breaches: nothing differs, every record unchanged."""
    verdicts = {4: [MISSING]}
    assert classify(7, verdicts, dict(verdicts), live_breaches={"bid"},
                    shadow_breaches={"bid"}) == ShadowDiff(7)  # fmt: skip
