"""Registry routes' values decoded before planning, and the wait while the registry is away.

A Schema Registry that cannot answer (``RegistryUnavailableError``) judges no record: a good
record must never reach the DLQ because of it. The consumed batch is set back to its first
offsets and read again after a backoff (``service.retry_backoff_s`` doubling up to
``retry_backoff_max_s``), for as long as it takes, like a broker outage; the service is not
ready meanwhile, each set-back is counted (``on_registry_unavailable``) and logged as the
event ``registry_unavailable``. Each attempt is bounded by ``schema_registry.timeout_s``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence

from stream_validator.config.settings import ServiceConfig
from stream_validator.errors import RegistryUnavailableError
from stream_validator.kafka.ports import Consumed
from stream_validator.records import SourceRecord, TopicPartitionKey
from stream_validator.registry.decoder import RecordDecoder
from stream_validator.registry.outcome import DecodeResult
from stream_validator.service.report.hooks import ServiceHooks

log = logging.getLogger("stream_validator.service")


class RegistryWait:
    """Decodes registry routes' batches; sets a batch back while the registry is away."""

    __slots__ = ("_config", "_decoders", "_hooks", "_note_error", "_safe", "_stop", "waits")

    def __init__(
        self,
        decoders: Mapping[str, RecordDecoder],
        config: ServiceConfig,
        hooks: ServiceHooks,
        *,
        note_error: Callable[[str], None],
        safe: Callable[[object], str],
        stop: threading.Event,
    ) -> None:
        self._decoders = decoders
        self._config = config
        self._hooks = hooks
        self._note_error = note_error
        self._safe = safe
        self._stop = stop
        #: Batches set back in a row (0 once the registry answers again).
        self.waits = 0

    def decode(
        self, route: str, records: Sequence[SourceRecord]
    ) -> list[DecodeResult | None] | None:
        """A registry route's values decoded (None: a JSON route). Raises
        RegistryUnavailableError naming the route."""
        decoder = self._decoders.get(route)
        if decoder is None:
            return None
        try:
            return decoder.decode_batch(records)
        except RegistryUnavailableError as exc:
            exc.route = route
            raise

    def close(self) -> None:
        """Close the registry clients (at shutdown)."""
        for decoder in self._decoders.values():
            decoder.close()

    def answered(self) -> None:
        """A batch was decoded (or needed no registry): the next outage starts its backoff anew."""
        self.waits = 0

    def set_back(
        self,
        consumed: Consumed,
        exc: RegistryUnavailableError,
        seek: Callable[[dict[TopicPartitionKey, int]], None],
    ) -> None:
        """Seek the batch's partitions back to its first offsets, report, and back off
        (returns early when the service is stopped)."""
        first: dict[TopicPartitionKey, int] = {}
        for record in consumed.records:
            first.setdefault((record.topic, record.partition), record.offset)
        seek(first)
        self.waits += 1
        route = exc.route or "?"
        self._hooks.on_registry_unavailable(route)
        self._note_error(f"schema registry unavailable (route {route}): {exc}")
        config = self._config
        backoff = min(
            config.retry_backoff_s * 2 ** min(self.waits - 1, 30), config.retry_backoff_max_s
        )
        log.error(
            "schema registry unavailable; the batch waits and is read again",
            extra={
                "event": "registry_unavailable",
                "route": route,
                "attempt": self.waits,
                "retry_in_s": backoff,
                "error": self._safe(exc),
            },
        )
        self._stop.wait(backoff)
