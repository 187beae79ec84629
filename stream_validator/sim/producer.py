"""The simulator's imperative shell: topic setup, the paced produce loop, delivery accounting.

``produce_simulated`` drives a ``Simulator`` into a producer (the Kafka adapter's
``ports.Producer``) until a count, a duration or a stop request ends it, then flushes with a
bounded wait. Records are enqueued by the adapter's one produce loop (``io.produce_one``,
which waits out a full queue); waiting for the next paced message happens inside
``producer.poll``, so delivery callbacks run while it waits and it never spins.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, Protocol

from stream_validator.errors import KafkaClientError, SimulateError, TopicAdminError
from stream_validator.kafka.io import produce_one
from stream_validator.kafka.ports import Admin, DeliveryReport, Producer
from stream_validator.kafka.topics import create_topics
from stream_validator.records import Headers
from stream_validator.sim import SimMessage

# Longest single wait, so a stop request or the end of a duration is seen promptly.
_MAX_WAIT_S: Final = 0.1
# poll() counts whole milliseconds: a shorter wait would return at once and spin, so a
# message due within a millisecond goes out now (the average rate still holds).
_MIN_WAIT_S: Final = 0.001
_MAX_ERRORS_KEPT: Final = 5


class StopFlag:
    """Set by signal handlers: the first request stops producing, the second stops flushing."""

    __slots__ = ("reason", "requests")

    def __init__(self) -> None:
        self.requests = 0
        self.reason = "signal"

    def request(self, *_: object) -> None:
        """Ask the loop to stop (usable directly as a signal handler)."""
        self.requests += 1

    def abort(self, reason: str) -> None:
        """Stop because of an error rather than a signal."""
        self.reason = reason
        self.requests += 1


@dataclass(slots=True)
class DeliveryTally:
    """Delivery reports counted by outcome, with the first few distinct errors."""

    delivered: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)

    def on_delivery(self, report: DeliveryReport) -> None:
        """The producer's delivery callback."""
        if report.error is None:
            self.delivered += 1
        else:
            self.fail(report.error)

    def fail(self, err: object, count: int = 1) -> None:
        """Count ``count`` messages as failed, remembering the reason."""
        self.failed += count
        text = str(err)
        if len(self.errors) < _MAX_ERRORS_KEPT and text not in self.errors:
            self.errors.append(text)


@dataclass(frozen=True, slots=True)
class Limits:
    """When to stop (whichever comes first) and how fast to go (0: as fast as possible)."""

    count: int | None = None
    duration: float | None = None
    rate: float = 0.0


@dataclass(slots=True)
class RunResult:
    """What a run produced, per scenario, and what became of it."""

    produced: Counter[str]
    tally: DeliveryTally
    elapsed: float
    stopped_by: str


class MessageSource(Protocol):
    """What ``produce_simulated`` draws messages from: a ``Simulator`` (or one wrapping it,
    such as ``sim.framing.AvroFramedSimulator``)."""

    def next(self, elapsed: float) -> SimMessage:
        """The next message, ``elapsed`` seconds into the run."""
        ...


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A simulated message addressed to its topic (``ports.Producible``)."""

    topic: str
    key: bytes | None
    value: bytes | None
    headers: Headers
    timestamp_ms: int | None = None  # the broker's (or producer's) clock

    @classmethod
    def of(cls, topic: str, message: SimMessage) -> Outgoing:
        """The message to produce to ``topic``."""
        return cls(topic, message.key, message.value, list(message.headers))


def seconds_until_due(sent: int, elapsed: float, rate: float) -> float:
    """How long until message number ``sent`` is due at ``rate`` per second (<= 0: now)."""
    return sent / rate - elapsed if rate > 0 else 0.0


def produce_simulated(
    producer: Producer,
    topic: str,
    sim: MessageSource,
    limits: Limits,
    stop: StopFlag,
    *,
    flush_timeout: float,
    clock: Callable[[], float] = time.monotonic,
) -> RunResult:
    """Produce simulated messages until a limit or a stop request; flush; count outcomes."""
    tally = DeliveryTally()
    produced: Counter[str] = Counter()
    sent = 0
    start = clock()
    while True:
        elapsed = clock() - start
        if stop.requests:
            stopped_by = stop.reason
            break
        if limits.count is not None and sent >= limits.count:
            stopped_by = "count"
            break
        if limits.duration is not None and elapsed >= limits.duration:
            stopped_by = "duration"
            break
        wait = seconds_until_due(sent, elapsed, limits.rate)
        if wait >= _MIN_WAIT_S:
            producer.poll(min(wait, _MAX_WAIT_S))
            continue
        message = sim.next(elapsed)
        if not _enqueue(producer, topic, message, tally, stop):
            stopped_by = stop.reason
            break
        produced[message.scenario] += 1
        sent += 1
        producer.poll(0)
    _flush(producer, tally, stop, clock() + flush_timeout, clock)
    return RunResult(produced, tally, clock() - start, stopped_by)


def _enqueue(
    producer: Producer, topic: str, message: SimMessage, tally: DeliveryTally, stop: StopFlag
) -> bool:
    """Hand one message to the producer, waiting while its queue is full; False if stopped."""
    record = Outgoing.of(topic, message)
    try:
        return produce_one(producer, record, tally.on_delivery, give_up=lambda: stop.requests > 0)
    except KafkaClientError as exc:  # refused locally (e.g. too large): it failed
        tally.fail(exc.info)
        return True


def _flush(
    producer: Producer,
    tally: DeliveryTally,
    stop: StopFlag,
    deadline: float,
    clock: Callable[[], float],
) -> None:
    """Flush in short slices so a second stop request cuts it short; leftovers count as failed."""
    remaining = producer.flush(0)
    while remaining and stop.requests < 2 and clock() < deadline:
        remaining = producer.flush(_MAX_WAIT_S * 5)
    if remaining:
        tally.fail(f"{remaining} message(s) still undelivered when the flush ended", remaining)


def check_topic(admin: Admin, topic: str, timeout: float, *, where: str) -> int:
    """Return the topic's partition count; raise SimulateError if unreachable or missing.
    ``where`` names the broker (its bootstrap servers) in the messages."""
    count = _topics(admin, timeout, where).get(topic)
    if not count:
        raise SimulateError(
            f"topic {topic!r} is not available on {where}; create it first or pass --create-topic"
        )
    return count


def ensure_topic(admin: Admin, topic: str, partitions: int, timeout: float, *, where: str) -> bool:
    """Create the topic unless it exists, then wait until it is usable; True if created."""
    if _topics(admin, timeout, where).get(topic):
        return False
    try:
        outcome = create_topics(
            admin,
            [topic],
            partitions=partitions,
            timeout_s=timeout,
            wait_until_usable=True,
            where=f"Kafka at {where}",
        )
    except TopicAdminError as exc:
        raise SimulateError(str(exc)) from None
    return outcome[topic] == "created"


def _topics(admin: Admin, timeout: float, where: str) -> dict[str, int]:
    try:
        return admin.topics(timeout)
    except KafkaClientError as exc:
        raise SimulateError(f"cannot reach Kafka at {where} within {timeout:g} s: {exc}") from None
