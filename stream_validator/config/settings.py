"""Service settings: a YAML file plus environment overrides; secrets never printed.

Environment overrides use the prefix ``SV_`` and ``__`` between levels::

    SV_KAFKA__BOOTSTRAP_SERVERS=broker:9092      -> kafka.bootstrap_servers
    SV_BATCH__MAX_RECORDS=1000                   -> batch.max_records
    SV_KAFKA__SETTINGS__SASL_PASSWORD=...        -> kafka.settings["sasl.password"]

Inside ``settings``/``consumer``/``producer`` (librdkafka properties, passed through)
the ``_`` of an environment name becomes ``.``. Values are parsed as YAML scalars
(``100`` is an int, ``true`` a bool) except librdkafka properties, which stay strings.
Every error names the offending key; values of secret keys never appear in messages.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from stream_validator.config import topicpattern
from stream_validator.config.redaction import is_secret_key
from stream_validator.config.redaction import redacted as redacted  # re-exported
from stream_validator.config.redaction import scrub as scrub  # re-exported
from stream_validator.contracts import SchemaContract, load_contract
from stream_validator.errors import ConfigError, ContractFileError, PatternError, YamlFileError
from stream_validator.yamlfile import parse_yaml

ENV_PREFIX = "SV_"
NULL_POLICIES = ("alert", "quarantine")
MAX_ROUTE_NAME_CHARS = 100
_ROUTE_NAME = re.compile(rf"[A-Za-z0-9._-]{{1,{MAX_ROUTE_NAME_CHARS}}}")
# librdkafka producer default; must cover the largest payload plus key and headers.
DEFAULT_MAX_MESSAGE_BYTES = 1_048_576
PAYLOAD_HEADROOM_BYTES = 48_576


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
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    health_host: str = "127.0.0.1"
    health_port: int = 8080
    metrics_enabled: bool = True
    metrics_host: str = "127.0.0.1"
    metrics_port: int = 9464
    shutdown_timeout_s: float = 30.0
    liveness_timeout_s: float = 60.0
    retry_backoff_s: float = 1.0
    retry_backoff_max_s: float = 30.0
    halt_after_failed_batches: int = 0
    startup_check_timeout_s: float = 5.0
    log_level: str = "INFO"
    source: str = "<config>"


# Accepted keys per section: (key, type, default-or-None); unknown keys are errors.
_SERVICE_KEYS: dict[str, tuple[type | tuple[type, ...], str]] = {
    "batch.max_records": (int, "batch_max_records"),
    "batch.timeout_s": ((int, float), "batch_timeout_s"),
    "service.max_message_bytes": (int, "max_message_bytes"),
    "service.health_host": (str, "health_host"),
    "service.health_port": (int, "health_port"),
    "service.shutdown_timeout_s": ((int, float), "shutdown_timeout_s"),
    "service.liveness_timeout_s": ((int, float), "liveness_timeout_s"),
    "service.retry_backoff_s": ((int, float), "retry_backoff_s"),
    "service.retry_backoff_max_s": ((int, float), "retry_backoff_max_s"),
    "service.halt_after_failed_batches": (int, "halt_after_failed_batches"),
    "service.startup_check_timeout_s": ((int, float), "startup_check_timeout_s"),
    "service.log_level": (str, "log_level"),
    "metrics.enabled": (bool, "metrics_enabled"),
    "metrics.host": (str, "metrics_host"),
    "metrics.port": (int, "metrics_port"),
}
_KAFKA_SCALARS = (
    "bootstrap_servers",
    "group_id",
    "client_id",
    "auto_offset_reset",
    "transactional_id",
)
_KAFKA_MAPS = ("settings", "consumer", "producer")
_ROUTE_KEYS = frozenset(
    {
        "name",
        "source_topics",
        "source_pattern",
        "contract",
        "clean_topic",
        "dlq_topic",
        "on_null_ceiling_breach",
        "max_payload_bytes",
    }
)
_TOP_KEYS = frozenset({"kafka", "batch", "service", "metrics", "routes"})


def load_config(path: str | Path, environ: Mapping[str, str] | None = None) -> ServiceConfig:
    """Read the YAML file, apply SV_* environment overrides, check everything."""
    source = str(path)
    try:
        document = parse_yaml(Path(path).read_text(encoding="utf-8")) or {}
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
        value = yaml.safe_load(raw)
    except yaml.YAMLError:
        return raw
    return value if isinstance(value, str | int | float | bool) else raw


def config_from_mapping(
    document: Mapping[str, Any], *, source: str = "<config>", base_dir: Path | None = None
) -> ServiceConfig:
    """Build and check a ServiceConfig from a parsed document."""
    unknown = sorted(set(document) - _TOP_KEYS)
    if unknown:
        raise ConfigError(f"{source}: unknown top-level key(s): {', '.join(unknown)}")
    kafka = _kafka_section(source, document.get("kafka") or {})
    options: dict[str, Any] = {}
    for section in ("batch", "service", "metrics"):
        values = document.get(section) or {}
        if not isinstance(values, Mapping):
            raise ConfigError(f"{source}: {section} must be a mapping")
        for key, value in values.items():
            dotted = f"{section}.{key}"
            if dotted not in _SERVICE_KEYS:
                raise ConfigError(f"{source}: unknown key {dotted}")
            expected, attr = _SERVICE_KEYS[dotted]
            if not isinstance(value, expected) or (
                isinstance(value, bool) and expected is not bool
            ):
                raise ConfigError(f"{source}: {dotted} has the wrong type ({type(value).__name__})")
            options[attr] = value
    config = ServiceConfig(kafka=kafka, routes=(), source=source, **options)
    routes = _routes(source, document.get("routes"), base_dir or Path.cwd(), config)
    config = ServiceConfig(kafka=kafka, routes=routes, source=source, **options)
    _check_service(config)
    return config


def _kafka_section(source: str, values: object) -> KafkaConfig:
    if not isinstance(values, Mapping):
        raise ConfigError(f"{source}: kafka must be a mapping")
    options: dict[str, Any] = {}
    for key, value in values.items():
        if key in _KAFKA_SCALARS:
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{source}: kafka.{key} must be a non-empty string")
            options[key] = value
        elif key in _KAFKA_MAPS:
            if not isinstance(value, Mapping):
                raise ConfigError(f"{source}: kafka.{key} must be a mapping of librdkafka settings")
            options[key] = {str(k): _librdkafka_value(v) for k, v in value.items()}
        else:
            raise ConfigError(f"{source}: unknown key kafka.{key}")
    return KafkaConfig(**options)


def _librdkafka_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _routes(
    source: str, raw: object, base_dir: Path, config: ServiceConfig
) -> tuple[RouteConfig, ...]:
    if not isinstance(raw, list) or not raw:
        raise ConfigError(f"{source}: routes must be a non-empty list")
    routes = [_route(source, i, item, base_dir, config) for i, item in enumerate(raw)]
    names = [r.name for r in routes]
    for name in names:
        if names.count(name) > 1:
            raise ConfigError(f"{source}: duplicate route name {name!r}")
    _check_disjoint(source, routes)
    sources = {t for r in routes for t in r.source_topics}
    for route in routes:
        for output in (route.clean_topic, route.dlq_topic):
            looping = output in sources or any(r.matches(output) for r in routes)
            if looping:
                raise ConfigError(
                    f"{source}: routes.{route.name}: output topic {output!r} is also a source"
                    " topic (it would be consumed again)"
                )
    return tuple(routes)


def _route(
    source: str, index: int, item: object, base_dir: Path, config: ServiceConfig
) -> RouteConfig:
    where = f"routes[{index}]"
    if not isinstance(item, Mapping):
        raise ConfigError(f"{source}: {where} must be a mapping")
    name = item.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{source}: {where}.name is required")
    if not _ROUTE_NAME.fullmatch(name):
        # It becomes a metric label, a log field and part of DLQ envelopes.
        raise ConfigError(
            f"{source}: {where}.name must be 1-{MAX_ROUTE_NAME_CHARS} characters of"
            f" A-Z a-z 0-9 . _ -, got {name[:MAX_ROUTE_NAME_CHARS]!r}"
        )
    where = f"routes.{name}"
    unknown = sorted(set(item) - _ROUTE_KEYS)
    if unknown:
        raise ConfigError(f"{source}: unknown key(s) {where}.{', '.join(unknown)}")
    for key in ("contract", "clean_topic", "dlq_topic"):
        if not isinstance(item.get(key), str) or not item[key]:
            raise ConfigError(f"{source}: {where}.{key} is required (a string)")
    topics = item.get("source_topics") or []
    pattern = item.get("source_pattern")
    if isinstance(topics, str):
        topics = [topics]
    if not isinstance(topics, list) or not all(isinstance(t, str) and t for t in topics):
        raise ConfigError(f"{source}: {where}.source_topics must be a list of topic names")
    for topic in (*topics, item["clean_topic"], item["dlq_topic"]):
        if not topicpattern.is_legal_topic(topic):
            raise ConfigError(
                f"{source}: {where}: {topic[:250]!r} is not a Kafka topic name"
                " (1-249 characters of A-Z a-z 0-9 . _ -)"
            )
    if bool(topics) == bool(pattern):
        raise ConfigError(f"{source}: {where} needs exactly one of source_topics, source_pattern")
    if pattern is not None:
        if not isinstance(pattern, str):
            raise ConfigError(f"{source}: {where}.source_pattern must be a string")
        try:
            topicpattern.check_pattern(pattern)
        except PatternError as exc:
            raise ConfigError(f"{source}: {where}.source_pattern {exc}") from None
    policy = item.get("on_null_ceiling_breach", "alert")
    if policy not in NULL_POLICIES:
        raise ConfigError(
            f"{source}: {where}.on_null_ceiling_breach must be one of {', '.join(NULL_POLICIES)}"
        )
    limit = config.max_message_bytes - PAYLOAD_HEADROOM_BYTES
    max_payload = item.get("max_payload_bytes", limit)
    if not isinstance(max_payload, int) or isinstance(max_payload, bool) or max_payload <= 0:
        raise ConfigError(f"{source}: {where}.max_payload_bytes must be a positive integer")
    if max_payload > limit:
        raise ConfigError(
            f"{source}: {where}.max_payload_bytes ({max_payload}) must leave"
            f" {PAYLOAD_HEADROOM_BYTES} bytes of service.max_message_bytes"
            " for key and headers"
        )
    contract_path = Path(item["contract"])
    if not contract_path.is_absolute():
        contract_path = base_dir / contract_path
    try:
        contract = load_contract(contract_path)
    except ContractFileError as exc:
        raise ConfigError(f"{source}: {where}.contract: {exc}") from exc
    return RouteConfig(
        name=name,
        contract_path=str(contract_path),
        contract=contract,
        clean_topic=item["clean_topic"],
        dlq_topic=item["dlq_topic"],
        source_topics=tuple(topics),
        source_pattern=pattern,
        on_null_ceiling_breach=policy,
        max_payload_bytes=max_payload,
    )


def _check_disjoint(source: str, routes: list[RouteConfig]) -> None:
    """Refuse routes that could claim one topic: it would be read for one, checked by another."""
    for i, first in enumerate(routes):
        for second in routes[i + 1 :]:
            clash = topicpattern.clash(
                (first.source_topics, first.source_pattern),
                (second.source_topics, second.source_pattern),
            )
            if clash:
                raise ConfigError(
                    f"{source}: routes {first.name} and {second.name} could both match {clash};"
                    " every source topic must belong to exactly one route"
                )


def _check_service(config: ServiceConfig) -> None:
    checks = [
        (config.batch_max_records > 0, "batch.max_records must be > 0"),
        (config.batch_max_records <= 100_000, "batch.max_records must be <= 100000"),
        (config.batch_timeout_s > 0, "batch.timeout_s must be > 0"),
        (config.shutdown_timeout_s > 0, "service.shutdown_timeout_s must be > 0"),
        (
            config.liveness_timeout_s > config.batch_timeout_s,
            "service.liveness_timeout_s must exceed batch.timeout_s",
        ),
        (
            0 < config.retry_backoff_s <= config.retry_backoff_max_s,
            "service.retry_backoff_s must be > 0 and <= service.retry_backoff_max_s",
        ),
        (config.halt_after_failed_batches >= 0, "service.halt_after_failed_batches must be >= 0"),
        (0 <= config.health_port < 65536, "service.health_port must be 0-65535"),
        (0 <= config.metrics_port < 65536, "metrics.port must be 0-65535"),
        (
            config.max_message_bytes > PAYLOAD_HEADROOM_BYTES * 2,
            f"service.max_message_bytes must be > {PAYLOAD_HEADROOM_BYTES * 2}",
        ),
        (
            config.log_level.upper() in ("DEBUG", "INFO", "WARNING", "ERROR"),
            "service.log_level must be DEBUG, INFO, WARNING or ERROR",
        ),
    ]
    for ok, message in checks:
        if not ok:
            raise ConfigError(f"{config.source}: {message}")
