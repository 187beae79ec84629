"""Whether the service can deliver: the broker answers and every output topic exists.

While it waits, both Kafka clients are polled: their error callbacks (the real cause, such
as ``_AUTHENTICATION``, reaches the log and ``/status``) and librdkafka's log lines are
delivered only then, and would otherwise pile up in memory until shutdown."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from stream_validator.config.settings import ServiceConfig
from stream_validator.errors import KafkaClientError, KafkaErrorInfo
from stream_validator.kafka.ports import Consumer, Producer, missing_topics
from stream_validator.service.report.state import ServiceState

log = logging.getLogger("stream_validator.service")

_PROBE_INTERVAL_S = 2.0
#: The longest a wait blocks in one consume() (how soon a stop request is seen).
_SERVE_SLICE_S = 0.2


class Readiness:
    """Startup wait and idle recovery probe; errors go to ``note_error`` (not ready)."""

    def __init__(
        self,
        config: ServiceConfig,
        state: ServiceState,
        *,
        note_error: Callable[[str], None],
        set_ready: Callable[[bool], None],
        safe: Callable[[object], str],
        on_consumer_error: Callable[[KafkaErrorInfo], None] = lambda _error: None,
    ) -> None:
        self._config = config
        self._state = state
        self._note_error = note_error
        self._set_ready = set_ready
        self._safe = safe
        self._on_consumer_error = on_consumer_error
        self._outputs = {t for r in config.routes for t in (r.clean_topic, r.dlq_topic)}
        self._sources = {t for r in config.routes for t in r.source_topics}
        self._last_probe = 0.0

    def wait_for_topics(
        self, consumer: Consumer, producer: Producer, stop: threading.Event
    ) -> bool:
        """Block (not ready) until the broker answers and every output topic exists, serving
        both clients' callbacks meanwhile; False when stopped first."""
        config = self._config
        backoff = config.retry_backoff_s
        while not stop.is_set():
            self._state.last_loop = time.monotonic()
            try:
                missing = set(
                    missing_topics(
                        producer,
                        sorted(self._outputs | self._sources),
                        config.startup_check_timeout_s,
                    )
                )
            except KafkaClientError as exc:
                self._note_error(f"broker not reachable yet: {exc}")
            else:
                if missing & self._sources:
                    log.warning(
                        "source topics do not exist yet; consuming them once they do",
                        extra={"topics": sorted(missing & self._sources)},
                    )
                missing_outputs = sorted(missing & self._outputs)
                if not missing_outputs:
                    return True
                self._note_error(f"output topics missing: {', '.join(missing_outputs)}")
            # After the note: a client error served now (the cause) is what /status shows.
            self._serve(consumer, producer, backoff, stop)
            backoff = min(backoff * 2, config.retry_backoff_max_s)
        return False

    def _serve(
        self, consumer: Consumer, producer: Producer, seconds: float, stop: threading.Event
    ) -> None:
        """Poll both clients for ``seconds`` (or until stopped): nothing else polls them yet,
        so their error callbacks and log lines are delivered only here."""
        deadline = time.monotonic() + seconds
        while not stop.is_set():
            try:
                producer.poll(0.0)
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                # Not subscribed yet: consume() delivers callbacks and errors, no records.
                consumed = consumer.consume(1, min(left, _SERVE_SLICE_S))
            except KafkaClientError as exc:  # only fatal errors raise; the loop stops on them
                self._note_error(f"kafka client failed while waiting: {exc}")
                stop.wait(max(deadline - time.monotonic(), 0.0))
                return
            for error in consumed.errors:
                self._on_consumer_error(error.info)

    def probe(self, producer: Producer) -> None:
        """Idle and not ready after a broker error: become ready again once it answers."""
        now = time.monotonic()
        if now - self._last_probe < _PROBE_INTERVAL_S:
            return
        self._last_probe = now
        try:
            missing = missing_topics(
                producer, sorted(self._outputs), self._config.startup_check_timeout_s
            )
        except KafkaClientError as exc:
            self._state.last_error = self._safe(f"broker not reachable: {exc}")
            return
        if missing:
            self._note_error(f"output topics missing: {', '.join(missing)}")
        else:
            self._set_ready(True)
