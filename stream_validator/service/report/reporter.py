"""Batch events, periodic summaries, metrics hooks and /status bookkeeping, fed from the
committer's BatchOutcome.

They run only for a delivered batch, once per record (a retried batch is reported when it is
finally delivered, never before), and count what was acknowledged: the clean and DLQ outputs
after oversized and delivery_rejected conversions, not the verifier's verdict. A failure
among them is logged once per hook, counted, and never raised into the loop.

Every batch event goes to /status; the log gets it at INFO only when the batch has something
to report (``notable``), else at DEBUG, so a clean feed of a few hundred records a second does
not write thousands of lines a minute. What the quiet batches delivered is in the ``summary``
event, every ``service.log_summary_interval_s`` on the loop's clock and once at shutdown.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from stream_validator.service.breaker.machine import BreakerTransition
from stream_validator.service.delivery.accounting import RouteDelivery
from stream_validator.service.delivery.committer import BatchOutcome
from stream_validator.service.report.hooks import ServiceHooks, guarded
from stream_validator.service.report.state import ServiceState

log = logging.getLogger("stream_validator.service")


class BatchReporter:
    """Reports delivered batches; owns the guarded hooks the service calls."""

    def __init__(
        self,
        hooks: ServiceHooks,
        state: ServiceState,
        safe: Callable[[object], str],
        *,
        routes: Iterable[str] = (),
        summary_interval_s: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``routes``: those the summary lists (with zeros when they delivered nothing);
        ``summary_interval_s``: 0 logs no summary; ``clock``: monotonic seconds."""
        self.state = state
        self.hooks = guarded(hooks, self.failed)
        on_breaker = self.hooks.on_breaker
        self._changed: set[str] = set()  # routes whose breaker changed since their last batch

        def breaker_changed(transition: BreakerTransition) -> None:
            self._changed.add(transition.route)
            on_breaker(transition)

        self.hooks.on_breaker = breaker_changed
        self._safe = safe
        self._logged: set[str] = set()
        self._summary = Summary(routes, summary_interval_s, clock)

    def report(self, outcome: BatchOutcome, duration: float) -> None:
        """One event per route batch (log, /status, metrics) and the /status counters."""
        state = self.state
        state.batches += 1
        for delivered in outcome.routes:
            state.records += delivered.clean + delivered.dlq
            state.clean += delivered.clean
            state.dlq += delivered.dlq
        try:
            for delivered in outcome.routes:
                self._summary.add(delivered)
                outputs = (delivered.clean, delivered.dlq, delivered.truncated)
                event = delivered.plan.event(delivered.violation_counts, outputs) | {
                    "converted_to_dlq": delivered.replaced,
                    "duration_ms": round(duration * 1000, 3),
                }
                # A breaker change is logged by the breaker too; its batch says what caused it.
                changed = delivered.route in self._changed
                self._changed.discard(delivered.route)
                level = logging.INFO if changed or notable(event) else logging.DEBUG
                if log.isEnabledFor(level):
                    log.log(level, "batch", extra={k: v for k, v in event.items() if k != "event"})
                state.remember(event)
                self.hooks.on_batch(delivered, duration)
                for _ in range(delivered.truncated):
                    self.hooks.on_truncated(delivered.route)
                if delivered.latencies:
                    self.hooks.on_clean_latencies(delivered.route, delivered.latencies)
        except Exception as exc:
            self.failed("batch report", exc)

    def summarise(self, *, final: bool = False) -> None:
        """Log the summary when its interval is up (every loop turn calls this), or, with
        ``final``, what the last partial interval delivered (at shutdown)."""
        try:
            self._summary.emit(final=final)
        except Exception as exc:
            self.failed("summary", exc)

    def failed(self, name: str, exc: Exception) -> None:
        """A hook or the batch report raised: count it, log it once per hook."""
        self.state.hook_errors += 1
        with contextlib.suppress(Exception):  # counted above; nothing more to do
            self.hooks.on_hook_error(name)
        if name in self._logged:
            return
        self._logged.add(name)
        log.error(
            "hook failed; the batch is committed anyway (logged once per hook)",
            exc_info=(type(exc), exc, exc.__traceback__),
            extra={"hook": name, "error": self._safe(f"{type(exc).__name__}: {exc}")},
        )


def notable(event: Mapping[str, Any]) -> bool:
    """The batch has something to report: DLQ entries (conversions and truncated envelopes
    among them), a null-ceiling breach, per-symbol state events, undeclared fields (drift)
    or records flagged by a rule."""
    state = event["symbol_state"]
    return bool(
        event["dlq_out"]
        or event["converted_to_dlq"]
        or event["truncated_envelopes"]
        or event["null_breach_fields"]
        or event["unknown_fields"]
        or event["unknown_fields_left_out"]
        or event["flagged_by_rule"]
        or (state is not None and state["events"])
    )


class Summary:
    """Per route, what the delivered batches of the current interval delivered."""

    _KEYS = ("records", "clean", "dlq", "batches", "flagged")

    def __init__(self, routes: Iterable[str], interval_s: float, clock: Callable[[], float]):
        self._routes = list(routes)
        self._interval_s = interval_s
        self._clock = clock
        self._since: float | None = None  # the interval starts at the loop's first turn
        self._counts: dict[str, dict[str, int]] = {}
        self._reset()

    def add(self, delivered: RouteDelivery) -> None:
        """Count a delivered route batch."""
        counts = self._counts.get(delivered.route)
        if counts is None:
            counts = self._counts[delivered.route] = dict.fromkeys(self._KEYS, 0)
        counts["records"] += delivered.clean + delivered.dlq
        counts["clean"] += delivered.clean
        counts["dlq"] += delivered.dlq
        counts["batches"] += 1
        counts["flagged"] += sum(delivered.plan.report.flagged_counts.values())

    def emit(self, *, final: bool) -> None:
        """Log and restart the interval when it is up (or ``final``)."""
        if self._interval_s <= 0:
            return
        now = self._clock()
        if self._since is None:  # the first turn starts the interval; no turn, no summary
            if not final:
                self._since = now
            return
        elapsed = now - self._since
        if not final and elapsed < self._interval_s:
            return
        log.info(
            "summary",
            extra={"interval_s": round(elapsed, 3), "final": final, "routes": self._counts},
        )
        self._since = now
        self._reset()

    def _reset(self) -> None:
        self._counts = {route: dict.fromkeys(self._KEYS, 0) for route in self._routes}
