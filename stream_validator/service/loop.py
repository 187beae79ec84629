"""The streaming loop: consume -> plan (pure) -> committer.submit -> outcomes -> report.

The committer (``delivery/atleastonce.py``, or ``delivery/transactional.py``) owns produce
-> acknowledgement -> offset commit. It pipelines: ``submit`` returns before the batch's
outputs are acknowledged, with the ``BatchOutcome`` of every batch that finished meanwhile
(``poll`` when nothing was consumed); this loop only reads them: report a delivered batch
(``report/reporter.py``, counted from acknowledgements), rewind and back off after a failed
one, re-read at once after refusals, halt when a record cannot go anywhere. Each route's
DLQ circuit breaker (``breaker/routes.py``) is fed every delivered batch, polled every
turn, and pauses or resumes the route's partitions. Batches are taken by
``consume/batches.py``. Changed contract files are swapped in at the top of a turn,
between batches (``reload/reloader.py``). The Kafka clients come from a
``ports.ClientFactory``: librdkafka in production, the in-memory fake broker in unit tests.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from itertools import compress, count, pairwise
from operator import itemgetter, ne, or_

from stream_validator._native import partition_runs
from stream_validator.config.settings import RouteConfig, ServiceConfig, scrub
from stream_validator.errors import (
    FatalTransactionError,
    KafkaClientError,
    RegistryUnavailableError,
    ServiceExit,
)
from stream_validator.kafka.clients import ServiceClients
from stream_validator.kafka.ports import ClientFactory, Consumed, Consumer
from stream_validator.records import SourceRecord, TopicPartitionKey
from stream_validator.registry.decoder import RecordDecoder, route_decoders
from stream_validator.service.breaker.routes import RouteBreakers
from stream_validator.service.consume.batches import Batches
from stream_validator.service.consume.callbacks import ClientCallbacks
from stream_validator.service.consume.readiness import Readiness
from stream_validator.service.consume.registrywait import RegistryWait
from stream_validator.service.delivery.build import build_committer
from stream_validator.service.delivery.committer import BatchOutcome, BatchStatus, Committer
from stream_validator.service.delivery.offsets import BatchOffsets
from stream_validator.service.plan.planner import BatchPlan, RouteProcessor
from stream_validator.service.reload.reloader import ContractReloader
from stream_validator.service.report.hooks import ServiceHooks
from stream_validator.service.report.reporter import BatchReporter
from stream_validator.service.report.state import ServiceState
from stream_validator.service.shadow.routes import shadow_routes
from stream_validator.state.native import native_wanted

log = logging.getLogger("stream_validator.service")

# Re-reads to isolate refused records converge in two rounds per record; more in a row
# means something else is wrong, so they count as failed batches from then on.
_REREADS_BEFORE_FAILING = 5


class StreamService:
    """Runs the consume -> validate -> produce -> commit loop until stopped."""

    def __init__(
        self,
        config: ServiceConfig,
        *,
        hooks: ServiceHooks | None = None,
        state: ServiceState | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        clients: ClientFactory | None = None,
        monotonic: Callable[[], float] = time.monotonic,
        decoders: Mapping[str, RecordDecoder] | None = None,
    ) -> None:
        self.config = config
        self.state = state or ServiceState()
        self._secrets = config.secrets()
        self._reporter = BatchReporter(
            hooks or ServiceHooks(),
            self.state,
            self._safe,
            routes=[route.name for route in config.routes],
            summary_interval_s=config.log_summary_interval_s,
            clock=monotonic,
        )
        self.hooks = self._reporter.hooks
        self._clients = clients or ServiceClients(config)
        self._callbacks = ClientCallbacks(
            self.state,
            self.hooks,
            safe=self._safe,
            set_ready=self._set_ready,
            commit_pending=self._commit_pending,
            drop_partitions=self._drop_partitions,
            rebalanced=self._rebalanced,
        )
        self._clock = clock
        self._stop = threading.Event()
        self._processors = {
            route.name: RouteProcessor(
                route,
                consumer_group=config.kafka.group_id,
                max_message_bytes=config.max_message_bytes,
                null_window=config.batch_max_records,
                connect_headers=config.dlq_connect_headers,
                # SV_NATIVE=0: the Python reference instead of the native core
                native_state=native_wanted(os.environ),
            )
            for route in config.routes
        }
        self._topic_routes: dict[str, RouteConfig | None] = {}
        #: Routes with a registry format: their values decoded before planning.
        self._registry = RegistryWait(
            decoders
            if decoders is not None
            else route_decoders(
                config.routes,
                config.schema_registry,
                # Avro read by the native core (SV_NATIVE=0: by fastavro), against the
                # route's contract of the moment (a reload swaps the processor).
                native=native_wanted(os.environ),
                contracts=lambda name: self._processors[name].route.contract,
            ),
            config,
            self.hooks,
            note_error=self._note_error,
            safe=self._safe,
            stop=self._stop,
        )
        #: Polls the contract files and swaps changed ones in between batches (``reload/``).
        self._reloader = ContractReloader(
            self._processors,
            interval_s=config.contract_reload_interval_s,
            hooks=self.hooks,
            state=self.state,
            clock=clock,
            monotonic=monotonic,
        )
        #: The routes' shadow contracts (``shadow/``); None, at no cost, when none has one.
        self._shadows = shadow_routes(
            config,
            self._processors,
            hooks=self.hooks,
            state=self.state,
            clock=clock,
            monotonic=monotonic,
        )
        #: The routes' DLQ circuit breakers (``breaker/routes.py``), on the monotonic clock.
        self.breakers = RouteBreakers(
            config.routes,
            clock=monotonic,
            on_transition=self.hooks.on_breaker,
            status=self.state.breakers,
            route_of=self._route_name,
            safe=self._safe,
        )
        self._failed_in_a_row = 0
        self._rereads_in_a_row = 0
        self._readiness = Readiness(
            config,
            self.state,
            note_error=self._note_error,
            set_ready=self._set_ready,
            safe=self._safe,
            on_consumer_error=self._callbacks.on_message_error,
        )
        self._batches = Batches(config)
        self._consumer: Consumer | None = None
        self._committer: Committer | None = None

    # --- lifecycle ------------------------------------------------------------

    def stop(self) -> None:
        """Ask the loop to finish the in-flight batch and exit (signal-safe)."""
        self._stop.set()

    def request_reload(self) -> None:
        """Look at every contract file at the loop's next turn (SIGHUP; signal-safe)."""
        self._reloader.request()
        if self._shadows is not None:
            self._shadows.request()

    @property
    def stopping(self) -> bool:
        """True once stop() was called."""
        return self._stop.is_set()

    def run(self) -> int:
        """Run until stopped; return the process exit code."""
        consumer = self._consumer = self._clients.consumer(
            on_stats=self._callbacks.on_stats, on_error=self._callbacks.on_error
        )
        committer = self._committer = build_committer(
            self.config,
            self._clients,
            consumer,
            self._processors,
            on_error=self._callbacks.on_error,
            stop=self._stop,
            on_commit=self._committed,
            on_transaction_commit=lambda seconds: self.hooks.on_transaction_commit(seconds),
            heartbeat=self._heartbeat,
            note_error=self._note_error,
            safe=self._safe,
            clock=self._clock,
        )
        try:
            if not self._readiness.wait_for_topics(consumer, committer.producer, self._stop):
                return ServiceExit.OK
            if not committer.start():
                return ServiceExit.OK
            if self.config.kafka.transactional_id:
                log.info(
                    "exactly-once mode: one transaction per commit interval",
                    extra={
                        "transactional_id": self.config.kafka.transactional_id,
                        "commit_interval_s": self.config.batch_commit_interval_s,
                    },
                )
            self._subscribe(consumer)
            return self._loop(consumer, committer)
        except FatalTransactionError as exc:
            log.error("fatal transaction error; stopping", extra={"error": self._safe(exc)})
            return ServiceExit.FATAL
        finally:
            self._close(consumer, committer)

    def _subscribe(self, consumer: Consumer) -> None:
        topics = sorted({t for route in self.config.routes for t in route.subscription()})
        consumer.subscribe(
            topics,  # full-match, the rule routing uses
            on_assign=self._callbacks.on_assign,
            on_revoke=self._callbacks.on_revoke,
            on_lost=self._callbacks.on_lost,
        )
        self._set_ready(True)
        log.info("subscribed", extra={"topics": topics, "group": self.config.kafka.group_id})

    def _loop(self, consumer: Consumer, committer: Committer) -> int:
        while not self._stop.is_set():
            self._heartbeat()
            self._reporter.summarise()
            self.breakers.poll(consumer)
            if self._reloader.poll():  # between batches: the next one is planned under it
                self.config = replace(self.config, routes=self._reloader.routes())
                self._topic_routes.clear()
            if self._shadows is not None:
                self._shadows.poll()
            if self._callbacks.fatal is not None:
                log.error("fatal Kafka error; stopping", extra={"error": self._callbacks.fatal})
                return ServiceExit.FATAL
            timeout = self.config.batch_timeout_s
            if committer.busy:  # acknowledgements and commits are served between consumes
                timeout = min(timeout, committer.due_in_s)
            try:
                consumed = self._batches.take(consumer, self._committer, timeout)
            except KafkaClientError as exc:  # only fatal consumer errors are raised here
                log.error("consumer failed; stopping", extra={"error": self._safe(exc)})
                return ServiceExit.FATAL
            for error in consumed.errors:
                self._callbacks.on_message_error(error.info)
            consumed = self.breakers.admit(consumer, consumed)
            if consumed.records:
                try:
                    planned = self._plan(consumed)
                except RegistryUnavailableError as exc:  # nothing judged: read again later
                    self._registry.set_back(consumed, exc, lambda at: self._seek(consumer, at))
                    continue
                self._registry.answered()
                if planned is None:
                    return ServiceExit.FATAL
                outcomes = committer.submit(*planned)
            else:
                outcomes = committer.poll()
                if not outcomes and not self.state.ready and self._failed_in_a_row == 0:
                    self._readiness.probe(committer.producer)
            for outcome in outcomes:
                code = self._settle(consumer, outcome)
                if code is not None:
                    return code
        return ServiceExit.OK

    def _close(self, consumer: Consumer, committer: Committer) -> None:
        # Wait for the outputs in flight, commit what was delivered, report it.
        for outcome in committer.finish():
            if outcome.status is BatchStatus.DELIVERED:
                self._reporter.report(outcome, outcome.duration_s)
            else:
                log.warning(
                    "at shutdown, batches were not delivered (not committed)",
                    extra={"problem": outcome.reason},
                )
        self._reporter.summarise(final=True)
        self._registry.close()
        try:
            consumer.close()  # leaves the group
        except (KafkaClientError, RuntimeError) as exc:
            log.warning("consumer close failed", extra={"error": self._safe(exc)})
        try:
            left = committer.producer.flush(5.0)
        except KafkaClientError as exc:  # a fatal producer error raises here
            log.warning("producer flush at shutdown failed", extra={"error": self._safe(exc)})
            left = 0
        if left:
            log.error(
                "producer closed with undelivered records (not committed)",
                extra={"undelivered": left},
            )
        self._set_ready(False)

    # --- one batch ------------------------------------------------------------

    def _plan(self, consumed: Consumed) -> tuple[list[BatchPlan], BatchOffsets] | None:
        """Group the records by route and plan each route batch (pure); None: no route."""
        first: dict[TopicPartitionKey, int] = {}
        after: dict[TopicPartitionKey, int] = {}
        by_route: dict[str, list[SourceRecord]] = {}
        records = consumed.records
        # Records come in runs of one partition: the route is looked up, and the offsets
        # noted, once per run (the runs found in C: no bytecode per record).
        for start, end in _runs(records):
            head = records[start]
            key = (head.topic, head.partition)
            first.setdefault(key, head.offset)
            route = self._route_for(head.topic)
            if route is None:
                # Cannot happen with a consistent subscription; refuse to drop silently.
                self._note_error(f"record from topic {head.topic!r} matches no route")
                log.error("fatal: a record matches no route; stopping")
                return None
            after[key] = records[end - 1].offset + 1
            by_route.setdefault(route.name, []).extend(records[start:end])
        validated_at = self._clock().isoformat()
        plans = [
            self._processors[name].plan(
                records,
                validated_at=validated_at,
                unreadable_headers=consumed.unreadable_headers,
                decoded_values=self._registry.decode(name, records),
            )
            for name, records in by_route.items()
        ]
        if self._shadows is not None:  # judged by the shadow contracts too, routing nothing
            plans = self._shadows.compare(by_route, plans, validated_at=validated_at)
        return plans, BatchOffsets(first, after)

    def _settle(self, consumer: Consumer, outcome: BatchOutcome) -> int | None:
        """Act on the committer's outcome; an exit code when the loop must stop."""
        self._seek(consumer, outcome.rewind)
        if outcome.status is BatchStatus.DELIVERED:
            self.breakers.record(consumer, outcome)  # first: the event tells a breaker change
            self._reporter.report(outcome, outcome.duration_s)
            self._failed_in_a_row = self._rereads_in_a_row = 0
            if not self.state.ready:
                self._set_ready(True)
            return None
        if outcome.status is BatchStatus.HALTED:
            self._note_error(outcome.reason or "halted")
            log.error("halting: a record cannot be delivered", extra={"error": outcome.reason})
            return ServiceExit.HALTED
        if outcome.status is BatchStatus.REREAD:
            self._rereads_in_a_row += 1
            if self._rereads_in_a_row <= _REREADS_BEFORE_FAILING:
                return None
        return self._failed(outcome)

    def _failed(self, outcome: BatchOutcome) -> int | None:
        """Nothing of the batch was committed: back off, then it is read again."""
        for route, kind, _ in outcome.failed:
            self.hooks.on_delivery_failure(route, kind)
        self._failed_in_a_row += 1
        self.state.failed_batches += 1
        self._note_error(outcome.reason or "batch not delivered")
        log.error(
            "batch not committed; retrying the batch",
            extra={"problem": outcome.reason, "attempt": self._failed_in_a_row},
        )
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
        return None

    def _seek(self, consumer: Consumer, positions: Mapping[TopicPartitionKey, int]) -> None:
        if positions:
            # The records from ``offset`` on come again: state built from them must go, or
            # they would look like sequence and event-time regressions.
            self._drop_state(list(positions))
        for key, offset in positions.items():
            try:
                consumer.seek(key, offset)
            except KafkaClientError as exc:
                # Partition revoked meanwhile: its new owner resumes from the last commit.
                log.warning(
                    "seek back failed",
                    extra={"topic": key[0], "partition": key[1], "error": self._safe(exc)},
                )

    # --- helpers ----------------------------------------------------------------

    def _commit_pending(self, reason: str) -> None:
        if self._committer is not None:
            self._committer.commit_pending(reason)

    def _drop_partitions(self, keys: list[TopicPartitionKey]) -> None:
        self._drop_state(keys)
        if self._committer is not None:
            self._committer.drop(keys)

    def _drop_state(self, keys: list[TopicPartitionKey]) -> None:
        for processor in self._processors.values():
            processor.drop_state(keys)

    def _rebalanced(self, event: str, keys: list[TopicPartitionKey]) -> None:
        self.breakers.rebalanced(event, keys)

    def _committed(self) -> None:
        self.state.commits += 1
        self.hooks.on_commit(time.time())

    def _heartbeat(self) -> None:
        """The loop is alive (liveness), also while it waits for the broker to come back."""
        self.state.last_loop = time.monotonic()

    def _set_ready(self, ready: bool) -> None:
        if self.state.ready != ready:
            log.info("readiness changed", extra={"ready": ready})
        self.state.ready = ready
        self.hooks.on_ready(ready)

    def _route_for(self, topic: str) -> RouteConfig | None:
        if topic not in self._topic_routes:
            self._topic_routes[topic] = next(
                (r for r in self.config.routes if r.matches(topic)), None
            )
        return self._topic_routes[topic]

    def _route_name(self, topic: str) -> str | None:
        route = self._route_for(topic)
        return route.name if route is not None else None

    def _note_error(self, text: str) -> None:
        text = self._safe(text)
        self.state.last_error = text
        self._set_ready(False)
        log.warning("not ready", extra={"error": text})

    def _safe(self, value: object) -> str:
        return scrub(str(value), self._secrets)


_RUN_AT = (SourceRecord._fields.index("topic"), SourceRecord._fields.index("partition"))
_topic, _partition = (itemgetter(at) for at in _RUN_AT)


def _runs(records: Sequence[SourceRecord]) -> list[tuple[int, int]]:
    """[start, end) of each run of consecutive records of one partition, in order (a list:
    natively, ``_native.partition_runs``, one pass with no object per record)."""
    if type(records) is list:
        return partition_runs(records, _RUN_AT)
    if not records:
        return []
    partitions = list(map(_partition, records))
    topics = list(map(_topic, records))
    changed = map(or_, map(ne, partitions[1:], partitions), map(ne, topics[1:], topics))
    starts = [0, *(i + 1 for i in compress(count(), changed)), len(records)]
    return list(pairwise(starts))
