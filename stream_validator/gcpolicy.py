"""The cyclic garbage collector while a long loop runs: the service's and ``validate``'s.

Each micro-batch of the service allocates thousands of short-lived container objects (the
client's messages, SourceRecords, OutputRecords, header lists) that reference counting frees
on its own. At CPython's default first threshold (700 allocations) the collector ran about four
times a batch, each time traversing whatever part of the in-flight batches was alive, and
promoted it to older generations to be traversed again: 0.24 s of the 3 s of CPU the
service spent on 300,000 ticks (about 8 %; measured with ``gc.callbacks`` in
``bench/bench_peers.py``), and more in exactly-once mode, where a transaction keeps a commit
interval's batches alive. At 50,000 it ran twice in the whole run (0.02 s).

What start-up built (contracts, compiled rules, clients, metrics) lives as long as the
process, so it is frozen out of the collector's generations (``gc.freeze``). Cycles are
still collected, only later; memory is not at stake (a young generation of 50,000 small
objects is a few MB at most).

``stream-validator validate`` is the same kind of loop over blocks of about 6,000 lines
(the per-symbol state's columns, e.g. a quote tuple per line): over 1,000,000 ticks with
``tick.yaml`` the collector ran 2,146 + 195 + 8 times (young, middle, old) for about 0.4 s
of the run's 4.7 s; at 50,000 once. It runs tuned as well (``cli/files.py``).
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
