"""Batch events, metrics hooks and /status bookkeeping: they run between delivery and commit,
so a failure among them is logged once per hook, counted, and never raised into the loop."""

from __future__ import annotations

import logging
from collections.abc import Callable

from stream_validator.service.delivery import Deliveries
from stream_validator.service.pipeline import BatchPlan
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

    def report(self, plans: list[BatchPlan], deliveries: Deliveries, duration: float) -> None:
        """One event per route batch (log, /status, metrics), counted from what was delivered."""
        try:
            for plan in plans:
                event = plan.event() | {
                    "clean_out": deliveries.delivered.get((plan.route, "clean"), 0),
                    "dlq_out": deliveries.delivered.get((plan.route, "dlq"), 0),
                    "duration_ms": round(duration * 1000, 3),
                }
                log.info("batch", extra={k: v for k, v in event.items() if k != "event"})
                self.state.remember(event)
                self.hooks.on_batch(plan, duration)
                for _ in range(sum(1 for out in plan.outputs if out.truncated)):
                    self.hooks.on_truncated(plan.route)
        except Exception as exc:
            self.failed("batch report", exc)

    def failed(self, name: str, exc: Exception) -> None:
        """A hook or the batch report raised: count it, log it once per hook."""
        self.state.hook_errors += 1
        if name in self._logged:
            return
        self._logged.add(name)
        log.error(
            "hook failed; the batch is committed anyway (logged once per hook)",
            exc_info=(type(exc), exc, exc.__traceback__),
            extra={"hook": name, "error": self._safe(f"{type(exc).__name__}: {exc}")},
        )
