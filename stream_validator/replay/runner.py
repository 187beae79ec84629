"""The Kafka side of DLQ replay: read a DLQ range, produce the outputs, commit, atomically.

Each chunk of DLQ records is one Kafka transaction: the records sent to the target, the
envelopes requeued to the DLQ and the replay group's DLQ offsets (with the selection as
commit metadata) become visible together or not at all. The design and its guarantees
are described in ``stream_validator.cli.replay``.

It talks to the Kafka adapter only: its ports (``ReplayClients`` builds them), the one
produce loop (``kafka.io``) and the one transaction implementation (``kafka.transactions``),
so unit tests run it on the in-memory fake broker.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from stream_validator import __version__
from stream_validator.config.settings import ServiceConfig, scrub
from stream_validator.errors import (
    FatalTransactionError,
    KafkaClientError,
    ProducerLostError,
    ReadStalledError,
    ReplayKafkaError,
    ReplaySetupError,
    StreamValidatorError,
    TransactionCallError,
)
from stream_validator.kafka.io import Status, produce_all
from stream_validator.kafka.ports import Admin, Consumer, missing_topics
from stream_validator.kafka.reader import RangeReader
from stream_validator.kafka.transactions import Transactions
from stream_validator.replay.clients import BrokerClients, ReplayClients
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
from stream_validator.replay.positions import Ranges, load_coverage, read_ranges
from stream_validator.replay.report import ReplaySummary
from stream_validator.replay.selection import Selection
from stream_validator.verify import DataSchemaContractVerifier

ProgressCallback = Callable[[int, int, ReplaySummary], None]
"""Called after every chunk with (offsets read, offsets to read, summary so far)."""

Pair = tuple[Decision, ReplayOutput | None]

# What ends a run with exit code 3 (the summary's ``error``); everything else propagates.
_KAFKA_ERRORS = (
    KafkaClientError,
    ReplayKafkaError,
    ReadStalledError,
    FatalTransactionError,
    ProducerLostError,
    TransactionCallError,
)


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
    #: Replay envelopes whose payload has no length and sha256 to check (``--force``).
    allow_unchecked: bool = False
    batch_size: int = 500
    timeout_s: float = 30.0
    max_examples: int = 3

    @property
    def group(self) -> str:
        """The replay's consumer group: the base name plus the selection's digest."""
        return f"{self.group_base}.{self.selection.digest()}"


class DlqReplayer:
    """Runs one replay job against the broker (or the given clients) and returns its summary."""

    def __init__(
        self,
        job: ReplayJob,
        *,
        clients: ReplayClients | None = None,
        progress: ProgressCallback | None = None,
        stop: threading.Event | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.job = job
        self._clients = clients or BrokerClients(
            job.config, group=job.group, transactional_id=job.group_base
        )
        self._progress = progress
        self._stop = stop or threading.Event()
        self._clock = clock
        self._secrets = job.config.kafka.secrets()
        self._topics_seen: set[str] = set()
        self._admin: Admin | None = None
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
        """Replay; Kafka failures end up in ``summary.error`` (exit code 3).

        Raises ReplaySetupError (a missing topic) and ConfigError (refused settings).
        """
        job = self.job
        admin = self._admin = self._clients.admin()
        try:
            partitions = self._check_topics(admin)
            consumer = self._clients.consumer()
            try:
                txn = None
                if not job.dry_run:
                    # Before reading any offsets: fences an older run of the same target and
                    # waits until its open transaction is aborted or committed.
                    make = self._clients.producer
                    txn = Transactions(make, consumer.group_metadata, job.timeout_s)
                    txn.init()
                coverage, own = load_coverage(
                    admin, job.dlq_topic, partitions, job.group_base, job.group, job.timeout_s
                )
                ranges = read_ranges(
                    admin, consumer, job.dlq_topic, partitions, job.selection, own, job.timeout_s
                )
                self._replay(consumer, txn, ranges, coverage)
            finally:
                consumer.close()
        except _KAFKA_ERRORS as exc:
            self.summary.error = scrub(_describe(exc), self._secrets)
        return self.summary

    # --- setup ------------------------------------------------------------------

    def _check_topics(self, admin: Admin) -> list[int]:
        job = self.job
        existing = admin.topics(job.timeout_s)
        wanted = [job.dlq_topic] + ([job.target.topic] if job.target.topic else [])
        for name in wanted:
            if name not in existing:
                raise ReplaySetupError(f"topic {name!r} does not exist")
            self._topics_seen.add(name)
        return list(range(existing[job.dlq_topic]))

    # --- the loop -----------------------------------------------------------------

    def _replay(
        self,
        consumer: Consumer,
        txn: Transactions | None,
        ranges: Ranges,
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
            allow_unchecked=job.allow_unchecked,
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
            connect_headers=job.config.dlq_connect_headers,
        )
        reader = RangeReader(consumer, job.dlq_topic, ranges, job.timeout_s)
        while reader.pending and not self._stop.is_set():
            records, touched = reader.read_chunk(job.batch_size)
            pairs = [(d, build_output(d, context)) for d in planner.decide(records)]
            offsets = {p: planner.commit_offset(p, reader.position[p]) for p in touched}
            if txn is not None:
                pairs = self._commit_chunk(txn, pairs, offsets)
                self.summary.committed.update(offsets)
            for decision, output in pairs:
                self.summary.add(decision, output)
            if self._progress is not None:
                self._progress(reader.done, reader.total, self.summary)
        self.summary.interrupted = self._stop.is_set() and bool(reader.pending)

    def _commit_chunk(
        self, txn: Transactions, pairs: list[Pair], offsets: dict[int, int]
    ) -> list[Pair]:
        """Produce a chunk's outputs and commit its offsets in one transaction; return the
        pairs as sent (a record the producer refuses as too large becomes unreplayable).

        Any failure aborts the transaction (or leaves it to the next run's init, which aborts
        it) and raises: nothing of the chunk becomes visible and its offsets do not move."""
        job = self.job
        outputs = [output for _, output in pairs if output is not None]
        self._check_targets(outputs)
        txn.begin()
        try:
            deliveries = produce_all(txn.producer, outputs, timeout_s=job.timeout_s)
            failed = deliveries.having(Status.FAILED, Status.REFUSED, Status.UNACKED)
            if failed:
                first = failed[0]
                problem = first.error or "no acknowledgement in time"
                raise ReplayKafkaError(
                    f"{len(failed)} record(s) of the chunk not delivered (first: to"
                    f" {first.record.topic}: {problem}); the chunk was aborted"
                )
            positions = {(job.dlq_topic, p): o for p, o in sorted(offsets.items())}
            aborted = txn.commit(positions, job.selection.encode())
            if aborted is not None:
                raise ReplayKafkaError(f"commit failed; the chunk was aborted: {aborted}")
        except StreamValidatorError:
            with contextlib.suppress(StreamValidatorError):
                txn.abort()  # a no-op once the transaction is closed
            raise
        refused = {id(d.record) for d in deliveries.having(Status.TOO_LARGE)}
        return [(d, o) if id(o) not in refused else self._oversized(d) for d, o in pairs]

    def _oversized(self, decision: Decision) -> Pair:
        limit = self.job.config.max_message_bytes
        detail = f"record exceeds max_message_bytes {limit}"
        return as_unreplayable(decision, UnreplayableReason.OVERSIZED, detail), None

    def _check_targets(self, outputs: list[ReplayOutput]) -> None:
        """Refuse to write to a topic that does not exist (metadata requests of the admin
        client never auto-create one)."""
        new = sorted({o.topic for o in outputs} - self._topics_seen)
        if not new:
            return
        assert self._admin is not None  # set by run()
        missing = missing_topics(self._admin, new, self.job.timeout_s)
        if missing:
            raise ReplayKafkaError(f"target topic {missing[0]!r} does not exist")
        self._topics_seen.update(new)


def _describe(exc: Exception) -> str:
    if isinstance(exc, FatalTransactionError):
        # The transactional.id is the group base: a newer replay to the target fenced us.
        return (
            f"{exc} (another replay to the same target started meanwhile,"
            " or the transactional id is not authorised)"
        )
    return str(exc) or type(exc).__name__
