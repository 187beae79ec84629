"""PURE: the DLQ circuit breaker of one route, a state machine with an injected clock.

No Kafka and no Prometheus: the service loop feeds it each batch's outcome, polls it,
and acts on the transitions it returns (pause or resume the route's partitions, emit
an event, set the metrics). States::

    closed ──trip──▶ open ──cool-down over (poll)──▶ half_open ──probe passes──▶ closed
                      ▲                                  │
                      └──────────probe fails─────────────┘
    resume() (operator: CLI or HTTP) goes from open or half_open straight to closed.

What must hold:

* Trip (closed → open) when the quarantined share of the last ``window_records``
  records exceeds ``max_quarantined_share`` (judged once ``min_records`` are in the
  window), or when ``max_consecutive`` records in a row were quarantined, across batch
  boundaries. The window counts *records*, not seconds: a route's traffic rate does
  not change what a share means, and a quiet route cannot trip on one bad record out
  of two seen in the last minute.
* While open, outcomes are ignored (with ``pause`` nothing should arrive but the
  batch in flight; with ``alert`` records flow but the breaker waits out the
  cool-down rather than flapping).
* Half-open judges the next ``probe_records`` records (all batches until that many were
  seen) by the same share and run limits: pass → closed, fail → open again (a new
  cool-down; counted in ``reopens``, not ``trips``). A run over the limit fails the
  probe at once.
* Closing, by probe or by ``resume()``, empties the window: old failures never re-trip.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from stream_validator.config.breaker import BreakerAction, BreakerSpec

__all__ = ["BreakerAction", "BreakerSpec", "BreakerState", "BreakerTransition", "CircuitBreaker"]


class BreakerState(StrEnum):
    """Where a route's breaker is (a metric label value)."""

    CLOSED = "closed"
    OPEN = "open"
    HALF_OPEN = "half_open"


@dataclass(frozen=True, slots=True)
class BreakerTransition:
    """One change of state, with a reason fit for an event or a log line (no payload)."""

    route: str
    before: BreakerState
    after: BreakerState
    reason: str
    at: float
    #: The reason as a closed set (a metric label): ``share`` or ``consecutive`` for a trip
    #: or a failed probe, ``cool_down``, ``probe_passed``, ``operator``.
    cause: str = ""


