"""CPU time for the complexity tests (linear, not quadratic): ratios of two sizes, never a
speed target (those live in bench/)."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_time(run: Callable[[], object], repeat: int = 5) -> float:
    """The least CPU time of ``repeat`` runs (CPU time: other processes do not count)."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return min(times)
