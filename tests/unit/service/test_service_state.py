"""Per-symbol state in the service loop (fake broker): counted once from delivered batches,
dropped on revoke, loss and rewind so the first record after them starts fresh."""

from __future__ import annotations

from collections.abc import Callable

from stream_validator.errors import ServiceExit

from .fakeservice import EVERY_POLL, Harness, service_config, tick

EVENTS = "stream_validator_symbol_events_total"


def ticks(seqs: range | list[int]) -> list[bytes]:
    """Ticks of one symbol with these sequence numbers (and moving prices: never frozen)."""
    return [tick.json(seq, symbol="AAPL", price=100.0 + seq) for seq in seqs]


def events(h: Harness, kind: str) -> float:
    return h.counter(EVENTS, contract="tick", kind=kind)


def test_sequence_gap_is_flagged_counted_and_reported() -> None:
    """A gap: every record to clean, one event counted, the batch event names the symbol."""
    h = Harness(service_config())
    h.feed(ticks([1, 2, 3, 7, 8]))
    assert h.run() == ServiceExit.OK
    assert (len(h.topic("clean")), len(h.topic("dlq"))) == (5, 0)
    assert events(h, "sequence_gap") == 1
    assert events(h, "sequence_regression") == 0
    assert h.counter("stream_validator_symbol_state_symbols", contract="tick") == 1
    (event,) = h.state.recent_events
    assert event["symbol_state"]["events"] == {"sequence_gap": {"count": 1, "examples": ["AAPL"]}}


def test_a_rewind_drops_state_so_the_retried_batch_raises_nothing() -> None:
    """A failed output rewinds the batch: re-read from fresh state it is no regression,
    and the events of the failed attempt are never counted."""
    h = Harness(service_config())
    h.feed(ticks(range(1, 11)))
    h.broker.faults.fail_delivery(nth=3)
    assert h.run() == ServiceExit.OK
    assert h.state.failed_batches == 1
    assert events(h, "sequence_regression") == 0
    assert events(h, "sequence_gap") == 0


def rebalance_then(h: Harness, move: Callable[[], None]) -> None:
    """On the first idle: ``move`` the partition away; meanwhile another member handles
    seq 4-10 and commits; then the partition comes back with seq 11 and 12 to read."""

    def away() -> None:
        move()
        h.on_idle = back

    def back() -> None:
        h.feed(ticks(range(4, 11)))
        h.broker.commit_offsets("svc", {("src", 0): 10})
        h.feed(ticks([11, 12]))
        h.clients.consumers[0].reassign([("src", 0)])
        h.on_idle = h.service.stop

    h.on_idle = away


def test_state_starts_fresh_after_a_revoke_and_reassignment() -> None:
    """After a revoke the partition's old state is gone: 11 after 3 is no gap."""
    h = Harness(service_config(commit_interval_s=EVERY_POLL))
    h.feed(ticks([1, 2, 3]))
    rebalance_then(h, lambda: h.clients.consumers[0].revoke([("src", 0)]))
    assert h.run() == ServiceExit.OK
    assert len(h.topic("clean")) == 5  # 1-3, then 11 and 12
    assert events(h, "sequence_gap") == 0


def test_state_starts_fresh_after_a_lost_partition() -> None:
    """The same after the partition was lost."""
    h = Harness(service_config(commit_interval_s=EVERY_POLL))
    h.feed(ticks([1, 2, 3]))
    rebalance_then(h, lambda: h.clients.consumers[0].lose([("src", 0)]))
    assert h.run() == ServiceExit.OK
    assert events(h, "sequence_gap") == 0
