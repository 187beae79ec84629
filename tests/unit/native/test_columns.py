"""``_native.partition_runs`` and ``_native.delivered_columns``: the service's per-record
columns read natively (native/src/records.rs), against the column-by-column Python they
replace."""

from __future__ import annotations

from itertools import compress, count, pairwise
from operator import ne, or_

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream_validator._native import delivered_columns, partition_runs
from stream_validator.records import OutputRecord, SourceRecord
from stream_validator.service.delivery.accounting import delivered_routes
from stream_validator.service.loop import _runs


def reference_runs(records: list[SourceRecord]) -> list[tuple[int, int]]:
    """The Python the native runs replace (and _runs keeps for any other sequence)."""
    if not records:
        return []
    partitions = [r.partition for r in records]
    topics = [r.topic for r in records]
    changed = map(or_, map(ne, partitions[1:], partitions), map(ne, topics[1:], topics))
    starts = [0, *(i + 1 for i in compress(count(), changed)), len(records)]
    return list(pairwise(starts))


def source(topic: str, partition: int) -> SourceRecord:
    # A fresh str per record, as the client makes one per message: equal, not identical.
    return SourceRecord("".join(topic), partition, 0, None, b"", [], None)


AT = (SourceRecord._fields.index("topic"), SourceRecord._fields.index("partition"))


@given(st.lists(st.tuples(st.sampled_from(["a", "b", "ab"]), st.integers(0, 3)), max_size=40))
def test_partition_runs_are_the_python_runs(keys: list[tuple[str, int]]) -> None:
    """Runs split where the topic or the partition changes, by value, as the Python did."""
    records = [source(t, p) for t, p in keys]
    assert partition_runs(records, AT) == reference_runs(records)
    assert _runs(records) == _runs(tuple(records)) == reference_runs(records)


def test_partition_runs_refuse_what_is_not_a_record() -> None:
    """A record that is not a tuple long enough raises, never a wrong run."""
    with pytest.raises(TypeError):
        partition_runs([source("a", 0), "nope"], AT)  # type: ignore[list-item]
    with pytest.raises(IndexError):
        partition_runs([("a",)], AT)


def output(kind: str, stamp: object) -> OutputRecord:
    src = SourceRecord("t", 0, 0, None, b"", [], None)
    return OutputRecord(kind, "t", None, b"", [], stamp, src)  # type: ignore[arg-type]


KINDS_AT = (OutputRecord._fields.index("kind"), OutputRecord._fields.index("timestamp_ms"))
stamps = st.one_of(
    st.none(),
    st.integers(-(2**63), 2**63 - 1),
    st.integers(1_700_000_000_000, 1_800_000_000_000),
)


@given(
    st.lists(st.tuples(st.sampled_from(["clean", "dlq"]), stamps), max_size=30),
    st.floats(0, 2e9),
)
def test_delivered_columns_are_the_python_columns(
    outputs: list[tuple[str, int | None]], acked_at: float
) -> None:
    """The DLQ positions, and acked_at - ms / 1000.0 for each clean output with a
    timestamp, bit for bit as Python's float arithmetic gives them."""
    records = [output("".join(kind), stamp) for kind, stamp in outputs]
    dlq, latencies = delivered_columns(records, "clean", KINDS_AT, acked_at)
    assert dlq == [i for i, r in enumerate(records) if r.kind != "clean"]
    expected = [
        acked_at - r.timestamp_ms / 1000.0
        for r in records
        if r.kind == "clean" and r.timestamp_ms is not None
    ]
    assert [x.hex() for x in latencies] == [x.hex() for x in expected]


def test_delivered_columns_take_python_arithmetic_for_other_numbers() -> None:
    """A timestamp that is not an int (a bool, an int past 64 bits) gets Python's own
    arithmetic: the same value, or the same error."""
    dlq, latencies = delivered_columns([output("clean", True)], "clean", KINDS_AT, 1.0)
    assert (dlq, latencies) == ([], [1.0 - True / 1000.0])
    with pytest.raises(OverflowError):
        delivered_columns([output("clean", 10**400)], "clean", KINDS_AT, 1.0)


def test_delivered_routes_count_a_batch_as_delivered() -> None:
    """Clean and DLQ counts, DLQ positions, truncated envelopes and clamped latencies."""
    from collections import Counter
    from unittest.mock import MagicMock

    plan = MagicMock(outputs=[None] * 4, violation_counts=Counter())
    outs = [
        output("clean", 1_000),
        output("dlq", 2_000)._replace(truncated=True),
        output("clean", None),
        output("clean", 9_000),  # after acked_at: clock skew counts as 0
    ]
    (route,) = delivered_routes([plan], outs, [], 5.0)
    assert (route.clean, route.dlq, route.truncated, route.quarantined) == (3, 1, 1, [1])
    assert route.latencies == [4.0, 0.0]
