"""The routes' DLQ circuit breakers wired to the consumer (the state machine is ``machine``).

The loop thread calls, in each turn: ``poll`` (operator resumes, cool-downs, partitions
assigned to a paused route), ``admit`` on what consume() returned, and ``record`` with
each delivered batch's ``BatchOutcome`` (counted from acknowledgements, never from the plan).
A ``pause`` breaker that opens pauses the route's assigned partitions; the consumer keeps
polling, so it stays in the group. Half-open resumes them for the probe; a failed probe
pauses them again.

Nothing consumed is lost to a pause. Batches already submitted are delivered and committed
as usual. Records of a paused route that consume() still returns (fetched before the
pause, or from a partition just assigned) are not processed: their partition is paused and
seeked back to the first of them, so they are read again after the resume.

``request_resume`` is the one call made from another thread (the health server's
``POST /breaker/resume``): it queues the request for the loop and waits, bounded, for it.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from stream_validator.config.breaker import BreakerAction
from stream_validator.config.settings import RouteConfig
from stream_validator.errors import KafkaClientError, UnknownRouteError
from stream_validator.kafka.ports import Consumed, Consumer
from stream_validator.records import TopicPartitionKey
from stream_validator.service.breaker.machine import BreakerState, BreakerTransition, CircuitBreaker
from stream_validator.service.delivery.committer import BatchOutcome

log = logging.getLogger("stream_validator.service")


@dataclass(eq=False)
class _Request:
    route: str
    done: threading.Event = field(default_factory=threading.Event)
    before: str = ""


class RouteBreakers:
    """Every route's breaker; the partitions it paused; operator resume requests."""

    def __init__(
        self,
        routes: Sequence[RouteConfig],
        *,
        clock: Callable[[], float],
        on_transition: Callable[[BreakerTransition], None],
        status: dict[str, dict[str, object]],
        route_of: Callable[[str], str | None],
        safe: Callable[[object], str],
    ) -> None:
        self._breakers = {
            r.name: CircuitBreaker(r.name, r.circuit_breaker, clock)
            for r in routes
            if r.circuit_breaker is not None
        }
        self._all_routes = frozenset(r.name for r in routes)
        self._on_transition = on_transition
        self._status = status  # route -> its /status entry (``ServiceState.breakers``)
        self._route_of = route_of
        self._safe = safe
        self._assigned: set[TopicPartitionKey] = set()
        self._paused: set[TopicPartitionKey] = set()  # assigned, and paused by us
        # Revoked or lost while paused: under cooperative-sticky librdkafka keeps the pause
        # flag of a partition through its revocation, so one assigned back may still be
        # paused whatever its route's breaker says now; _sync sets it right either way.
        self._stale: set[TopicPartitionKey] = set()
        self._requests: queue.SimpleQueue[_Request] = queue.SimpleQueue()
        for name in self._breakers:
            self._publish(name)

    # --- the loop thread ---------------------------------------------------------------

    def rebalanced(self, event: str, keys: list[TopicPartitionKey]) -> None:
        """Inside consume(): remember assigned partitions, forget revoked or lost ones. A
        paused route's new partitions are paused by the next ``poll`` or ``admit``."""
        if event == "assigned":
            self._assigned.update(keys)
            return
        self._assigned.difference_update(keys)
        self._stale.update(self._paused.intersection(keys))
        self._paused.difference_update(keys)

    def poll(self, consumer: Consumer) -> None:
        """Operator resumes, cool-downs over; then the partitions follow the breakers."""
        while not self._requests.empty():  # only this thread takes from the queue
            request = self._requests.get_nowait()
            breaker = self._breakers[request.route]
            request.before = str(breaker.state)
            transition = breaker.resume()
            if transition is not None:
                self._apply(consumer, transition)
            request.done.set()
        for breaker in self._breakers.values():
            transition = breaker.poll()
            if transition is not None:
                self._apply(consumer, transition)
        self._sync(consumer)

    def admit(self, consumer: Consumer, consumed: Consumed) -> Consumed:
        """The records to process: none of a paused route (those are read again later)."""
        if all(b.consuming for b in self._breakers.values()) or not consumed.records:
            return consumed
        first: dict[TopicPartitionKey, int] = {}
        kept = []
        for record in consumed.records:
            key = (record.topic, record.partition)
            if key in first or self._blocked(record.topic):
                first.setdefault(key, record.offset)
            else:
                kept.append(record)
        if not first:
            return consumed
        self._pause(consumer, [k for k in first if k not in self._paused])
        for key, offset in first.items():
            try:
                consumer.seek(key, offset)  # after pause(): the resume fetches from here
            except KafkaClientError as exc:  # revoked meanwhile: its new owner reads it
                log.warning(
                    "seek back of a paused partition failed",
                    extra={"topic": key[0], "partition": key[1], "error": self._safe(exc)},
                )
        log.info(
            "records of a paused route left for after the resume",
            extra={"records": len(consumed.records) - len(kept), "partitions": sorted(first)},
        )
        return Consumed(kept, consumed.errors, consumed.unreadable_headers)

    def record(self, consumer: Consumer, outcome: BatchOutcome) -> None:
        """Feed each route's breaker with what a delivered batch delivered."""
        for delivered in outcome.routes:
            breaker = self._breakers.get(delivered.route)
            if breaker is None:
                continue
            total = delivered.clean + delivered.dlq
            transition = breaker.record(total, delivered.quarantined)
            if transition is not None:
                self._apply(consumer, transition)
            elif total:
                self._publish(breaker.route)

    # --- any thread --------------------------------------------------------------------

    def request_resume(self, route: str, timeout_s: float) -> tuple[str, str] | None:
        """Close a route's breaker from another thread: (state before, state after), or
        None when the loop did not take the request within ``timeout_s`` (it stays queued).
        UnknownRouteError: no such route, or a route without a breaker."""
        if route not in self._breakers:
            known = ", ".join(sorted(self._breakers)) or "none"
            what = "has no circuit_breaker" if route in self._all_routes else "is not a route"
            raise UnknownRouteError(f"{route[:100]!r} {what} (routes with a breaker: {known})")
        request = _Request(route)
        self._requests.put(request)
        if not request.done.wait(timeout_s):
            return None
        return request.before, str(self._breakers[route].state)

    # --- internals ---------------------------------------------------------------------

    def _blocked(self, topic: str) -> bool:
        route = self._route_of(topic)
        breaker = self._breakers.get(route) if route is not None else None
        return breaker is not None and not breaker.consuming

    def _apply(self, consumer: Consumer, t: BreakerTransition) -> None:
        breaker = self._breakers[t.route]
        pausing = breaker.spec.action is BreakerAction.PAUSE
        level = logging.WARNING if t.after is BreakerState.OPEN else logging.INFO
        log.log(
            level,
            "breaker",
            extra={
                "route": t.route,
                "before": str(t.before),
                "after": str(t.after),
                "cause": t.cause,
                "reason": t.reason,
                "breaker_action": str(breaker.spec.action),
                "trips": breaker.trips,
                "reopens": breaker.reopens,
            },
        )
        self._on_transition(t)
        if pausing:
            self._sync(consumer)
        self._publish(t.route)

    def _sync(self, consumer: Consumer) -> None:
        """Pause every assigned partition of a paused route (also ones a rebalance just
        assigned), resume the others; a failed call is tried again at the next turn."""
        stale = self._stale & self._assigned
        if not self._paused and not stale and all(b.consuming for b in self._breakers.values()):
            return
        blocked = {key for key in self._assigned if self._blocked(key[0])}
        self._pause(consumer, sorted(blocked - self._paused))
        release = sorted((self._paused | stale) - blocked)
        if release and self._call(consumer.resume, release, "resume"):
            self._paused.difference_update(release)
            self._stale.difference_update(release)
            for route in {self._route_of(topic) for topic, _ in release}:
                if route in self._breakers:
                    self._publish(route)

    def _publish(self, route: str) -> None:
        """The route's /status entry: the breaker's snapshot and its paused partitions."""
        paused = sum(1 for key in self._paused if self._route_of(key[0]) == route)
        self._status[route] = self._breakers[route].snapshot() | {"paused_partitions": paused}

    def _pause(self, consumer: Consumer, keys: list[TopicPartitionKey]) -> None:
        if keys and self._call(consumer.pause, sorted(keys), "pause"):
            self._paused.update(keys)
            self._stale.difference_update(keys)
            for route in {self._route_of(topic) for topic, _ in keys}:
                if route in self._breakers:
                    self._publish(route)

    def _call(
        self,
        call: Callable[[Sequence[TopicPartitionKey]], None],
        keys: list[TopicPartitionKey],
        name: str,
    ) -> bool:
        try:
            call(keys)
        except KafkaClientError as exc:  # _sync tries again at the next turn
            log.warning(
                f"{name} of partitions failed", extra={"partitions": keys, "error": self._safe(exc)}
            )
            return False
        return True
