"""The cyclic garbage collector while a long loop runs: the service's and ``validate``'s.

Each batch of such a loop allocates thousands of short-lived containers (the client's
messages, source and output records, header lists, the per-symbol state's columns) that
reference counting frees on its own. At CPython's default first threshold (700
allocations) the collector would run several times a batch, each time traversing the part
of the in-flight batches still alive and promoting it to be traversed again (more so in
exactly-once mode, where a transaction keeps a commit interval's batches alive). So the
loop runs with a much higher first threshold.

What start-up built (contracts, compiled rules, clients, metrics) lives as long as the
process, so it is frozen out of the collector's generations (``gc.freeze``). Cycles are
still collected, only later; memory is not at stake (a young generation of 50,000 small
objects is a few MB at most).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

__all__ = ["YOUNG_THRESHOLD", "collector_tuned"]

#: The collector's first threshold while such a loop runs (CPython's default: 700).
YOUNG_THRESHOLD: Final = 50_000


@contextmanager
def collector_tuned() -> Iterator[None]:
    """Freeze what exists, raise the first threshold; both undone on exit (a test process
    may run the service more than once)."""
    previous = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *previous[1:])
    try:
        yield
    finally:
        gc.set_threshold(*previous)
        gc.unfreeze()
