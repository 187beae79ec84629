"""Where a replay run reads: what every replay group of the target settled, and the range.

Both are read through the Kafka adapter's ports before the first record: the replay groups'
committed offsets and commit metadata (``Coverage``, see ``cli.replay``'s "Overlapping
selections"), and per DLQ partition ``[start, end)`` with ``end`` the last stable offset now.
"""

from __future__ import annotations

import contextlib

from stream_validator.kafka.ports import Admin, Consumer
from stream_validator.replay.planner import Coverage
from stream_validator.replay.selection import Selection

#: Per DLQ partition, the offsets [start, end) to read.
Ranges = dict[int, tuple[int, int]]


def load_coverage(
    admin: Admin, topic: str, partitions: list[int], group_base: str, group: str, timeout_s: float
) -> tuple[list[Coverage], dict[int, int]]:
    """Every replay group under ``group_base``: what it settled, and ``group``'s own offsets."""
    keys = [(topic, p) for p in partitions]
    coverage: list[Coverage] = []
    own: dict[int, int] = {}
    for name in admin.groups(group_base + ".", timeout_s):
        stored = admin.group_offsets(name, keys, timeout_s)
        committed = {key[1]: stored[key].offset for key in keys if key in stored}
        metadata = next((c.metadata for c in stored.values() if c.metadata), None)
        if name == group:
            own = committed
        if committed and metadata:
            # Metadata not written by a replay (e.g. a reused --group) covers nothing.
            with contextlib.suppress(ValueError):
                coverage.append(Coverage(name, Selection.decode(metadata), committed))
    return coverage, own


def read_ranges(
    admin: Admin,
    consumer: Consumer,
    topic: str,
    partitions: list[int],
    selection: Selection,
    own: dict[int, int],
    timeout_s: float,
) -> Ranges:
    """Per partition [start, end): from the group's own offset and the selection's start
    (offset, time), to the selection's end or the last stable offset observed now."""
    keys = [(topic, p) for p in partitions]
    ends = {key[1]: end for key, end in admin.end_offsets(keys, timeout_s).items()}
    starts = {p: max(own.get(p, 0), selection.from_offset.get(p) or 0) for p in partitions}
    if selection.from_ms is not None:
        wanted = {key: selection.from_ms for key in keys}
        for (_, p), first in consumer.offsets_for_times(wanted, timeout_s).items():
            starts[p] = max(starts[p], ends[p] if first is None else first)
    ranges = {}
    for p in partitions:
        until = selection.until_offset.get(p)
        ranges[p] = (starts[p], ends[p] if until is None else min(ends[p], until))
    return ranges
