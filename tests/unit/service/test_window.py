"""The in-flight window (batch.max_in_flight_records) on the fake broker: the loop stops
consuming while a batch would not fit, serves acknowledgements meanwhile while still polling
the consumer, and resumes when they arrive; exactly-once commits a full transaction early."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from stream_validator.errors import ServiceExit

from .fakeservice import EVERY_POLL, Harness, service_config, tick

WINDOW = 20  # two batches of max_records 10


def consumes(h: Harness, on_call: Callable[[int], None]) -> list[tuple[int, int, int]]:
    """Wrap the service's consumer: each consume() call as (max_records, records got,
    records in flight when it was called); ``on_call(max_records)`` runs before each."""
    calls: list[tuple[int, int, int]] = []
    make = h.clients.consumer

    def consumer(**kwargs: Any) -> Any:
        fake = make(**kwargs)
        consume = fake.consume

        def recorded(max_records: int, timeout_s: float) -> Any:
            on_call(max_records)
            committer = h.service._committer
            in_flight = committer.in_flight if committer is not None else 0
            consumed = consume(max_records, timeout_s)
            calls.append((max_records, len(consumed.records), in_flight))
            return consumed

        fake.consume = recorded  # type: ignore[method-assign]
        return fake

    h.clients.consumer = consumer  # type: ignore[method-assign]
    return calls


def seq_counts(h: Harness) -> Counter[int]:
    """How often each source seq landed on the clean topic."""
    return Counter(json.loads(r.value or b"{}")["seq"] for r in h.topic("clean"))


def test_loop_stops_consuming_at_the_window_and_resumes_when_acks_arrive() -> None:
    """Acknowledgements held back: two batches (the window) are taken, then the consumer is
    only polled for nothing (membership kept) until the acks come; then every record is
    delivered once."""
    config = replace(service_config(commit_interval_s=EVERY_POLL), batch_max_in_flight_records=20)
    h = Harness(config)
    h.feed([tick.json(i) for i in range(60)])
    h.broker.faults.hold_topics.add("clean")
    empty_polls = 0

    def release_after_three_empty_polls(max_records: int) -> None:
        nonlocal empty_polls
        if max_records == 0:
            empty_polls += 1
            if empty_polls == 3:
                h.broker.faults.hold_topics.clear()

    calls = consumes(h, release_after_three_empty_polls)
    assert h.run() == ServiceExit.OK
    first_empty = next(i for i, (max_records, _, _) in enumerate(calls) if max_records == 0)
    assert sum(got for _, got, _ in calls[:first_empty]) == WINDOW
    assert [max_records for max_records, _, _ in calls[first_empty : first_empty + 3]] == [0] * 3
    assert all(in_flight <= WINDOW for _, _, in_flight in calls)
    assert all(got == 0 for max_records, got, _ in calls if max_records == 0)
    assert seq_counts(h) == Counter(range(60))
    assert h.state.records == 60


def test_records_in_flight_fill_the_window_and_never_exceed_it() -> None:
    """Acknowledgements come only while the window is full: the committer holds up to the
    window (2.5 batches: the third batch waits) and never more; nothing is lost."""
    config = replace(service_config(commit_interval_s=EVERY_POLL), batch_max_in_flight_records=25)
    h = Harness(config)
    h.feed([tick.json(i) for i in range(100)])

    def acks_only_when_full(max_records: int) -> None:
        if max_records == 0:
            h.broker.faults.hold_topics.clear()
        else:
            h.broker.faults.hold_topics.add("clean")

    calls = consumes(h, acks_only_when_full)
    assert h.run() == ServiceExit.OK
    assert max(in_flight for _, _, in_flight in calls) == 20
    assert all(in_flight > 15 for max_records, _, in_flight in calls if max_records == 0)
    assert seq_counts(h) == Counter(range(100))


def test_exactly_once_commits_a_full_transaction_before_its_interval() -> None:
    """Exactly-once with a 60 s commit interval: a transaction holding the window commits
    at once, so no transaction holds more than the window."""
    config = service_config(transactional=True, commit_interval_s=60.0)
    h = Harness(replace(config, batch_max_in_flight_records=WINDOW))
    h.feed([tick.json(i) for i in range(50)])
    calls = consumes(h, lambda _max_records: None)
    assert h.run() == ServiceExit.OK
    assert all(in_flight <= WINDOW for _, _, in_flight in calls)
    assert h.state.commits >= 3  # 20, 40, then the last 10 at shutdown
    assert seq_counts(h) == Counter(range(50))
