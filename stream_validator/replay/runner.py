"""The Kafka side of DLQ replay: read a DLQ range, produce the outputs, commit, atomically.

Each chunk of DLQ records is one Kafka transaction: the records sent to the target, the
envelopes requeued to the DLQ and the replay group's DLQ offsets (with the selection as
commit metadata) become visible together or not at all. The design and its guarantees
are described in ``stream_validator.cli.replay``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

from confluent_kafka import (
    Consumer,
    ConsumerGroupTopicPartitions,
    IsolationLevel,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin._listoffsets import OffsetSpec  # not re-exported for mypy

from stream_validator import __version__
from stream_validator.config.settings import ServiceConfig, scrub
from stream_validator.errors import (
    ConfigError,
    ReadStalledError,
    ReplayKafkaError,
    ReplaySetupError,
)
from stream_validator.kafka.clients import consumer_settings, producer_settings
from stream_validator.kafka.reader import RangeReader
from stream_validator.replay.planner import (
    Coverage,
    Decision,
    OutputContext,
    ReplayOutput,
    ReplayPlanner,
    Target,
    UnreplayableReason,
    as_unreplayable,
    build_output,
)
from stream_validator.replay.report import ReplaySummary
from stream_validator.replay.selection import Selection
from stream_validator.verify import DataSchemaContractVerifier

# librdkafka logs only critical messages: connection retries and coordinator loading are
# noise for a command line tool; real failures surface as exceptions in the summary.
_LOG_LEVEL = "2"


_Client = TypeVar("_Client")
ProgressCallback = Callable[[int, int, ReplaySummary], None]
"""Called after every chunk with (offsets read, offsets to read, summary so far)."""


@dataclass(frozen=True, slots=True)
class ReplayJob:
    """Everything one replay run needs, resolved from the command line and the config."""

    config: ServiceConfig
    dlq_topic: str
    selection: Selection
    verifier: DataSchemaContractVerifier
    target: Target
    group_base: str
    max_replays: int = 3
    requeue: bool = True
    dry_run: bool = False
    batch_size: int = 500
    timeout_s: float = 30.0
    max_examples: int = 3

    @property
    def group(self) -> str:
        """The replay's consumer group: the base name plus the selection's digest."""
        return f"{self.group_base}.{self.selection.digest()}"


class DlqReplayer:
    """Runs one replay job against the broker and returns its summary."""

    def __init__(
        self,
        job: ReplayJob,
        *,
        progress: ProgressCallback | None = None,
        stop: threading.Event | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        producer_factory: Callable[[dict[str, Any]], Producer] = Producer,
    ) -> None:
        self.job = job
        self._progress = progress
        self._stop = stop or threading.Event()
        self._clock = clock
        self._producer_factory = producer_factory
        self._secrets = job.config.kafka.secrets()
        self._topics_seen: set[str] = set()
        self._admin: AdminClient | None = None
        contract = job.verifier.contract
        self.summary = ReplaySummary(
            job.dlq_topic,
            job.target.label,
            job.group,
            contract.name,
            contract.version,
            job.dry_run,
            max_examples=job.max_examples,
        )

    def run(self) -> ReplaySummary:
        """Replay; Kafka failures end up in ``summary.error``.

        Raises ReplaySetupError (a missing topic) and ConfigError (refused settings).
        """
        job = self.job
        admin = self._admin = self._client(AdminClient, self._admin_settings())
        producer: Producer | None = None
        try:
            partitions = self._check_topics(admin)
            if not job.dry_run:
                # Before reading any offsets: fences an older run of the same target and
                # waits until its open transaction is aborted or committed.
                producer = self._client(self._producer_factory, self._producer_settings())
                producer.init_transactions(job.timeout_s)
            coverage, own = self._coverage(admin, partitions)
            consumer = self._client(Consumer, self._consumer_settings())
            try:
                ranges = self._ranges(admin, consumer, partitions, own)
                self._replay(consumer, producer, ranges, coverage)
            finally:
                consumer.close()
        except (KafkaException, ReplayKafkaError, ReadStalledError) as exc:
            self.summary.error = self._safe(_describe(exc))
        return self.summary

    # --- setup ------------------------------------------------------------------

    def _client(
        self, factory: Callable[[dict[str, Any]], _Client], settings: dict[str, Any]
    ) -> _Client:
        """A librdkafka client; refused settings become ConfigError (exit code 2)."""
        try:
            return factory(settings)
        except (KafkaException, ValueError, TypeError) as exc:
            raise ConfigError(self._safe(f"invalid Kafka client settings: {exc}")) from None

    def _admin_settings(self) -> dict[str, Any]:
        kafka = self.job.config.kafka
        return {
            "bootstrap.servers": kafka.bootstrap_servers,
            **kafka.settings,
            "log_level": _LOG_LEVEL,
        }

    def _producer_settings(self) -> dict[str, Any]:
        settings = producer_settings(self.job.config)
        # One transactional id per DLQ + target: two replays to one target never overlap.
        settings["transactional.id"] = self.job.group_base
        settings["log_level"] = _LOG_LEVEL
        return settings

    def _consumer_settings(self) -> dict[str, Any]:
        settings = consumer_settings(self.job.config)
        settings.pop("statistics.interval.ms", None)
        settings.update(
            {
                "group.id": self.job.group,
                "auto.offset.reset": "earliest",  # a committed offset lost to retention
                "enable.partition.eof": True,
                "fetch.wait.max.ms": 100,
                "log_level": _LOG_LEVEL,
            }
        )
        return settings

    def _check_topics(self, admin: AdminClient) -> list[int]:
        job = self.job
        metadata = admin.list_topics(timeout=job.timeout_s)
        wanted = [job.dlq_topic] + ([job.target.topic] if job.target.topic else [])
        for name in wanted:
            topic = metadata.topics.get(name)
            if topic is None or topic.error is not None:
                raise ReplaySetupError(f"topic {name!r} does not exist")
            self._topics_seen.add(name)
        return sorted(metadata.topics[job.dlq_topic].partitions)

    def _coverage(
        self, admin: AdminClient, partitions: list[int]
    ) -> tuple[list[Coverage], dict[int, int]]:
        """Every replay group of this DLQ + target: what it settled, and our own offsets."""
        job = self.job
        listing = admin.list_consumer_groups(request_timeout=job.timeout_s).result(job.timeout_s)
        prefix = job.group_base + "."
        names = sorted(g.group_id for g in listing.valid if g.group_id.startswith(prefix))
        coverage: list[Coverage] = []
        own: dict[int, int] = {}
        for name in names:
            request = ConsumerGroupTopicPartitions(
                name, [TopicPartition(job.dlq_topic, p) for p in partitions]
            )
            futures = admin.list_consumer_group_offsets(
                [request], require_stable=True, request_timeout=job.timeout_s
            )
            answer = futures[name].result(job.timeout_s)
            committed = {
                tp.partition: tp.offset for tp in answer.topic_partitions if tp.offset >= 0
            }
            metadata = next((tp.metadata for tp in answer.topic_partitions if tp.metadata), None)
            if name == job.group:
                own = committed
            if committed and metadata:
                # Metadata not written by a replay (e.g. a reused --group) covers nothing.
                with contextlib.suppress(ValueError):
                    coverage.append(Coverage(name, Selection.decode(metadata), committed))
        return coverage, own

    def _ranges(
        self, admin: AdminClient, consumer: Consumer, partitions: list[int], own: dict[int, int]
    ) -> dict[int, tuple[int, int]]:
        """Per partition [start, end): end is the last stable offset observed now."""
        job, selection = self.job, self.job.selection
        specs = {TopicPartition(job.dlq_topic, p): _latest() for p in partitions}
        futures = admin.list_offsets(
            specs, isolation_level=IsolationLevel.READ_COMMITTED, request_timeout=job.timeout_s
        )
        ends = {tp.partition: f.result(job.timeout_s).offset for tp, f in futures.items()}
        starts = {p: max(own.get(p, 0), selection.from_offset.get(p) or 0) for p in partitions}
        if selection.from_ms is not None:
            wanted = [TopicPartition(job.dlq_topic, p, selection.from_ms) for p in partitions]
            for tp in consumer.offsets_for_times(wanted, timeout=job.timeout_s):
                first = tp.offset if tp.offset >= 0 else ends[tp.partition]
                starts[tp.partition] = max(starts[tp.partition], first)
        ranges = {}
        for p in partitions:
            until = selection.until_offset.get(p)
            ranges[p] = (starts[p], ends[p] if until is None else min(ends[p], until))
        return ranges

    # --- the loop -----------------------------------------------------------------

    def _replay(
        self,
        consumer: Consumer,
        producer: Producer | None,
        ranges: dict[int, tuple[int, int]],
        coverage: list[Coverage],
    ) -> None:
        job = self.job
        planner = ReplayPlanner(
            job.selection,
            job.verifier,
            coverage=coverage,
            max_replays=job.max_replays,
            requeue=job.requeue,
            target=job.target,
        )
        context = OutputContext(
            target=job.target,
            dlq_topic=job.dlq_topic,
            group=job.group,
            replay_time=self._clock().isoformat(),
            contract_name=job.verifier.contract.name,
            contract_version=job.verifier.contract.version,
            validator_version=__version__,
            max_message_bytes=job.config.max_message_bytes,
        )
        reader = RangeReader(consumer, job.dlq_topic, ranges, job.timeout_s)
        while reader.pending and not self._stop.is_set():
            records, touched = reader.read_chunk(job.batch_size)
            decisions = planner.decide(records)
            pairs = [(d, build_output(d, context)) for d in decisions]
            offsets = {p: planner.commit_offset(p, reader.position[p]) for p in touched}
            if producer is not None:
                pairs = self._commit_chunk(producer, consumer, pairs, offsets)
                self.summary.committed.update(offsets)
            for decision, output in pairs:
                self.summary.add(decision, output)
            if self._progress is not None:
                self._progress(reader.done, reader.total, self.summary)
        self.summary.interrupted = self._stop.is_set() and bool(reader.pending)

    def _commit_chunk(
        self,
        producer: Producer,
        consumer: Consumer,
        pairs: list[tuple[Decision, ReplayOutput | None]],
        offsets: dict[int, int],
    ) -> list[tuple[Decision, ReplayOutput | None]]:
        """Produce a chunk's outputs and commit its offsets in one transaction."""
        job = self.job
        metadata = job.selection.encode()
        producer.begin_transaction()
        try:
            sent = [self._produce(producer, d, o) for d, o in pairs]
            positions = [
                TopicPartition(job.dlq_topic, p, o, metadata) for p, o in sorted(offsets.items())
            ]
            if positions:
                producer.send_offsets_to_transaction(
                    positions, consumer.consumer_group_metadata(), job.timeout_s
                )
            producer.commit_transaction(job.timeout_s)  # flushes; fails if any delivery failed
        except KafkaException:
            # Fenced or fatal: the next run's init_transactions aborts it instead.
            with contextlib.suppress(KafkaException):
                producer.abort_transaction(job.timeout_s)
            raise
        return sent

    def _produce(
        self, producer: Producer, decision: Decision, output: ReplayOutput | None
    ) -> tuple[Decision, ReplayOutput | None]:
        if output is None:
            return decision, None
        if output.topic not in self._topics_seen:
            # The admin client's metadata requests never auto-create a topic.
            assert self._admin is not None
            meta = self._admin.list_topics(output.topic, timeout=self.job.timeout_s).topics
            found = meta.get(output.topic)
            if found is None or found.error is not None:
                raise ReplayKafkaError(f"target topic {output.topic!r} does not exist")
            self._topics_seen.add(output.topic)
        kwargs: dict[str, Any] = {
            "key": output.key,
            "value": output.value,
            "headers": output.headers or None,
        }
        if output.timestamp_ms is not None:
            kwargs["timestamp"] = output.timestamp_ms
        while True:
            try:
                producer.produce(output.topic, **kwargs)
                return decision, output
            except BufferError:
                producer.poll(0.1)  # local queue full: let deliveries drain
            except KafkaException as exc:
                error = exc.args[0] if exc.args else None
                if isinstance(error, KafkaError) and error.code() == KafkaError.MSG_SIZE_TOO_LARGE:
                    detail = f"record exceeds max_message_bytes {self.job.config.max_message_bytes}"
                    return as_unreplayable(decision, UnreplayableReason.OVERSIZED, detail), None
                raise

    def _safe(self, text: str) -> str:
        return scrub(text, self._secrets)


def _latest() -> OffsetSpec:
    spec: OffsetSpec = OffsetSpec.latest()  # type: ignore[no-untyped-call]
    return spec


def _describe(exc: BaseException) -> str:
    error = exc.args[0] if exc.args else None
    if isinstance(error, KafkaError):
        text = f"{error.name()}: {error.str()}"
        if error.code() in (KafkaError._FENCED, KafkaError.PRODUCER_FENCED):
            text += " (another replay to the same target started meanwhile)"
        return text
    return str(exc) or type(exc).__name__
