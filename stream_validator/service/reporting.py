"""Batch events, metrics hooks and /status bookkeeping, fed from the committer's Outcome.

They run only for a delivered batch, once per record (a retried batch is reported when it is
finally delivered, never before), and count what was acknowledged: the clean and DLQ outputs
after oversized and delivery_rejected conversions, not the verifier's verdict. A failure
among them is logged once per hook, counted, and never raised into the loop.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable

from stream_validator.service.commit import Outcome
from stream_validator.service.state import ServiceHooks, ServiceState, guarded

log = logging.getLogger("stream_validator.service")


class BatchReporter:
    """Reports delivered batches; owns the guarded hooks the service calls."""

    def __init__(
        self, hooks: ServiceHooks, state: ServiceState, safe: Callable[[object], str]
    ) -> None:
        self.state = state
        self.hooks = guarded(hooks, self.failed)
        self._safe = safe
        self._logged: set[str] = set()

    def report(self, outcome: Outcome, duration: float) -> None:
        """One event per route batch (log, /status, metrics) and the /status counters."""
        state = self.state
        state.batches += 1
        for delivered in outcome.routes:
            state.records += delivered.clean + delivered.dlq
            state.clean += delivered.clean
            state.dlq += delivered.dlq
        try:
            for delivered in outcome.routes:
                outputs = (delivered.clean, delivered.dlq, delivered.truncated)
                event = delivered.plan.event(delivered.violation_counts, outputs) | {
                    "converted_to_dlq": delivered.replaced,
                    "duration_ms": round(duration * 1000, 3),
                }
                log.info("batch", extra={k: v for k, v in event.items() if k != "event"})
                state.remember(event)
                self.hooks.on_batch(delivered, duration)
                for _ in range(delivered.truncated):
                    self.hooks.on_truncated(delivered.route)
                if delivered.latencies:
                    self.hooks.on_clean_latencies(delivered.route, delivered.latencies)
        except Exception as exc:
            self.failed("batch report", exc)

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
