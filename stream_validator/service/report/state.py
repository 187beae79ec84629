"""The runtime state ``/status`` shows: written by the loop thread, read by the health server."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ServiceState:
    """What the health endpoints read; written by the loop thread only."""

    ready: bool = False
    started_at: float = field(default_factory=time.monotonic)
    last_loop: float = field(default_factory=time.monotonic)
    last_error: str | None = None
    batches: int = 0
    records: int = 0
    clean: int = 0
    dlq: int = 0
    failed_batches: int = 0
    commits: int = 0
    hook_errors: int = 0
    recent_events: list[dict[str, Any]] = field(default_factory=list)
    #: route -> its circuit breaker's snapshot (routes with a breaker only).
    breakers: dict[str, dict[str, object]] = field(default_factory=dict)
    #: route -> its live contract (name, version, file) and last reload attempt.
    contracts: dict[str, dict[str, object]] = field(default_factory=dict)
    #: route -> its shadow contract and how it judged records differently (``shadow/``).
    shadows: dict[str, dict[str, object]] = field(default_factory=dict)
    max_events: int = 20

    def remember(self, event: dict[str, Any]) -> None:
        """Keep the last few batch events for /status."""
        self.recent_events.append(event)
        del self.recent_events[: -self.max_events]
