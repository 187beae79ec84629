"""Where a replay run reads: what every replay group of the target settled, and the range.

Both are read through the Kafka adapter's ports before the first record: the replay groups'
committed offsets and commit metadata (``Coverage``, see ``cli.replay``'s "Overlapping
selections"), and per DLQ partition ``[start, end)`` with ``end`` the last stable offset now.
"""

from __future__ import annotations

import contextlib
import re

from stream_validator.kafka.ports import Admin, Consumer
from stream_validator.replay.planner import Coverage
from stream_validator.replay.selection import Selection

#: Per DLQ partition, the offsets [start, end) to read.
Ranges = dict[int, tuple[int, int]]


def is_replay_group(name: str, group_base: str) -> bool:
    """True when ``name`` is ``<group_base>.<digest>``: a group of this base, not one of a
    base that merely starts with it (the target ``X.v2`` under the target ``X``)."""
    suffix = name.removeprefix(group_base + ".")
    return suffix != name and _DIGEST.fullmatch(suffix) is not None


_DIGEST = re.compile(f"[0-9a-f]{{{len(Selection().digest())}}}")


def load_coverage(
    admin: Admin, topic: str, partitions: list[int], group_base: str, group: str, timeout_s: float
) -> tuple[list[Coverage], dict[int, int]]:
    """Every replay group of ``group_base``: what it settled, and ``group``'s own offsets
    (read even when the listing misses it, so a run never starts over)."""
    keys = [(topic, p) for p in partitions]
    coverage: list[Coverage] = []
    own: dict[int, int] = {}
    listed = admin.groups(group_base + ".", timeout_s)
    names = sorted({group, *(n for n in listed if is_replay_group(n, group_base))})
    for name in names:
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
