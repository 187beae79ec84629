"""Service settings: a YAML file plus environment overrides; secrets never printed.

Environment overrides use the prefix ``SV_`` and ``__`` between levels::

    SV_KAFKA__BOOTSTRAP_SERVERS=broker:9092      -> kafka.bootstrap_servers
    SV_BATCH__MAX_RECORDS=1000                   -> batch.max_records
    SV_KAFKA__SETTINGS__SASL_PASSWORD=...        -> kafka.settings["sasl.password"]

Inside ``settings``/``consumer``/``producer`` (librdkafka properties, passed through)
the ``_`` of an environment name becomes ``.``. Values are parsed as YAML scalars
(``100`` is an int, ``true`` a bool) except librdkafka properties, which stay strings: in
the file too, a librdkafka value is the text written (``0123`` stays ``0123``, not YAML
1.1's octal 83).
The file's keys and types are the Structs of ``schema`` (decoded by ``yamlfile.decode``);
this module adds the defaults (the dataclasses below), the overrides and the rules between
keys. Every error names the file and the path (``routes[1].contract (route 'books')``) and
lists every problem found, one per line: every key's problem, else every problem of the rules
between keys, else every route's problems (its contract's too) and the clashes between routes.
Values of secret keys never appear in messages.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from stream_validator.config import topicpattern
from stream_validator.config.breaker import BreakerSpec, breaker_spec_from_mapping
from stream_validator.config.redaction import is_secret_key
from stream_validator.config.redaction import redacted as redacted  # re-exported
from stream_validator.config.redaction import scrub as scrub  # re-exported
from stream_validator.config.schema import DEFAULT_MAX_MESSAGE_BYTES as DEFAULT_MAX_MESSAGE_BYTES
from stream_validator.config.schema import PAYLOAD_HEADROOM_BYTES as PAYLOAD_HEADROOM_BYTES
from stream_validator.config.schema import ConfigDoc, RouteDoc
from stream_validator.contracts import SchemaContract, load_contract
from stream_validator.errors import (
    ConfigError,
    ContractFileError,
    PatternError,
    YamlFileError,
    problem_listing,
)
from stream_validator.yamlfile import decode_all, parse_yaml, read_text_file

ENV_PREFIX = "SV_"
MAX_ROUTE_NAME_CHARS = 100
_ROUTE_NAME = re.compile(rf"[A-Za-z0-9._-]{{1,{MAX_ROUTE_NAME_CHARS}}}")
_KAFKA_MAPS = ("settings", "consumer", "producer")
_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
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
    source: str = "<config>"


def load_config(path: str | Path, environ: Mapping[str, str] | None = None) -> ServiceConfig:
    """Read the YAML file, apply SV_* environment overrides, check everything."""
    source = str(path)
    try:
        verbatim = [("kafka", section) for section in _KAFKA_MAPS]
        document = parse_yaml(read_text_file(path), verbatim) or {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{source}: cannot read config file: {exc}") from exc
    except YamlFileError as exc:
        # Line and column only: the source line may hold a password (no secret is known yet).
        raise ConfigError(f"{source}: {exc}") from None
    if not isinstance(document, dict):
        raise ConfigError(f"{source}: the config must be a mapping")
    apply_env_overrides(document, os.environ if environ is None else environ)
    return config_from_mapping(document, source=source, base_dir=Path(path).resolve().parent)


def apply_env_overrides(document: dict[str, Any], environ: Mapping[str, str]) -> None:
    """Merge SV_SECTION__KEY[__SUBKEY]=value variables into the document, in place."""
    for name, raw in sorted(environ.items()):
        if not name.startswith(ENV_PREFIX) or "__" not in name:
            continue
        parts = [p.lower() for p in name[len(ENV_PREFIX) :].split("__")]
        if parts[0] == "routes":
            raise ConfigError(f"{name}: routes cannot be set from the environment")
        node = document
        for depth, part in enumerate(parts[:-1]):
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"{name}: {'.'.join(parts[: depth + 1])} is not a section")
            node = child
        passthrough = len(parts) == 3 and parts[0] == "kafka" and parts[1] in _KAFKA_MAPS
        key = parts[-1].replace("_", ".") if passthrough else parts[-1]
        node[key] = raw if passthrough else _scalar(raw)


def _scalar(raw: str) -> object:
    try:
        value = parse_yaml(raw)  # the file's reading: 1.0e10 is a float here too
    except YamlFileError:
        return raw
    return value if isinstance(value, str | int | float | bool) else raw


def config_from_mapping(
    document: Mapping[str, Any], *, source: str = "<config>", base_dir: Path | None = None
) -> ServiceConfig:
    """Build and check a ServiceConfig from a parsed document."""
    # A section written with nothing under it (``kafka:``) keeps its defaults.
    given = {key: value for key, value in document.items() if value is not None}
    try:
        doc = decode_all(given, ConfigDoc)
    except YamlFileError as exc:
        raise ConfigError(f"{source}: {problem_listing(exc.problems)}") from None
    kafka: dict[str, Any] = doc.kafka.given()
    for section in _KAFKA_MAPS:
        if section in kafka:
            kafka[section] = {k: _librdkafka_value(v) for k, v in kafka[section].items()}
    options: dict[str, Any] = {
        **{f"batch_{key}": value for key, value in doc.batch.given().items()},
        **doc.service.given(),
        **{f"metrics_{key}": value for key, value in doc.metrics.given().items()},
        **{f"dlq_{key}": value for key, value in doc.dlq.given().items()},
    }
    if "batch_max_in_flight_records" not in options:  # the default fits any batch size
        batch = options.get("batch_max_records", 0)
        options["batch_max_in_flight_records"] = max(DEFAULT_MAX_IN_FLIGHT_RECORDS, batch)
    config = ServiceConfig(kafka=KafkaConfig(**kafka), routes=(), source=source, **options)
    _check_transaction_timeouts(config)
    _check_service(config)
    _check_producer_queue(config)
    base = base_dir or Path.cwd()
    if config.resume_token_file is not None:  # relative to the config file, like contracts
        config = replace(config, resume_token_file=str(base / config.resume_token_file))
    problems: list[str] = []
    built = [_route(config, i, route, base, problems) for i, route in enumerate(doc.routes)]
    routes = tuple(route for route in built if route is not None)
    problems.extend(_route_problems(routes))
    if problems:
        raise ConfigError(f"{source}: {problem_listing(problems)}")
    return replace(config, routes=routes)


def _librdkafka_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _route(
    config: ServiceConfig, index: int, doc: RouteDoc, base_dir: Path, problems: list[str]
) -> RouteConfig | None:
    """The route, or None with each of its problems added to ``problems``."""
    before = len(problems)

    def at(key: str) -> str:
        return f"routes[{index}]{'.' if key else ''}{key} (route {doc.name!r})"

    if not _ROUTE_NAME.fullmatch(doc.name):
        # It becomes a metric label, a log field and part of DLQ envelopes.
        problems.append(
            f"routes[{index}].name must be 1-{MAX_ROUTE_NAME_CHARS} characters"
            f" of A-Z a-z 0-9 . _ -, got {doc.name[:MAX_ROUTE_NAME_CHARS]!r}"
        )
    topics = [doc.source_topics] if isinstance(doc.source_topics, str) else doc.source_topics
    outputs = {"clean_topic": doc.clean_topic, "dlq_topic": doc.dlq_topic}
    for key, topic in [*(("source_topics", t) for t in topics or ()), *outputs.items()]:
        if not topicpattern.is_legal_topic(topic):
            problems.append(
                f"{at(key)}: {topic[:250]!r} is not a Kafka topic name"
                " (1-249 characters of A-Z a-z 0-9 . _ -)"
            )
    if bool(topics) == (doc.source_pattern is not None):
        problems.append(f"{at('')} needs exactly one of source_topics, source_pattern")
    if doc.source_pattern is not None:
        try:
            topicpattern.check_pattern(doc.source_pattern)
        except PatternError as exc:
            problems.append(f"{at('source_pattern')} {exc}")
    limit = config.max_message_bytes - PAYLOAD_HEADROOM_BYTES
    max_payload = doc.max_payload_bytes or limit
    if max_payload > limit:
        problems.append(
            f"{at('max_payload_bytes')}: {max_payload} must leave {PAYLOAD_HEADROOM_BYTES} bytes"
            " of service.max_message_bytes for key and headers"
        )
    breaker = None
    if doc.circuit_breaker is not None:
        try:
            breaker = breaker_spec_from_mapping(doc.circuit_breaker, at("circuit_breaker"))
        except ConfigError as exc:
            problems.append(str(exc))
    contract_path = base_dir / doc.contract  # an absolute path replaces base_dir
    try:
        contract = load_contract(contract_path)
    except ContractFileError as exc:
        problems.extend(f"{at('contract')}: {exc.path}: {p}" for p in exc.problems)
    if len(problems) > before:
        return None
    return RouteConfig(
        name=doc.name,
        contract_path=str(contract_path),
        contract=contract,
        clean_topic=doc.clean_topic,
        dlq_topic=doc.dlq_topic,
        source_topics=tuple(topics or ()),
        source_pattern=doc.source_pattern,
        on_null_ceiling_breach=doc.on_null_ceiling_breach or "alert",
        max_payload_bytes=max_payload,
        circuit_breaker=breaker,
    )


def _route_problems(routes: tuple[RouteConfig, ...]) -> list[str]:
    """Names are unique, no topic can belong to two routes, no output is read again."""
    problems: list[str] = []
    names = [r.name for r in routes]
    for index, name in enumerate(names):
        if name in names[:index]:
            problems.append(
                f"routes[{index}].name: duplicate route name {name!r}"
                f" (first at routes[{names.index(name)}])"
            )
    for i, first in enumerate(routes):
        for second in routes[i + 1 :]:
            clash = topicpattern.clash(
                (first.source_topics, first.source_pattern),
                (second.source_topics, second.source_pattern),
            )
            if clash:
                problems.append(
                    f"routes {first.name} and {second.name} could both match {clash};"
                    " every source topic must belong to exactly one route"
                )
    sources = {t for r in routes for t in r.source_topics}
    for index, route in enumerate(routes):
        for key in ("clean_topic", "dlq_topic"):
            output = getattr(route, key)
            if output in sources or any(r.matches(output) for r in routes):
                problems.append(
                    f"routes[{index}].{key} (route {route.name!r}): output topic"
                    f" {output!r} is also a source topic (it would be consumed again)"
                )
    return problems


def _check_transaction_timeouts(config: ServiceConfig) -> None:
    """The producer's timeouts are whole milliseconds, and everything a transaction waits for
    fits inside ``transaction.timeout.ms`` (else librdkafka refuses the producer, or the broker
    aborts transactions that would have committed)."""
    kafka = config.kafka
    for key in ("message.timeout.ms", "transaction.timeout.ms", "socket.timeout.ms"):
        given = kafka.producer_setting(key)
        if given is not None and not re.fullmatch(r"[0-9]{1,10}", given.strip()):
            raise ConfigError(
                f"{config.source}: {_producer_key(kafka, key)}: expected a whole number of"
                f" milliseconds, got {given[:20]!r}"
            )
    transaction_ms = kafka.transaction_timeout_ms
    if transaction_ms is None:
        return
    default = (
        "" if kafka.producer_setting("transaction.timeout.ms") else ", the exactly-once default"
    )
    txn = f"{_producer_key(kafka, 'transaction.timeout.ms')} ({transaction_ms} ms{default})"
    message_ms = kafka.message_timeout_ms
    socket_ms = kafka.producer_setting("socket.timeout.ms")
    checks = [
        (
            0 < message_ms <= transaction_ms,
            f"{_producer_key(kafka, 'message.timeout.ms')} ({message_ms} ms) must be 1 to {txn}:"
            " a delivery must not outlive the transaction it belongs to",
        ),
        (
            socket_ms is None or int(socket_ms) <= transaction_ms + 100,
            f"{_producer_key(kafka, 'socket.timeout.ms')} ({socket_ms} ms) must be at most {txn}"
            " + 100 ms (librdkafka's rule for transactional producers)",
        ),
        (
            config.batch_commit_interval_s * 1000 < transaction_ms,
            f"batch.commit_interval_s ({config.batch_commit_interval_s} s) must be shorter than"
            f" {txn}: the broker would abort every transaction before it commits",
        ),
    ]
    problems = [message for ok, message in checks if not ok]
    if problems:
        raise ConfigError(f"{config.source}: {problem_listing(problems)}")


def _producer_key(kafka: KafkaConfig, key: str) -> str:
    """Where a producer property is set (``kafka.producer`` wins over ``kafka.settings``)."""
    section = "settings" if key in kafka.settings and key not in kafka.producer else "producer"
    return f"kafka.{section}.{key}"


def _check_service(config: ServiceConfig) -> None:
    """The rules between keys (one key's type and bounds are checked by decoding)."""
    checks = [
        (
            config.liveness_timeout_s > config.batch_timeout_s,
            "service.liveness_timeout_s must exceed batch.timeout_s"
            f" ({config.liveness_timeout_s} <= {config.batch_timeout_s})",
        ),
        (
            config.batch_max_in_flight_records >= config.batch_max_records,
            f"batch.max_in_flight_records ({config.batch_max_in_flight_records}) must be at least"
            f" batch.max_records ({config.batch_max_records}): one batch must fit in the window",
        ),
        (
            config.retry_backoff_s <= config.retry_backoff_max_s,
            "service.retry_backoff_s must be <= service.retry_backoff_max_s"
            f" ({config.retry_backoff_s} > {config.retry_backoff_max_s})",
        ),
        *(
            (
                bool(host.strip()),
                f"{key} must not be empty: set an address such as 127.0.0.1 (loopback only)"
                " or 0.0.0.0 (every interface)",
            )
            for key, host in (
                ("service.health_host", config.health_host),
                ("metrics.host", config.metrics_host),
            )
        ),
        (
            config.log_level.upper() in _LOG_LEVELS,
            f"service.log_level: expected one of {', '.join(_LOG_LEVELS)} (any case),"
            f" got {config.log_level[:20]!r}",
        ),
    ]
    problems = [message for ok, message in checks if not ok]
    if problems:
        raise ConfigError(f"{config.source}: {problem_listing(problems)}")


MIN_TOKEN_CHARS, MAX_TOKEN_CHARS = 16, 4096
_TOKEN = re.compile(rf"[\x21-\x7e]{{{MIN_TOKEN_CHARS},{MAX_TOKEN_CHARS}}}")


def read_resume_token(path: str, key: str = "service.resume_token_file") -> str:
    """The resume token in the file ``path`` (surrounding whitespace, such as a final newline,
    dropped), checked by ``check_resume_token``; ``key`` names the setting in errors."""
    try:
        text = read_text_file(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{key}: cannot read the token file {path}: {exc}") from None
    return check_resume_token(text, f"{key}: the token in {path}")


def check_resume_token(text: str, where: str) -> str:
    """``text`` stripped: 16-4096 printable ASCII characters without spaces (it becomes an
    HTTP header). A ConfigError otherwise, which never shows the token."""
    token = text.strip()
    if not _TOKEN.fullmatch(token):
        raise ConfigError(
            f"{where} must be {MIN_TOKEN_CHARS}-{MAX_TOKEN_CHARS} printable ASCII characters"
            f" without spaces (got {len(token)} characters), e.g. from `openssl rand -hex 32`"
        )
    return token


_QUEUE_KEYS = ("queue.buffering.max.kbytes", "queue.buffering.max.messages")


def _check_producer_queue(config: ServiceConfig) -> None:
    """The producer's local queue holds one record of ``max_message_bytes``: a record that
    cannot fit in it even empty would wait for room forever.

    librdkafka counts value bytes against ``queue.buffering.max.kbytes`` (every output's
    value is at most ``max_message_bytes``) and records against
    ``queue.buffering.max.messages``, where any value it accepts (0: no limit) admits one
    record into an empty queue; both are checked to be integers here."""
    kafka = config.kafka
    values: dict[str, int] = {}
    for key in _QUEUE_KEYS:
        section = "producer" if key in kafka.producer else "settings"
        raw = getattr(kafka, section).get(key)
        if raw is None:
            continue
        try:
            values[key] = int(raw)
        except ValueError:
            raise ConfigError(
                f"{config.source}: kafka.{section}.{key}: expected an integer, got {raw[:20]!r}"
            ) from None
    kbytes = values.get(_QUEUE_KEYS[0])
    if kbytes is not None and kbytes * 1024 < config.max_message_bytes:
        raise ConfigError(
            f"{config.source}: kafka queue.buffering.max.kbytes={kbytes}"
            f" ({kbytes * 1024} bytes) cannot hold one record of service.max_message_bytes"
            f"={config.max_message_bytes}: set queue.buffering.max.kbytes to at least"
            f" {-(-config.max_message_bytes // 1024)} or lower service.max_message_bytes"
            " (queue.buffering.max.messages bounds the count, not the bytes)"
        )