class CircuitBreaker:
    """The breaker of one route; ``record`` each batch, ``poll`` each loop iteration."""

    def __init__(self, route: str, spec: BreakerSpec, clock: Callable[[], float]) -> None:
        self.route = route
        self.spec = spec
        self._clock = clock
        self.state = BreakerState.CLOSED
        self.trips = 0
        self.reopens = 0
        self._ring = bytearray(spec.window_records)  # 1 = quarantined
        self._pos = self._filled = self._bad = 0
        self._run = 0  # quarantined records in a row, across batches
        self._opened_at = 0.0
        self._probe_total = self._probe_bad = 0

    @property
    def consuming(self) -> bool:
        """False only while a ``pause`` breaker is open: the route's partitions stay paused."""
        return not (self.state is BreakerState.OPEN and self.spec.action is BreakerAction.PAUSE)

    @property
    def window_share(self) -> float:
        """The quarantined share of the records now in the window (0.0 when empty)."""
        return self._bad / self._filled if self._filled else 0.0

    def record(self, total: int, quarantined: Sequence[int]) -> BreakerTransition | None:
        """Fold in one batch: ``total`` records, ``quarantined`` their ascending indices."""
        if quarantined and not 0 <= quarantined[0] <= quarantined[-1] < total:
            raise ValueError(f"quarantined indices must lie in [0, {total}) and ascend")
        if total == 0 or self.state is BreakerState.OPEN:
            return None
        longest = self._update_run(total, quarantined)
        limit = self.spec.max_consecutive
        run_reason = f"{longest} consecutive records quarantined (limit {limit})"
        if self.state is BreakerState.HALF_OPEN:
            return self._probe(total, len(quarantined), longest, run_reason)
        self._push(total, quarantined)
        if limit is not None and longest >= limit:
            return self._trip(run_reason, "consecutive")
        needed = self.spec.min_records or self.spec.window_records
        share = self.window_share
        if self._filled >= needed and share > self.spec.max_quarantined_share:
            return self._trip(
                f"quarantined share {share:.3f} over the last {self._filled} records"
                f" > {self.spec.max_quarantined_share:g}",
                "share",
            )
        return None

    def poll(self) -> BreakerTransition | None:
        """Open → half_open once the cool-down has passed; otherwise nothing."""
        if self.state is not BreakerState.OPEN:
            return None
        if self._clock() - self._opened_at < self.spec.cool_down_s:
            return None
        self._probe_total = self._probe_bad = self._run = 0
        return self._move(
            BreakerState.HALF_OPEN, f"cool-down of {self.spec.cool_down_s:g} s over", "cool_down"
        )

    def resume(self) -> BreakerTransition | None:
        """Close by operator request (``stream-validator resume``, HTTP); None if closed."""
        if self.state is BreakerState.CLOSED:
            return None
        return self._close("resumed by operator", "operator")

    def snapshot(self) -> dict[str, object]:
        """JSON-ready state for ``/status``."""
        return {
            "state": str(self.state),
            "action": str(self.spec.action),
            "trips": self.trips,
            "reopens": self.reopens,
            "window_records": self._filled,
            "window_share": round(self.window_share, 4),
            "consecutive_quarantined": self._run,
        }

    def _update_run(self, total: int, quarantined: Sequence[int]) -> int:
        """Advance the run of quarantined records; the longest run seen in this batch."""
        run, longest, previous = self._run, 0, -1
        for index in quarantined:
            run = run + 1 if index == previous + 1 else 1
            longest = max(longest, run)
            previous = index
        self._run = run if previous == total - 1 else 0
        return longest

    def _push(self, total: int, quarantined: Sequence[int]) -> None:
        size = len(self._ring)
        outcomes = bytearray(total)
        for index in quarantined:
            outcomes[index] = 1
        if total >= size:
            self._ring[:] = outcomes[-size:]
            self._pos, self._filled, self._bad = 0, size, self._ring.count(1)
            return
        head = min(total, size - self._pos)
        for start, chunk in ((self._pos, outcomes[:head]), (0, outcomes[head:])):
            self._bad -= self._ring[start : start + len(chunk)].count(1)
            self._ring[start : start + len(chunk)] = chunk
            self._bad += chunk.count(1)
        self._pos = (self._pos + total) % size
        self._filled = min(size, self._filled + total)

    def _probe(
        self, total: int, bad: int, longest: int, run_reason: str
    ) -> BreakerTransition | None:
        self._probe_total += total
        self._probe_bad += bad
        limit = self.spec.max_consecutive
        if limit is not None and longest >= limit:
            return self._reopen(f"probe failed: {run_reason}", "consecutive")
        if self._probe_total < self.spec.probe_records:
            return None
        share = self._probe_bad / self._probe_total
        if share > self.spec.max_quarantined_share:
            return self._reopen(
                f"probe failed: quarantined share {share:.3f} over {self._probe_total} records"
                f" > {self.spec.max_quarantined_share:g}",
                "share",
            )
        return self._close(f"probe passed: quarantined share {share:.3f}", "probe_passed")

    def _trip(self, reason: str, cause: str) -> BreakerTransition:
        self.trips += 1
        self._opened_at = self._clock()
        return self._move(BreakerState.OPEN, reason, cause)

    def _reopen(self, reason: str, cause: str) -> BreakerTransition:
        self.reopens += 1
        self._opened_at = self._clock()
        return self._move(BreakerState.OPEN, reason, cause)

    def _close(self, reason: str, cause: str) -> BreakerTransition:
        self._ring[:] = bytes(len(self._ring))
        self._pos = self._filled = self._bad = self._run = 0
        return self._move(BreakerState.CLOSED, reason, cause)

    def _move(self, after: BreakerState, reason: str, cause: str) -> BreakerTransition:
        before, self.state = self.state, after
        return BreakerTransition(self.route, before, after, reason, self._clock(), cause)
