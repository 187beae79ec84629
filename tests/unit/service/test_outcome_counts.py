"""Metrics, /status and batch events count what was delivered, under both null-ceiling
policies and in both delivery modes (the quarantine policy used to count DLQ records as
valid)."""

from __future__ import annotations

import pytest

from stream_validator.errors import ServiceExit

from .fakeservice import Harness, service_config, tick


def mixed_batch() -> list[bytes | None]:
    """10 records: a null bid (above the 1% ceiling), an invalid price, 8 good ones."""
    values: list[bytes | None] = [tick.json(i) for i in range(10)]
    values[3] = tick.json(3, bid=None)
    values[6] = tick.json(6, price=-1.0)
    return values


@pytest.mark.parametrize("transactional", [False, True], ids=["at-least-once", "exactly-once"])
@pytest.mark.parametrize(
    ("policy", "clean", "dlq"),
    [("alert", 9, 1), ("quarantine", 0, 10)],
    ids=["alert", "quarantine"],
)
def test_counters_equal_the_topics(policy: str, clean: int, dlq: int, transactional: bool) -> None:
    """records_valid_total == clean topic, records_quarantined_total == DLQ topic, and the
    /status counters and batch event agree."""
    h = Harness(service_config(policy=policy, transactional=transactional))
    h.feed(mixed_batch())
    assert h.run() == ServiceExit.OK
    assert h.counts() == {
        "valid_total": clean,
        "quarantined_total": dlq,
        "clean_topic": clean,
        "dlq_topic": dlq,
    }
    assert (h.state.clean, h.state.dlq, h.state.records) == (clean, dlq, 10)
    (event,) = h.state.recent_events
    assert (event["clean_out"], event["dlq_out"]) == (clean, dlq)
    assert h.counter("stream_validator_records_consumed_total") == 10


@pytest.mark.parametrize("transactional", [False, True], ids=["at-least-once", "exactly-once"])
def test_ceiling_quarantine_counts_its_violations(transactional: bool) -> None:
    """Under quarantine, every record sent to the DLQ for the null ceiling is counted as a
    null_ceiling_breach violation, in the batch event and in violations_total."""
    h = Harness(service_config(policy="quarantine", transactional=transactional))
    h.feed(mixed_batch())
    assert h.run() == ServiceExit.OK
    (event,) = h.state.recent_events
    # 9 records survived the rules; each goes to the DLQ with one violation (field bid).
    assert event["violations_by_kind"]["null_ceiling_breach"] == 9
    assert event["violations_by_field"]["bid"] == 9
    breaches = h.counter(
        "stream_validator_violations_total",
        contract="tick",
        field="bid",
        kind="null_ceiling_breach",
        rule="",
    )
    assert breaches == 9
