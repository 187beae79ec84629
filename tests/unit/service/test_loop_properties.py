"""The service loop on the in-memory broker under random faults (hypothesis).

Any mix of records (valid, invalid, garbage, null bids, tombstones) over 1-3 partitions, with
retriable delivery failures at random produce calls and clean records the broker refuses
for good, in either delivery mode:

* nothing is lost: every source record lands in the clean topic or (as an envelope naming
  it) in the DLQ topic; in exactly-once mode a read_committed reader sees it exactly once;
* nothing lands that no source record explains;
* the group's committed offset of each partition is its end;
* the counters count each source record once, as it was finally delivered.

The real-broker fault tests (tests/integration) check the same against Kafka; this one
covers many more interleavings of failures than they can.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import event, given
from hypothesis import strategies as st

from stream_validator.dlq.envelope_reader import Envelope, parse_dlq_record
from stream_validator.errors import ServiceExit
from stream_validator.kafka.fake import abortable, fatal
from tests.support.fuzz import fuzz_settings

from .fakeservice import EVERY_POLL, GROUP, Harness, service_config, tick

SETTINGS = fuzz_settings(200)

KINDS = ["good", "good", "good", "bad_price", "garbage", "null_bid", "tombstone"]


def _value(kind: str, seq: int) -> bytes | None:
    if kind == "good":
        return tick.json(seq)
    if kind == "bad_price":
        return tick.json(seq, price=-1.0)
    if kind == "null_bid":
        return tick.json(seq, bid=None)
    if kind == "garbage":
        return b"garbage %d" % seq
    return None


@SETTINGS
@given(
    kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=45),
    partitions=st.integers(1, 3),
    failures=st.sets(st.integers(1, 90), max_size=4),
    refused=st.sets(st.integers(0, 44), max_size=2),
    transactional=st.booleans(),
)
def test_nothing_lost_nothing_invented_offsets_committed(
    kinds: list[str],
    partitions: int,
    failures: set[int],
    refused: set[int],
    transactional: bool,
) -> None:
    h = Harness(service_config(transactional=transactional), partitions=partitions)
    sources = []
    for seq, kind in enumerate(kinds):
        (record,) = h.feed([_value(kind, seq)], partition=seq % partitions)
        sources.append(record)
    for nth in failures:
        h.broker.faults.fail_delivery(nth=nth)
    refused_values = {tick.json(seq) for seq in refused}
    h.broker.faults.refuse = lambda r: (
        "INVALID_RECORD" if r.topic == "clean" and r.value in refused_values else None
    )
    assert h.run() == ServiceExit.OK

    by_value = {s.value: (s.partition, s.offset) for s in sources if s.value is not None}
    landed: Counter[tuple[int, int]] = Counter()
    for record in h.topic("clean"):
        assert record.value in by_value, record.value  # nothing invented
        landed[by_value[record.value]] += 1
    for record in h.topic("dlq"):
        parsed = parse_dlq_record(record)
        assert isinstance(parsed, Envelope), parsed
        original = parsed.original
        assert (original.topic, original.value) == ("src", sources_at(sources, original).value)
        landed[(original.partition, original.offset)] += 1
    everyone = {(s.partition, s.offset) for s in sources}
    assert set(landed) == everyone  # nothing lost
    if transactional:
        assert max(landed.values()) == 1
    event(f"duplicates (at-least-once retries): {max(landed.values()) > 1}")
    event(f"failed batches: {h.state.failed_batches > 0}")

    ends = Counter(s.partition for s in sources)
    committed = h.broker.committed(GROUP)
    assert {key: committed.get(key) for key in committed if key[0] == "src"} == {
        ("src", p): n for p, n in ends.items()
    }
    valid, quarantined = (
        h.counter("stream_validator_records_valid_total"),
        h.counter("stream_validator_records_quarantined_total"),
    )
    assert valid + quarantined == len(sources)
    assert h.state.records == len(sources)


def sources_at(sources: list, original: object) -> object:  # type: ignore[type-arg]
    """The source record at the envelope's coordinates."""
    for source in sources:
        if (source.partition, source.offset) == (original.partition, original.offset):  # type: ignore[attr-defined]
            return source
    raise AssertionError(f"no source record at {original}")


TXN_CALLS = ["begin_transaction", "send_offsets_to_transaction", "commit_transaction"]


@SETTINGS
@given(
    kinds=st.lists(st.sampled_from(KINDS), min_size=1, max_size=45),
    partitions=st.integers(1, 3),
    faults=st.lists(
        st.tuples(st.integers(1, 60), st.sampled_from(TXN_CALLS), st.booleans()), max_size=3
    ),
    failures=st.sets(st.integers(1, 90), max_size=2),
    every_poll=st.booleans(),
)
def test_exactly_once_under_transaction_faults(
    kinds: list[str],
    partitions: int,
    faults: list[tuple[int, str, bool]],
    failures: set[int],
    every_poll: bool,
) -> None:
    """Abortable errors and lost producers (fatal, not fencing) at random transactional
    calls, with failed deliveries: a read_committed reader sees exactly the records below
    the committed offsets, each once, and they are the ones counted."""
    config = service_config(
        transactional=True, **({"commit_interval_s": EVERY_POLL} if every_poll else {})
    )
    h = Harness(config, partitions=partitions)
    sources = [
        h.feed([_value(kind, seq)], partition=seq % partitions)[0] for seq, kind in enumerate(kinds)
    ]
    scripted = {nth: (call, lost) for nth, call, lost in faults}

    def inject(count: int, _record: object) -> None:
        if count in scripted:
            call, lost = scripted[count]
            error = fatal("INVALID_TXN_STATE") if lost else abortable()
            h.broker.faults.fail_transaction_call(call, error)

    h.broker.faults.on_produce = inject
    for nth in failures:
        h.broker.faults.fail_delivery(nth=nth)
    assert h.run() == ServiceExit.OK

    landed: Counter[tuple[int, int]] = Counter()
    by_value = {s.value: (s.partition, s.offset) for s in sources if s.value is not None}
    for record in h.topic("clean"):
        landed[by_value[record.value]] += 1
    for record in h.topic("dlq"):
        parsed = parse_dlq_record(record)
        assert isinstance(parsed, Envelope), parsed
        landed[(parsed.original.partition, parsed.original.offset)] += 1
    # A record's outputs are visible exactly when its offset is committed (one transaction).
    # A commit that fails at shutdown leaves its batches uncommitted, to be read again.
    committed = h.broker.committed(GROUP)
    below = {
        (s.partition, s.offset)
        for s in sources
        if s.offset < committed.get(("src", s.partition), 0)
    }
    assert set(landed) == below
    assert not landed or max(landed.values()) == 1
    counted = h.counter("stream_validator_records_valid_total") + h.counter(
        "stream_validator_records_quarantined_total"
    )
    assert counted == len(below)
    event(f"left uncommitted at shutdown: {len(below) < len(sources)}")
    event(f"producers replaced: {len(h.clients.producers) > 1}")
    event(f"failed batches: {h.state.failed_batches > 0}")
