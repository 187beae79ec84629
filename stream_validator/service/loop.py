"""The streaming loop: consume micro-batches, validate per route, produce, then commit.

At-least-once: an input offset is committed only after every output of its batch
(clean or DLQ) was acknowledged by the broker. When any output fails, nothing of
the batch is committed: the consumer seeks back to the batch start and the batch
is retried after a backoff (duplicates of outputs that did land are possible;
losses are not). Records the broker refuses for good are isolated by re-reading the
batch and become DLQ entries (``rejections.py``); exactly-once mode runs each batch in
a transaction whose calls have deadlines (``transactions.py``).
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

from confluent_kafka import (
    Consumer,
    KafkaError,
    KafkaException,
    Message,
    Producer,
    TopicPartition,
)

from stream_validator import __version__
from stream_validator.config.settings import RouteConfig, ServiceConfig, scrub
from stream_validator.errors import FatalTransactionError, ProducerLostError, ServiceExit
from stream_validator.kafka.clients import create_consumer, create_producer
from stream_validator.kafka.messages import read_record
from stream_validator.kafka.transactions import Transactions, committed_positions
from stream_validator.records import SourceRecord, TopicPartitionKey
from stream_validator.service.callbacks import ClientCallbacks
from stream_validator.service.delivery import BatchProducer, Deliveries
from stream_validator.service.pipeline import RouteProcessor
from stream_validator.service.readiness import Readiness
from stream_validator.service.rejections import Coordinates, Rejections, coordinates
from stream_validator.service.replacements import Replacements
from stream_validator.service.reporting import BatchReporter
from stream_validator.service.state import ServiceHooks, ServiceState

log = logging.getLogger("stream_validator.service")

# Re-reads to isolate refused records converge in two rounds per record; more in a row
# means something else is wrong, so they count as failed batches from then on.
_REREADS_BEFORE_FAILING = 5


class _Outcome(enum.Enum):
    DELIVERED = "delivered"
    FAILED = "failed"
    REREAD = "reread"  # refused records learnt; re-read the batch at once


class StreamService:
    """Runs the consume -> validate -> produce -> commit loop until stopped."""

    def __init__(
        self,
        config: ServiceConfig,
        *,
        hooks: ServiceHooks | None = None,
        state: ServiceState | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.config = config
        self.state = state or ServiceState()
        self._secrets = config.kafka.secrets()
        self._reporter = BatchReporter(hooks or ServiceHooks(), self.state, self._safe)
        self.hooks = self._reporter.hooks
        self._callbacks = ClientCallbacks(
            self.state,
            self.hooks,
            safe=self._safe,
            set_ready=self._set_ready,
            commit_pending=self._commit_pending,
            drop_partitions=self._drop_partitions,
        )
        self._clock = clock
        self._stop = threading.Event()
        self._processors = {
            route.name: RouteProcessor(
                route,
                consumer_group=config.kafka.group_id,
                validator_version=__version__,
                max_message_bytes=config.max_message_bytes,
            )
            for route in config.routes
        }
        self._topic_routes: dict[str, RouteConfig | None] = {}
        self._uncommitted: dict[TopicPartitionKey, int] = {}
        self._rejections = Rejections()
        self._replacements = Replacements(
            self._processors,
            self._rejections,
            consumer_group=config.kafka.group_id,
            max_message_bytes=config.max_message_bytes,
            clock=clock,
        )
        self._halt: str | None = None
        self._producer_generation = 0
        self._failed_in_a_row = 0
        self._rereads_in_a_row = 0
        self._readiness = Readiness(
            config,
            self.state,
            note_error=self._note_error,
            set_ready=self._set_ready,
            safe=self._safe,
        )
        self._consumer: Consumer | None = None
        self._producer: Producer | None = None
        self._batch_producer: BatchProducer | None = None
        self._transactions: Transactions | None = None

    # --- lifecycle ------------------------------------------------------------

    def stop(self) -> None:
        """Ask the loop to finish the in-flight batch and exit (signal-safe)."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        """True once stop() was called."""
        return self._stop.is_set()

    def run(self) -> int:
        """Run until stopped; return the process exit code."""
        self._consumer = create_consumer(
            self.config, stats_cb=self._callbacks.on_stats, error_cb=self._callbacks.on_error
        )
        if self.config.kafka.transactional_id:
            self._transactions = Transactions(
                self._new_producer, self._consumer, self._flush_timeout()
            )
            self._producer = self._transactions.producer
        else:
            self._producer = self._new_producer()
        self._batch_producer = BatchProducer(
            self._producer,
            flush_timeout_s=self._flush_timeout(),
            prepare=self._replacements.prepare,
            replace_oversized=self._replacements.oversized,
            produce_alone=self._rejections.produce_alone,
            safe=self._safe,
        )
        try:
            if not self._readiness.wait_for_topics(self._producer, self._stop):
                return ServiceExit.OK
            if self._transactions is not None:
                try:
                    self._transactions.init()
                except ProducerLostError as exc:
                    if not self._replace_producer(exc):
                        return ServiceExit.OK
                log.info(
                    "exactly-once mode: one transaction per batch",
                    extra={"transactional_id": self.config.kafka.transactional_id},
                )
            self._subscribe()
            return self._loop()
        except FatalTransactionError as exc:
            log.error("fatal transaction error; stopping", extra={"error": self._safe(exc)})
            return ServiceExit.FATAL
        finally:
            self._close()

    def _new_producer(self) -> Producer:
        """A producer whose errors count only while it is the current one."""
        self._producer_generation += 1
        generation = self._producer_generation

        def on_error(error: KafkaError) -> None:
            if generation == self._producer_generation:
                # A transactional producer's fatal errors surface in its transactional calls,
                # which decide between replacing it and stopping.
                self._callbacks.on_error(error, fatal_stops=not self.config.kafka.transactional_id)

        return create_producer(self.config, error_cb=on_error)

    def _set_ready(self, ready: bool) -> None:
        if self.state.ready != ready:
            log.info("readiness changed", extra={"ready": ready})
        self.state.ready = ready
        self.hooks.on_ready(ready)

    def _subscribe(self) -> None:
        assert self._consumer is not None
        topics: list[str] = []
        for route in self.config.routes:
            topics.extend(route.subscription())  # full-match, the rule routing uses
        self._consumer.subscribe(
            sorted(set(topics)),
            on_assign=self._callbacks.on_assign,
            on_revoke=self._callbacks.on_revoke,
            on_lost=self._callbacks.on_lost,
        )
        self._set_ready(True)
        log.info(
            "subscribed", extra={"topics": sorted(set(topics)), "group": self.config.kafka.group_id}
        )

    def _loop(self) -> int:
        assert self._consumer is not None
        consumer = self._consumer
        while not self._stop.is_set():
            self.state.last_loop = time.monotonic()
            if self._callbacks.fatal is not None:
                log.error("fatal Kafka error; stopping", extra={"error": self._callbacks.fatal})
                return ServiceExit.FATAL
            try:
                messages = consumer.consume(
                    num_messages=self.config.batch_max_records,
                    timeout=self.config.batch_timeout_s,
                )
            except KafkaException as exc:  # only fatal consumer errors are raised here
                log.error("consumer failed; stopping", extra={"error": self._safe(exc)})
                return ServiceExit.FATAL
            if not messages:
                if not self.state.ready and self._failed_in_a_row == 0:
                    assert self._producer is not None
                    self._readiness.probe(self._producer)
                continue
            outcome = self._process(messages)
            if self._halt is not None:
                log.error("halting: a record cannot be delivered", extra={"error": self._halt})
                return ServiceExit.HALTED
            if outcome is _Outcome.REREAD:
                self._rereads_in_a_row += 1
                if self._rereads_in_a_row <= _REREADS_BEFORE_FAILING:
                    continue
                outcome = _Outcome.FAILED
            else:
                self._rereads_in_a_row = 0
            if outcome is _Outcome.FAILED:
                self._failed_in_a_row += 1
                self.state.failed_batches += 1
                halt_after = self.config.halt_after_failed_batches
                if halt_after and self._failed_in_a_row >= halt_after:
                    log.error(
                        "halting: batches keep failing to deliver; nothing was committed"
                        " past the last delivered batch",
                        extra={"failed_batches_in_a_row": self._failed_in_a_row},
                    )
                    return ServiceExit.HALTED
                backoff = min(
                    self.config.retry_backoff_s * 2 ** (self._failed_in_a_row - 1),
                    self.config.retry_backoff_max_s,
                )
                self._stop.wait(backoff)
            else:
                self._failed_in_a_row = 0
        return ServiceExit.OK

    def _close(self) -> None:
        if self._transactions is not None:
            try:
                self._transactions.abort()  # only open after an error mid-batch
            except (FatalTransactionError, ProducerLostError) as exc:
                log.warning("abort at shutdown failed", extra={"error": self._safe(exc)})
        if self._consumer is not None:
            self._commit_pending("shutdown")
            try:
                self._consumer.close()  # leaves the group
            except (KafkaException, RuntimeError) as exc:
                log.warning("consumer close failed", extra={"error": self._safe(exc)})
            self._consumer = None
        if self._producer is not None:
            try:
                left = self._producer.flush(5.0)
            except KafkaException as exc:  # a fatal producer error raises here
                log.warning("producer flush at shutdown failed", extra={"error": self._safe(exc)})
                left = 0
            if left:
                log.error(
                    "producer closed with undelivered records (not committed)",
                    extra={"undelivered": left},
                )
            self._producer = None
        self._set_ready(False)

    # --- one batch ------------------------------------------------------------

    def _process(self, messages: list[Message]) -> _Outcome:
        """Validate, produce and commit one consumed batch."""
        started = time.perf_counter()
        first: dict[TopicPartitionKey, int] = {}
        after: dict[TopicPartitionKey, int] = {}
        by_route: dict[str, list[SourceRecord]] = {}
        unreadable: dict[Coordinates, str] = {}
        for message in messages:
            error = message.error()
            if error is not None:
                self._callbacks.on_message_error(error)
                continue
            record, problem = read_record(message)
            if problem is not None:
                unreadable[coordinates(record)] = problem
            tp = (record.topic, record.partition)
            first.setdefault(tp, record.offset)
            after[tp] = record.offset + 1
            route = self._route_for(record.topic)
            if route is None:
                # Cannot happen with a consistent subscription; refuse to drop silently.
                self._callbacks.fatal = f"record from topic {record.topic!r} matches no route"
                self._seek(first)
                return _Outcome.FAILED
            by_route.setdefault(route.name, []).append(record)
        if not by_route:
            return _Outcome.DELIVERED  # only consumer errors (logged): nothing to commit
        validated_at = self._clock().isoformat()
        plans = [
            self._processors[name].plan(records, validated_at=validated_at)
            for name, records in by_route.items()
        ]
        self._replacements.unreadable_headers = unreadable
        assert self._batch_producer is not None
        txn = self._transactions
        try:
            if txn is not None:
                txn.begin()
            deliveries = self._batch_producer.produce(plans)
            if deliveries.rejected:
                return self._reread_refused(deliveries, first)
            if deliveries.failed or deliveries.pending:
                self._delivery_failed(deliveries, first)
                if txn is not None:
                    # After a broker restart the old producer can stay stuck (its next
                    # transactional call may never return); a new one's init aborts the
                    # failed transaction, and the committed offsets say where to resume.
                    raise ProducerLostError("outputs of the transaction failed")
                return _Outcome.FAILED
            self._reporter.report(plans, deliveries, time.perf_counter() - started)
            if txn is not None:
                aborted = txn.commit(after)
                if aborted is not None:
                    self._retry_batch("transaction aborted", [aborted], first)
                    return _Outcome.FAILED
        except ProducerLostError as exc:
            if self._replace_producer(exc):
                self._rewind_to_committed(first)
            return _Outcome.FAILED
        for route_name, latencies in deliveries.latencies.items():
            self.hooks.on_clean_latencies(route_name, latencies)
        self.state.batches += 1
        self.state.records += sum(len(r) for r in by_route.values())
        for (_, kind), count in deliveries.delivered.items():
            if kind == "clean":
                self.state.clean += count
            else:
                self.state.dlq += count
        self._rejections.forget(after)
        if txn is None:
            self._uncommitted.update(after)
            self._commit_pending("batch")
        else:
            self.state.commits += 1
            self.hooks.on_commit(time.time())
        if not self.state.ready:
            self._set_ready(True)
        return _Outcome.DELIVERED

    def _reread_refused(
        self, deliveries: Deliveries, first: dict[TopicPartitionKey, int]
    ) -> _Outcome:
        """The broker refused records for good: learn which, and re-read the batch."""
        dead_end = self._rejections.learn(deliveries.rejected)
        self._seek(first)
        if self._transactions is not None:
            self._transactions.abort()
        if dead_end is not None:
            src = dead_end.source
            self._halt = self._safe(
                f"the DLQ topic {dead_end.topic} refused the DLQ entry of {src.topic}"
                f" [{src.partition}] @{src.offset}: {dead_end.reason}; nothing was committed"
                " past it"
            )
            self._note_error(self._halt)
            return _Outcome.FAILED
        log.warning(
            "the broker refused records for good; re-reading the batch to isolate them",
            extra={
                "refused": len(deliveries.rejected),
                "examples": [
                    f"{r.topic} <- {r.source.topic} [{r.source.partition}] @{r.source.offset}:"
                    f" {r.reason}"
                    for r in deliveries.rejected[:3]
                ],
            },
        )
        return _Outcome.REREAD

    def _replace_producer(self, exc: ProducerLostError) -> bool:
        """The transactional producer is stuck or broken: fence it with a new one; False if
        stopped first."""
        txn = self._transactions
        assert txn is not None and self._batch_producer is not None
        self._note_error(f"abandoning the transactional producer: {exc}")
        log.error("transactional producer lost; replacing it", extra={"error": str(exc)})
        if not txn.recover(
            self._stop,
            self.config.retry_backoff_s,
            self.config.retry_backoff_max_s,
            heartbeat=self._heartbeat,
        ):
            return False
        self._producer = self._batch_producer.producer = txn.producer
        log.info("new transactional producer ready; re-reading from the committed offsets")
        return True

    def _rewind_to_committed(self, first: dict[TopicPartitionKey, int]) -> None:
        """Seek to the committed offsets: the fenced transaction may have committed or not."""
        assert self._consumer is not None
        backoff = self.config.retry_backoff_s
        while not self._stop.is_set():
            self._heartbeat()
            try:
                positions = committed_positions(
                    self._consumer, first, self.config.startup_check_timeout_s
                )
            except KafkaException as exc:
                self._note_error(f"cannot read the committed offsets: {exc}")
                self._stop.wait(backoff)
                backoff = min(backoff * 2, self.config.retry_backoff_max_s)
                continue
            self._seek(positions)
            return

    def _flush_timeout(self) -> float:
        kafka = self.config.kafka
        timeout_ms = kafka.producer.get(
            "message.timeout.ms", kafka.settings.get("message.timeout.ms", 30000)
        )
        return float(timeout_ms) / 1000.0 + 5.0

    def _delivery_failed(self, deliveries: Deliveries, first: dict[TopicPartitionKey, int]) -> None:
        for output, _ in deliveries.failed:
            owner = next(
                (
                    p.route.name
                    for p in self._processors.values()
                    if output.topic in (p.route.clean_topic, p.route.dlq_topic)
                ),
                "?",
            )
            self.hooks.on_delivery_failure(owner, output.kind)
        reasons = sorted({reason for _, reason in deliveries.failed})
        self._retry_batch(
            f"{len(deliveries.failed)} outputs failed, {deliveries.pending} unacknowledged",
            reasons,
            first,
        )

    def _retry_batch(
        self, what: str, reasons: list[str], first: dict[TopicPartitionKey, int]
    ) -> None:
        """Nothing of the batch was committed: rewind to its start so it is read again."""
        self._note_error(f"{what}: {'; '.join(reasons)[:500]}")
        log.error(
            "batch not committed; retrying the batch",
            extra={"problem": what, "reasons": reasons[:5], "attempt": self._failed_in_a_row + 1},
        )
        self._set_ready(False)
        self._seek(first)

    def _seek(self, first: dict[TopicPartitionKey, int]) -> None:
        assert self._consumer is not None
        for (topic, partition), offset in first.items():
            try:
                self._consumer.seek(TopicPartition(topic, partition, offset))
            except KafkaException as exc:
                # Partition revoked meanwhile: its new owner resumes from the last commit.
                log.warning(
                    "seek back failed",
                    extra={"topic": topic, "partition": partition, "error": self._safe(exc)},
                )

    def _commit_pending(self, reason: str) -> None:
        if not self._uncommitted or self._consumer is None:
            return
        offsets = [TopicPartition(t, p, o) for (t, p), o in sorted(self._uncommitted.items())]
        try:
            self._consumer.commit(offsets=offsets, asynchronous=False)
        except KafkaException as exc:
            log.warning(
                "commit failed; will retry with the next batch",
                extra={"reason": reason, "error": self._safe(exc)},
            )
            return
        self._uncommitted.clear()
        self.state.commits += 1
        self.hooks.on_commit(time.time())

    def _heartbeat(self) -> None:
        """The loop is alive (liveness), also while it waits for the broker to come back."""
        self.state.last_loop = time.monotonic()

    def _drop_partitions(self, keys: list[TopicPartitionKey]) -> None:
        for key in keys:
            self._uncommitted.pop(key, None)
        self._rejections.forget_partitions(keys)

    # --- helpers ----------------------------------------------------------------

    def _route_for(self, topic: str) -> RouteConfig | None:
        if topic not in self._topic_routes:
            self._topic_routes[topic] = next(
                (r for r in self.config.routes if r.matches(topic)), None
            )
        return self._topic_routes[topic]

    def _note_error(self, text: str) -> None:
        text = self._safe(text)
        self.state.last_error = text
        self._set_ready(False)
        log.warning("not ready", extra={"error": text})

    def _safe(self, value: object) -> str:
        return scrub(str(value), self._secrets)
