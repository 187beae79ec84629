"""The streaming loop: consume micro-batches, validate per route, produce, then commit.

At-least-once: an input offset is committed only after every output of its batch
(clean or DLQ) was acknowledged by the broker. When any output fails, nothing of
the batch is committed: the consumer seeks back to the batch start and the batch
is retried after a backoff (duplicates of outputs that did land are possible;
losses are not).
"""

from __future__ import annotations

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
from stream_validator.codec import decode_json
from stream_validator.config import RouteConfig, ServiceConfig, scrub
from stream_validator.dlq import EnvelopeContext, SourceRecord
from stream_validator.errors import DecodeError
from stream_validator.kafka.clients import create_consumer, create_producer, missing_topics
from stream_validator.kafka.delivery import BatchProducer, Deliveries
from stream_validator.kafka.records import source_record
from stream_validator.kafka.transactions import FatalTransactionError, Transactions
from stream_validator.pipeline import BatchPlan, OutputRecord, RouteProcessor
from stream_validator.runtime import ServiceHooks, ServiceState, TopicPartitionKey
from stream_validator.verify import Violation, ViolationKind

log = logging.getLogger("stream_validator.service")

EXIT_OK, EXIT_FATAL, EXIT_HALTED = 0, 1, 3
_RECOVERY_PROBE_INTERVAL_S = 2.0


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
        self.hooks = hooks or ServiceHooks()
        self.state = state or ServiceState()
        self._clock = clock
        self._stop = threading.Event()
        self._secrets = config.kafka.secrets()
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
        self._failed_in_a_row = 0
        self._last_probe = 0.0
        self._fatal: str | None = None
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
        self._producer = create_producer(self.config, error_cb=self._on_error)
        self._batch_producer = BatchProducer(
            self._producer,
            flush_timeout_s=self._flush_timeout(),
            replace_oversized=self._oversized_output,
            safe=self._safe,
        )
        self._consumer = create_consumer(
            self.config, stats_cb=self._on_stats, error_cb=self._on_error
        )
        if self.config.kafka.transactional_id:
            self._transactions = Transactions(self._producer, self._consumer, self._flush_timeout())
        try:
            if not self._wait_for_topics():
                return EXIT_OK
            if self._transactions is not None:
                self._transactions.init()
                log.info(
                    "exactly-once mode: one transaction per batch",
                    extra={"transactional_id": self.config.kafka.transactional_id},
                )
            self._subscribe()
            return self._loop()
        except FatalTransactionError as exc:
            log.error("fatal transaction error; stopping", extra={"error": self._safe(exc)})
            return EXIT_FATAL
        finally:
            self._close()

    def _set_ready(self, ready: bool) -> None:
        if self.state.ready != ready:
            log.info("readiness changed", extra={"ready": ready})
        self.state.ready = ready
        self.hooks.on_ready(ready)

    def _wait_for_topics(self) -> bool:
        """Block (not ready) until the broker answers and every output topic exists."""
        assert self._producer is not None
        outputs = {t for r in self.config.routes for t in (r.clean_topic, r.dlq_topic)}
        sources = {t for r in self.config.routes for t in r.source_topics}
        backoff = self.config.retry_backoff_s
        while not self._stop.is_set():
            self.state.last_loop = time.monotonic()
            try:
                missing = missing_topics(
                    self._producer, outputs | sources, self.config.startup_check_timeout_s
                )
            except KafkaException as exc:
                self._note_error(f"broker not reachable yet: {exc}")
            else:
                missing_outputs = sorted(set(missing) & outputs)
                if set(missing) & sources:
                    log.warning(
                        "source topics do not exist yet; consuming them once they do",
                        extra={"topics": sorted(set(missing) & sources)},
                    )
                if not missing_outputs:
                    return True
                self._note_error(f"output topics missing: {', '.join(missing_outputs)}")
            self._stop.wait(backoff)
            backoff = min(backoff * 2, self.config.retry_backoff_max_s)
        return False

    def _subscribe(self) -> None:
        assert self._consumer is not None
        topics: list[str] = []
        for route in self.config.routes:
            topics.extend(route.subscription())  # full-match, the rule routing uses
        self._consumer.subscribe(
            sorted(set(topics)),
            on_assign=self._on_assign,
            on_revoke=self._on_revoke,
            on_lost=self._on_lost,
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
            if self._fatal is not None:
                log.error("fatal Kafka error; stopping", extra={"error": self._fatal})
                return EXIT_FATAL
            try:
                messages = consumer.consume(
                    num_messages=self.config.batch_max_records,
                    timeout=self.config.batch_timeout_s,
                )
            except KafkaException as exc:  # only fatal consumer errors are raised here
                log.error("consumer failed; stopping", extra={"error": self._safe(exc)})
                return EXIT_FATAL
            if not messages:
                if not self.state.ready and self._failed_in_a_row == 0:
                    self._probe_recovery()
                continue
            if not self._process(messages):
                self._failed_in_a_row += 1
                self.state.failed_batches += 1
                halt_after = self.config.halt_after_failed_batches
                if halt_after and self._failed_in_a_row >= halt_after:
                    log.error(
                        "halting: batches keep failing to deliver; nothing was committed"
                        " past the last delivered batch",
                        extra={"failed_batches_in_a_row": self._failed_in_a_row},
                    )
                    return EXIT_HALTED
                backoff = min(
                    self.config.retry_backoff_s * 2 ** (self._failed_in_a_row - 1),
                    self.config.retry_backoff_max_s,
                )
                self._stop.wait(backoff)
            else:
                self._failed_in_a_row = 0
        return EXIT_OK

    def _probe_recovery(self) -> None:
        """Idle and not ready after a broker error: become ready again once it answers."""
        now = time.monotonic()
        if now - self._last_probe < _RECOVERY_PROBE_INTERVAL_S:
            return
        self._last_probe = now
        assert self._producer is not None
        outputs = {t for r in self.config.routes for t in (r.clean_topic, r.dlq_topic)}
        try:
            missing = missing_topics(self._producer, outputs, self.config.startup_check_timeout_s)
        except KafkaException as exc:
            self.state.last_error = self._safe(f"broker not reachable: {exc}")
            return
        if missing:
            self._note_error(f"output topics missing: {', '.join(missing)}")
        else:
            self._set_ready(True)

    def _close(self) -> None:
        if self._transactions is not None:
            try:
                self._transactions.abort()  # only open after an error mid-batch
            except FatalTransactionError as exc:
                log.warning("abort at shutdown failed", extra={"error": self._safe(exc)})
        if self._consumer is not None:
            self._commit_pending("shutdown")
            try:
                self._consumer.close()  # leaves the group
            except (KafkaException, RuntimeError) as exc:
                log.warning("consumer close failed", extra={"error": self._safe(exc)})
            self._consumer = None
        if self._producer is not None:
            left = self._producer.flush(5.0)
            if left:
                log.error(
                    "producer closed with undelivered records (not committed)",
                    extra={"undelivered": left},
                )
            self._producer = None
        self._set_ready(False)

    # --- one batch ------------------------------------------------------------

    def _process(self, messages: list[Message]) -> bool:
        """Validate, produce and commit one consumed batch; False when delivery failed."""
        started = time.perf_counter()
        first: dict[TopicPartitionKey, int] = {}
        after: dict[TopicPartitionKey, int] = {}
        by_route: dict[str, list[SourceRecord]] = {}
        for message in messages:
            error = message.error()
            if error is not None:
                self._on_message_error(error)
                continue
            record = source_record(message)
            tp = (record.topic, record.partition)
            first.setdefault(tp, record.offset)
            after[tp] = record.offset + 1
            route = self._route_for(record.topic)
            if route is None:
                # Cannot happen with a consistent subscription; refuse to drop silently.
                self._fatal = f"record from topic {record.topic!r} matches no route"
                self._seek(first)
                return False
            by_route.setdefault(route.name, []).append(record)
        if not by_route:
            return True  # only consumer errors (already logged): nothing to produce or commit
        validated_at = self._clock().isoformat()
        plans = [
            self._processors[name].plan(records, validated_at=validated_at)
            for name, records in by_route.items()
        ]
        assert self._batch_producer is not None
        txn = self._transactions
        if txn is not None:
            txn.begin()
        # In a transaction commit_transaction() flushes; outside one, produce() does.
        deliveries = self._batch_producer.produce(plans, flush=txn is None)
        duration = time.perf_counter() - started
        for plan in plans:
            event = plan.event() | {"duration_ms": round(duration * 1000, 3)}
            log.info("batch", extra={k: v for k, v in event.items() if k != "event"})
            self.state.remember(event)
            self.hooks.on_batch(plan, duration)
            truncated = sum(1 for out in plan.outputs if out.truncated)
            for _ in range(truncated):
                self.hooks.on_truncated(plan.route)
        if txn is not None:
            if deliveries.failed:
                txn.abort()
            else:
                aborted = txn.commit(after)
                if aborted is not None:
                    self._retry_batch("transaction aborted", [aborted], first)
                    return False
        if deliveries.failed or deliveries.pending:
            self._delivery_failed(deliveries, first)
            return False
        for route_name, latencies in deliveries.latencies.items():
            self.hooks.on_clean_latencies(route_name, latencies)
        self.state.batches += 1
        self.state.records += sum(len(r) for r in by_route.values())
        self.state.clean += sum(p.clean_count for p in plans)
        self.state.dlq += sum(p.dlq_count for p in plans)
        if txn is None:
            self._uncommitted.update(after)
            self._commit_pending("batch")
        else:
            self.state.commits += 1
            self.hooks.on_commit(time.time())
        if not self.state.ready:
            self._set_ready(True)
        return True

    def _flush_timeout(self) -> float:
        kafka = self.config.kafka
        timeout_ms = kafka.producer.get(
            "message.timeout.ms", kafka.settings.get("message.timeout.ms", 30000)
        )
        return float(timeout_ms) / 1000.0 + 5.0

    def _oversized_output(self, plan: BatchPlan, output: OutputRecord) -> OutputRecord:
        processor = self._processors[plan.route]
        report = plan.report
        violation = Violation(
            None,
            ViolationKind.OVERSIZED,
            "record (value, key and headers) exceeds"
            f" max_message_bytes {self.config.max_message_bytes}",
        )
        context = EnvelopeContext(
            plan.route,
            report.contract_name,
            report.contract_version,
            self.config.kafka.group_id,
            __version__,
            self._clock().isoformat(),
        )
        return processor.dlq_output(output.source, [violation], context)

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

    # --- callbacks (run inside consume()) ----------------------------------------

    def _on_assign(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        keys = [(tp.topic, tp.partition) for tp in partitions]
        log.info("partitions assigned", extra={"partitions": keys})
        self.hooks.on_rebalance("assigned", keys)

    def _on_revoke(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        keys = [(tp.topic, tp.partition) for tp in partitions]
        self._commit_pending("revoke")  # synchronous, before the partitions move on
        for key in keys:
            self._uncommitted.pop(key, None)
        log.info("partitions revoked", extra={"partitions": keys})
        self.hooks.on_rebalance("revoked", keys)

    def _on_lost(self, _consumer: Consumer, partitions: list[TopicPartition]) -> None:
        keys = [(tp.topic, tp.partition) for tp in partitions]
        for key in keys:  # never commit for lost partitions: another member owns them
            self._uncommitted.pop(key, None)
        log.warning("partitions lost", extra={"partitions": keys})
        self.hooks.on_rebalance("lost", keys)

    def _on_stats(self, raw: str) -> None:
        try:
            stats = decode_json(raw)
        except DecodeError:
            return
        if isinstance(stats, dict):
            self.hooks.on_stats(stats)

    def _on_error(self, error: KafkaError) -> None:
        text = self._safe(f"{error.name()}: {error.str()}")
        if error.fatal():
            self._fatal = text
        if error.code() in (
            KafkaError._ALL_BROKERS_DOWN,
            KafkaError._TRANSPORT,
            KafkaError._RESOLVE,
        ):
            self._set_ready(False)
        log.warning("kafka client error", extra={"error": text})
        self.state.last_error = text

    def _on_message_error(self, error: KafkaError) -> None:
        text = self._safe(f"{error.name()}: {error.str()}")
        if error.fatal():
            self._fatal = text
        elif error.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
            log.warning("source topic not available yet", extra={"error": text})
        else:
            log.warning("consumer error", extra={"error": text})

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
