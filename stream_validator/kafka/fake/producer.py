"""The fake broker's producer (``ports.Producer``), transactions included."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from stream_validator.errors import KafkaClientError, KafkaErrorInfo
from stream_validator.kafka.fake.broker import ABORTED, COMMITTED, OPEN, FakeBroker, record_size
from stream_validator.kafka.fake.consumer import FakeGroupMetadata
from stream_validator.kafka.ports import (
    FENCED,
    MSG_SIZE_TOO_LARGE,
    AckTally,
    DeliveryCallback,
    DeliveryFailure,
    DeliveryReport,
    FailureCallback,
    GroupMetadata,
    Producible,
)
from stream_validator.records import TopicPartitionKey


class Tally:
    """``ports.AckTally`` in Python (the native one counts librdkafka's callbacks)."""

    __slots__ = ("acked", "on_failure")

    def __init__(self, on_failure: FailureCallback) -> None:
        self.acked = 0
        self.on_failure = on_failure

    def settle(self, failure: DeliveryFailure | None, /) -> None:
        """Count an acknowledgement, or hand the failure on."""
        if failure is None:
            self.acked += 1
        else:
            self.on_failure(failure)


def _fail(code: str, reason: str, **flags: bool) -> KafkaClientError:
    return KafkaClientError(KafkaErrorInfo(code, reason, **flags))


@dataclass(slots=True)
class _Queued:
    record: Producible
    partition: int
    number: int
    on_delivery: DeliveryCallback
    txn: object | None


@dataclass(slots=True)
class _Txn:
    offsets: dict[str, tuple[dict[TopicPartitionKey, int], str | None]] = field(
        default_factory=dict
    )
    failed: bool = False


class FakeProducer:
    """A producer; deliveries (and their callbacks) happen in poll() and flush()."""

    def __init__(
        self,
        broker: FakeBroker,
        *,
        transactional_id: str | None,
        message_max_bytes: int | None,
        queue_size: int,
        queue_bytes: int | None = None,
    ) -> None:
        self.broker = broker
        self.transactional_id = transactional_id
        self._max_bytes = message_max_bytes
        self._queue_size = queue_size
        self._queue_bytes = queue_bytes
        self._queue: list[_Queued] = []
        self._epoch: int | None = None
        self._txn: _Txn | None = None

    def produce(self, record: Producible, on_delivery: DeliveryCallback) -> None:
        if self.transactional_id is not None and self._txn is None:
            raise _fail("_STATE", "produce outside a transaction")
        if self._max_bytes is not None and record_size(record) > self._max_bytes:
            raise _fail(MSG_SIZE_TOO_LARGE, f"{record_size(record)} bytes > {self._max_bytes}")
        if len(self._queue) >= self._queue_size or not self._room_for(record):
            raise BufferError("Local: Queue full")
        faults = self.broker.faults
        faults.produced += 1
        partition = self.broker.partition_for(record.topic, record.key)
        self._queue.append(_Queued(record, partition, faults.produced, on_delivery, self._txn))
        if faults.on_produce is not None:
            faults.on_produce(faults.produced, record)

    def ack_tally(self, on_failure: FailureCallback) -> AckTally:
        return Tally(on_failure)

    def produce_batch(self, records: Sequence[Producible], start: int, tally: AckTally) -> int:
        for index in range(start, len(records)):
            record = records[index]

            def delivered(report: DeliveryReport, r: Producible = record) -> None:
                failure = None
                if report.error is not None:
                    failure = DeliveryFailure(report.error, r.topic, r.key, r.value)
                tally.settle(failure)

            try:
                self.produce(record, delivered)
            except (BufferError, KafkaClientError):
                return index
        return len(records)

    def poll(self, timeout_s: float) -> int:
        return self._deliver()

    def flush(self, timeout_s: float) -> int:
        self._deliver()
        return len(self._queue)

    def init_transactions(self, timeout_s: float) -> None:
        tid = self._transactional("init_transactions")
        broker = self.broker
        older = broker.open_txns.pop(tid, None)
        if older is not None:
            broker.finish(older, ABORTED)  # the fenced producer's transaction never commits
        self._epoch = broker.epochs[tid] = broker.epochs.get(tid, 0) + 1

    def begin_transaction(self) -> None:
        tid = self._transactional("begin_transaction")
        if self._txn is not None:
            raise _fail("_STATE", "a transaction is already open")
        self._txn = _Txn()
        self.broker.open_txns[tid] = self._txn

    def send_offsets_to_transaction(
        self,
        offsets: Mapping[TopicPartitionKey, int],
        group: GroupMetadata,
        timeout_s: float,
        metadata: str | None = None,
    ) -> None:
        self._transactional("send_offsets_to_transaction")
        txn = self._open_txn()
        assert isinstance(group, FakeGroupMetadata)
        stored, _ = txn.offsets.get(group.group, ({}, None))
        txn.offsets[group.group] = ({**stored, **offsets}, metadata)

    def commit_transaction(self, timeout_s: float) -> None:
        tid = self._transactional("commit_transaction")
        txn = self._open_txn()
        self._deliver()
        if txn.failed or any(q.txn is txn for q in self._queue):
            raise _fail("_INCONSISTENT", "a record of the transaction failed", abortable=True)
        self.broker.finish(txn, COMMITTED)
        for group, (offsets, metadata) in txn.offsets.items():
            self.broker.commit_offsets(group, offsets, metadata)
        self.broker.open_txns.pop(tid, None)
        self._txn = None

    def abort_transaction(self, timeout_s: float) -> None:
        tid = self._transactional("abort_transaction")
        txn = self._open_txn()
        self._queue = [q for q in self._queue if q.txn is not txn]  # purged, never delivered
        self.broker.finish(txn, ABORTED)
        self.broker.open_txns.pop(tid, None)
        self._txn = None

    def topics(self, timeout_s: float) -> dict[str, int]:
        return {name: len(parts) for name, parts in self.broker.logs.items()}

    # --- internals ------------------------------------------------------------------------

    def _room_for(self, record: Producible) -> bool:
        """librdkafka counts value bytes against queue.buffering.max.kbytes."""
        if self._queue_bytes is None:
            return True
        queued = sum(len(q.record.value or b"") for q in self._queue)
        return queued + len(record.value or b"") <= self._queue_bytes

    def _transactional(self, call: str) -> str:
        """The id; raises the scripted error of this call, or fencing."""
        if self.transactional_id is None:
            raise _fail("_NOT_CONFIGURED", f"{call}: the producer is not transactional")
        scripted = self.broker.faults.txn_errors.get(call)
        if scripted:
            raise KafkaClientError(scripted.pop(0), call)
        current = self.broker.epochs.get(self.transactional_id)
        if call != "init_transactions" and (self._epoch is None or current != self._epoch):
            self._txn = None
            raise _fail(FENCED, f"{call}: fenced by a newer producer", fatal=True)
        return self.transactional_id

    def _open_txn(self) -> _Txn:
        if self._txn is None:
            raise _fail("_STATE", "no open transaction")
        return self._txn

    def _deliver(self) -> int:
        """Deliver the queue by message set (partition): a refusal fails its whole set."""
        broker, faults = self.broker, self.broker.faults
        ready = [q for q in self._queue if q.record.topic not in faults.hold_topics]
        self._queue = [q for q in self._queue if q.record.topic in faults.hold_topics]
        sets: dict[TopicPartitionKey, list[_Queued]] = {}
        for queued in ready:
            sets.setdefault((queued.record.topic, queued.partition), []).append(queued)
        reports: list[tuple[_Queued, DeliveryReport]] = []
        for (topic, partition), members in sets.items():
            refused = {id(q): broker.refusal(q.record) for q in members}
            set_code = next((c for c in refused.values() if c is not None), None)
            for queued in members:
                error = _set_error(refused[id(queued)], set_code)
                if error is None and topic not in broker.logs:
                    error = KafkaErrorInfo("_UNKNOWN_TOPIC", f"topic {topic} does not exist")
                if error is None:
                    error = faults.delivery_error(queued.record, queued.number)
                if error is not None:
                    if queued.txn is not None:
                        assert isinstance(queued.txn, _Txn)
                        queued.txn.failed = True
                    reports.append((queued, DeliveryReport(topic, error, partition)))
                    continue
                r = queued.record
                state = OPEN if queued.txn is not None else COMMITTED
                written = broker.write(
                    topic, partition, r.key, r.value, r.headers, r.timestamp_ms, state, queued.txn
                )
                reports.append((queued, DeliveryReport(topic, None, partition, written.offset)))
        for queued, report in reports:
            queued.on_delivery(report)
        return len(reports)


def _set_error(own: str | None, set_code: str | None) -> KafkaErrorInfo | None:
    if set_code is None:
        return None
    if own is not None:
        return KafkaErrorInfo(own, "the broker refused the record")
    # The broker fails the whole message set; batchmates of an invalid record say so.
    code = "_INVALID_DIFFERENT_RECORD" if set_code == "INVALID_RECORD" else set_code
    return KafkaErrorInfo(code, "a record of the same message set was refused")
