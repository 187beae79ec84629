"""What the Kafka clients call back inside consume(), poll() and flush(): rebalances,
statistics and errors (as the adapter's plain values). A fatal error is only recorded here;
the loop stops on it."""

from __future__ import annotations

import logging
from collections.abc import Callable

from stream_validator.codec import decode_json
from stream_validator.errors import DecodeError, KafkaErrorInfo
from stream_validator.kafka.ports import UNKNOWN_TOPIC_OR_PART, UNREACHABLE
from stream_validator.records import TopicPartitionKey
from stream_validator.service.report.hooks import ServiceHooks
from stream_validator.service.report.state import ServiceState

log = logging.getLogger("stream_validator.service")


class ClientCallbacks:
    """The service's client callbacks."""

    def __init__(
        self,
        state: ServiceState,
        hooks: ServiceHooks,
        *,
        safe: Callable[[object], str],
        set_ready: Callable[[bool], None],
        commit_pending: Callable[[str], None],
        drop_partitions: Callable[[list[TopicPartitionKey]], None],
        rebalanced: Callable[[str, list[TopicPartitionKey]], None] | None = None,
    ) -> None:
        self.state = state
        self.hooks = hooks
        self._safe = safe
        self._set_ready = set_ready
        self._commit_pending = commit_pending
        self._drop_partitions = drop_partitions
        self._rebalanced = rebalanced or (lambda _event, _keys: None)
        #: Set by a fatal client error; the loop stops with exit 1.
        self.fatal: str | None = None

    def on_assign(self, keys: list[TopicPartitionKey]) -> None:
        log.info("partitions assigned", extra={"partitions": keys})
        self._rebalanced("assigned", keys)
        self.hooks.on_rebalance("assigned", keys)

    def on_revoke(self, keys: list[TopicPartitionKey]) -> None:
        self._commit_pending("revoke")  # synchronous, before the partitions move on
        self._drop_partitions(keys)
        self._rebalanced("revoked", keys)
        log.info("partitions revoked", extra={"partitions": keys})
        self.hooks.on_rebalance("revoked", keys)

    def on_lost(self, keys: list[TopicPartitionKey]) -> None:
        self._drop_partitions(keys)  # never commit for lost partitions: another member owns them
        self._rebalanced("lost", keys)
        log.warning("partitions lost", extra={"partitions": keys})
        self.hooks.on_rebalance("lost", keys)

    def on_stats(self, raw: str) -> None:
        try:
            stats = decode_json(raw)
        except DecodeError:
            return
        if isinstance(stats, dict):
            self.hooks.on_stats(stats)

    def on_error(self, error: KafkaErrorInfo, *, fatal_stops: bool = True) -> None:
        text = self._safe(error)
        if error.fatal and fatal_stops:
            self.fatal = text
        if error.code in UNREACHABLE:
            self._set_ready(False)
        log.warning("kafka client error", extra={"error": text})
        self.state.last_error = text

    def on_message_error(self, error: KafkaErrorInfo) -> None:
        text = self._safe(error)
        if error.fatal:
            self.fatal = text
        elif error.code == UNKNOWN_TOPIC_OR_PART:
            log.warning("source topic not available yet", extra={"error": text})
        else:
            log.warning("consumer error", extra={"error": text})
