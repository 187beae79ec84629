"""The service's configuration as typed values, with their defaults.

``settings`` builds them from the file (``load_config``) and checks them; every other
module takes them as they are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from stream_validator.config import topicpattern
from stream_validator.config.breaker import BreakerSpec
from stream_validator.config.redaction import is_secret_key
from stream_validator.config.schema import DEFAULT_MAX_MESSAGE_BYTES, PAYLOAD_HEADROOM_BYTES
from stream_validator.contracts import SchemaContract

__all__ = [
    "DEFAULT_MAX_IN_FLIGHT_RECORDS",
    "DEFAULT_MESSAGE_TIMEOUT_MS",
    "DEFAULT_TRANSACTION_TIMEOUT_MS",
    "KafkaConfig",
    "RouteConfig",
    "ServiceConfig",
]

#: How long a failed delivery takes to surface (librdkafka's default: 5 min); the batch is
#: then retried, never committed past.
DEFAULT_MESSAGE_TIMEOUT_MS = 30_000
#: Exactly-once: how long the broker lets a transaction stay open before it aborts it. An
#: instance killed with one open holds back read_committed readers of the partitions it wrote
#: until then (librdkafka's default is 60 s; Kafka Streams sets 10 s for this reason).
DEFAULT_TRANSACTION_TIMEOUT_MS = 10_000
#: ``batch.max_in_flight_records`` when unset (or ``batch.max_records``, when that is larger):
#: small enough to bound what a kill -9 duplicates, large enough to keep full speed.
DEFAULT_MAX_IN_FLIGHT_RECORDS = 5000


@dataclass(frozen=True, slots=True)
class RouteConfig:
    """Source topic(s) -> contract -> clean topic + DLQ topic."""

    name: str
    contract_path: str
    contract: SchemaContract
    clean_topic: str
    dlq_topic: str
    source_topics: tuple[str, ...] = ()
    source_pattern: str | None = None
    on_null_ceiling_breach: str = "alert"
    max_payload_bytes: int = DEFAULT_MAX_MESSAGE_BYTES - PAYLOAD_HEADROOM_BYTES
    circuit_breaker: BreakerSpec | None = None  # None: the route has no breaker
    #: A candidate contract judged beside the live one, routing nothing (``service/shadow/``).
    shadow_contract: SchemaContract | None = None
    shadow_contract_path: str | None = None

    def matches(self, topic: str) -> bool:
        """True when a source topic belongs to this route (a pattern matches the whole name)."""
        if topic in self.source_topics:
            return True
        pattern = self.source_pattern
        return pattern is not None and topicpattern.full_match(pattern, topic)

    def subscription(self) -> list[str]:
        """What the consumer subscribes to: exactly the topics ``matches`` accepts."""
        if self.source_pattern is None:
            return list(self.source_topics)
        return [topicpattern.subscription(self.source_pattern)]


@dataclass(frozen=True, slots=True)
class KafkaConfig:
    """Connection and client settings; ``settings`` apply to consumer and producer."""

    bootstrap_servers: str = "127.0.0.1:9092"
    group_id: str = "stream-validator"
    client_id: str = "stream-validator"
    auto_offset_reset: str = "earliest"
    #: Set (unique per live instance, stable across its restarts) for exactly-once mode.
    transactional_id: str | None = None
    settings: Mapping[str, str] = field(default_factory=dict)
    consumer: Mapping[str, str] = field(default_factory=dict)
    producer: Mapping[str, str] = field(default_factory=dict)

    def producer_setting(self, key: str) -> str | None:
        """A librdkafka property the user set for the producer (``producer`` over
        ``settings``), or None."""
        return self.producer.get(key, self.settings.get(key))

    @property
    def transaction_timeout_ms(self) -> int | None:
        """The producer's ``transaction.timeout.ms``: as set, else 10 s in exactly-once mode;
        None when neither (librdkafka's default applies)."""
        given = self.producer_setting("transaction.timeout.ms")
        if given is not None:
            return int(given)
        return DEFAULT_TRANSACTION_TIMEOUT_MS if self.transactional_id else None

    @property
    def message_timeout_ms(self) -> int:
        """The producer's ``message.timeout.ms``: as set, else 30 s, capped by the transaction
        timeout (a delivery never outlives the transaction it belongs to)."""
        given = self.producer_setting("message.timeout.ms")
        if given is not None:
            return int(given)
        return min(
            DEFAULT_MESSAGE_TIMEOUT_MS, self.transaction_timeout_ms or DEFAULT_MESSAGE_TIMEOUT_MS
        )

    def secrets(self) -> list[str]:
        """Values of secret keys, so they can be scrubbed from any text."""
        out: list[str] = []
        for section in (self.settings, self.consumer, self.producer):
            out.extend(str(v) for k, v in section.items() if is_secret_key(k) and str(v))
        return out


@dataclass(frozen=True, slots=True)
class ServiceConfig:
    """Everything ``stream-validator run`` needs."""

    kafka: KafkaConfig
    routes: tuple[RouteConfig, ...]
    batch_max_records: int = 500
    batch_timeout_s: float = 1.0
    # How often acknowledged offsets are committed (at-least-once, asynchronously) or the
    # open transaction is committed (exactly-once; Kafka Streams' default is 100 ms too).
    batch_commit_interval_s: float = 0.1
    # Once a batch's first record has arrived, wait at most this long for more (up to
    # max_records; never past a due commit): at moderate rates a batch would otherwise
    # hold a few records and its fixed cost dominate the CPU. Adds at most this much
    # latency; 0 takes what has arrived. A busy feed fills batches either way.
    batch_linger_s: float = 0.005
    # At most this many records consumed and not delivered: outputs not all acknowledged
    # (at-least-once) or in the open transaction (exactly-once). What a kill -9 can
    # duplicate, besides one commit interval's delivered records. While a new batch would
    # not fit, the loop serves acknowledgements instead of consuming.
    batch_max_in_flight_records: int = DEFAULT_MAX_IN_FLIGHT_RECORDS
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    health_host: str = "127.0.0.1"
    health_port: int = 8080
    metrics_enabled: bool = True
    metrics_host: str = "127.0.0.1"
    metrics_port: int = 9464
    #: Also expose prometheus_client's ``<name>_created`` series (one more per counter and
    #: histogram child; nothing here reads them).
    metrics_created_series: bool = False
    #: Also write Kafka Connect's ``__connect.errors.*`` headers on DLQ records
    #: (``stream_validator.dlq.connect``), so tools that redrive Connect DLQs read ours.
    dlq_connect_headers: bool = False
    #: The file holding the bearer token of POST /breaker/resume (None: resume refused).
    resume_token_file: str | None = None
    shutdown_timeout_s: float = 30.0
    liveness_timeout_s: float = 60.0
    retry_backoff_s: float = 1.0
    retry_backoff_max_s: float = 30.0
    halt_after_failed_batches: int = 0
    startup_check_timeout_s: float = 5.0
    log_level: str = "INFO"
    # Every this many seconds an INFO ``summary`` event counts each route's delivered
    # records, clean, DLQ, batches and flagged records (also once at shutdown); 0: none.
    # A minute keeps a quiet service's log readable and still shows it is alive.
    log_summary_interval_s: float = 60.0
    #: How often the routes' contract files are looked at for a change, which is then
    #: checked and swapped in between batches (``service/reload/``); 0: only on SIGHUP.
    contract_reload_interval_s: float = 5.0
    #: Every this many seconds, a ``shadow differences`` event per route whose shadow
    #: contract judged records differently meanwhile (``service/shadow/``); 0: none.
    shadow_report_interval_s: float = 60.0
    source: str = "<config>"
