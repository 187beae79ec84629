"""PURE: a route's null ceiling judged over its last ``batch.max_records`` records.

The service takes what has arrived rather than holding a batch open until it fills (that
wait was most of its latency), so at a low rate one consume may bring five records, and one
null among five is 20 %. The verifier judges each batch on its own; the service judges the
ceiling over a window instead, and the plan's report carries the window's ``null_rates``
and breaches (so the batch event, the null-rate gauge and the alert see what the ceiling
was judged on):
the newest batches of the route whose surviving records add up to at least ``size``
(whole batches: the oldest is dropped only while the rest still holds ``size``). A batch
of ``size`` survivors or more is judged alone, exactly as before; smaller ones are judged
together with the batches before them.

The window's verdict is the batch's when the batch has nulls in the field: under
``quarantine`` the current batch's survivors go to the DLQ (records of earlier batches have
already been delivered); a batch without nulls in it is never held responsible for the
earlier ones. The window is per
route, across partitions and rebalances: it is a statistic of the feed, not of a
partition, so a rewound batch simply counts again.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from fractions import Fraction
from typing import NamedTuple


class WindowRate(NamedTuple):
    """A field over the window: its nulls, the survivors, and the rate in percent."""

    nulls: int
    survivors: int
    rate: float


class NullWindow:
    """The last batches of one route, enough to hold ``size`` survivors."""

    __slots__ = ("_batches", "_ceiling", "_nulls", "_size", "_survivors")

    def __init__(self, size: int, max_allowed_null_pct: float) -> None:
        if size < 1:
            raise ValueError(f"null window size must be >= 1, got {size}")
        self._size = size
        # The verifier's exact comparison: rate > ceiling as fractions, no float rounding.
        self._ceiling = Fraction(repr(float(max_allowed_null_pct)))
        self._batches: deque[tuple[int, Mapping[str, int]]] = deque()
        self._survivors = 0
        self._nulls: dict[str, int] = {}

    @property
    def size(self) -> int:
        """The survivors the window judges over (``batch.max_records``)."""
        return self._size

    @property
    def survivors(self) -> int:
        """Survivors in the window now."""
        return self._survivors

    def add(self, survivors: int, nulls: Mapping[str, int]) -> dict[str, WindowRate]:
        """Add a batch (its survivors and null count per nullable field) and return every
        field's null rate over the window; ``breaches`` picks the ones above the ceiling.
        A batch without survivors changes nothing and gets ``{}``: nothing to judge."""
        if not survivors:
            return {}
        window = self._nulls  # Counter's update and subtract loop in Python: plain dict ops
        self._batches.append((survivors, nulls))
        self._survivors += survivors
        for name, count in nulls.items():
            window[name] = window.get(name, 0) + count
        while self._survivors - self._batches[0][0] >= self._size:
            old_survivors, old_nulls = self._batches.popleft()
            self._survivors -= old_survivors
            for name, count in old_nulls.items():
                window[name] -= count
        total = self._survivors
        return {
            name: WindowRate(count, total, count * 100.0 / total)
            for name, count in self._nulls.items()
        }

    def breaches(
        self, rates: Mapping[str, WindowRate], batch_nulls: Mapping[str, int]
    ) -> dict[str, WindowRate]:
        """The fields of ``rates`` above the ceiling (exact fractions, as the verifier) that
        the batch itself has nulls in: a batch without a null in a field never breaches it,
        so once a spike is over, the batches after it flow while it leaves the window (the
        rate, and the gauge, stay above the ceiling until then)."""
        return {
            name: rate
            for name, rate in rates.items()
            if batch_nulls.get(name) and Fraction(rate.nulls * 100, rate.survivors) > self._ceiling
        }
