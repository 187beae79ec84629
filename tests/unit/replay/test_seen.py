"""The source records a replay run decided: an exact set kept as runs of offsets."""

from __future__ import annotations

import gc
import json
import tracemalloc

from hypothesis import given
from hypothesis import strategies as st

from stream_validator.records import SourceRecord
from stream_validator.replay.planner import Outcome
from stream_validator.replay.seen import SourceOffsets
from tests.support.dlq import DLQ, dlq_record, planner

identities = st.tuples(
    st.sampled_from(["a", "b"]),
    st.integers(0, 2),
    st.one_of(st.integers(0, 40), st.integers(-(2**70), 2**70)),
)


@given(st.lists(identities, max_size=200))
def test_add_answers_like_a_set(items: list[tuple[str, int, int]]) -> None:
    """add() is True exactly for the records not added before, in any order."""
    seen, model = SourceOffsets(), set()
    for item in items:
        assert seen.add(*item) is (item not in model)
        model.add(item)


def test_consecutive_offsets_are_one_run() -> None:
    """Offsets that fill the gaps between runs merge them, whatever the order."""
    seen = SourceOffsets()
    for offset in [*range(0, 1000, 2), *range(999, 0, -2)]:
        assert seen.add("t", 0, offset)
    assert seen.runs() == 1


def test_planner_memory_per_decided_record_is_small() -> None:
    """Remembering scattered decided source records costs under 40 bytes each."""
    template = dlq_record()
    document = json.loads(template.value or b"")
    p = planner()

    def decide(start: int) -> int:
        chunk = []
        for i in range(start, start + 500):
            document["source"]["offset"] = 2 * i  # every other offset: one run each
            value = json.dumps(document).encode()
            chunk.append(SourceRecord(DLQ, 0, i, template.key, value, template.headers, 1))
        return sum(d.outcome is Outcome.PASSED for d in p.decide(chunk))

    decide(0)  # the verifier's first batch builds what every later one reuses
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        count = sum(decide(start) for start in range(500, 10_500, 500))
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert count == 10_000
    assert kept / count < 40
