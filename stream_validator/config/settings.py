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
this module adds the defaults (the dataclasses of ``model``, re-exported here), the
overrides and the rules between keys (``keyrules``; a route's, ``routes``). Every error
names the file and the path (``routes[1].contract (route 'books')``) and lists every
problem found, one per line: every key's problem, else every problem of the rules between
keys, else every route's problems (its contract's too) and the clashes between routes.
Values of secret keys never appear in messages.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from stream_validator.config.envvars import ENV_PREFIX as ENV_PREFIX  # re-exported
from stream_validator.config.envvars import KAFKA_MAPS as _KAFKA_MAPS
from stream_validator.config.envvars import apply_env_overrides as apply_env_overrides
from stream_validator.config.envvars import merge_env_overrides
from stream_validator.config.keyrules import (
    check_producer_queue,
    check_service,
    check_transaction_timeouts,
    registry_problems,
)
from stream_validator.config.model import DEFAULT_MAX_IN_FLIGHT_RECORDS
from stream_validator.config.model import KafkaConfig as KafkaConfig
from stream_validator.config.model import RouteConfig as RouteConfig
from stream_validator.config.model import SchemaRegistryConfig as SchemaRegistryConfig
from stream_validator.config.model import ServiceConfig as ServiceConfig
from stream_validator.config.redaction import redacted as redacted  # re-exported
from stream_validator.config.redaction import scrub as scrub  # re-exported
from stream_validator.config.routes import route_config, route_problems
from stream_validator.config.schema import DEFAULT_MAX_MESSAGE_BYTES as DEFAULT_MAX_MESSAGE_BYTES
from stream_validator.config.schema import PAYLOAD_HEADROOM_BYTES as PAYLOAD_HEADROOM_BYTES
from stream_validator.config.schema import ConfigDoc
from stream_validator.errors import ConfigError, YamlFileError, problem_listing
from stream_validator.yamlfile import decode_all, parse_yaml, read_text_file


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
    problems = merge_env_overrides(document, os.environ if environ is None else environ)
    return config_from_mapping(
        document, source=source, base_dir=Path(path).resolve().parent, env_problems=problems
    )


def config_from_mapping(
    document: Mapping[str, Any],
    *,
    source: str = "<config>",
    base_dir: Path | None = None,
    env_problems: Sequence[str] = (),
) -> ServiceConfig:
    """Build and check a ServiceConfig from a parsed document. ``env_problems``: the SV_*
    variables that could not be applied, listed first with every key's problem."""
    # A section written with nothing under it (``kafka:``) keeps its defaults.
    given = {key: value for key, value in document.items() if value is not None}
    try:
        doc = decode_all(given, ConfigDoc)
    except YamlFileError as exc:
        listed = [*env_problems, *exc.problems]
        raise ConfigError(f"{source}: {problem_listing(listed)}") from None
    if env_problems:
        raise ConfigError(f"{source}: {problem_listing(env_problems)}")
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
    registry: dict[str, Any] = doc.schema_registry.given()
    config = ServiceConfig(
        kafka=KafkaConfig(**kafka),
        routes=(),
        source=source,
        schema_registry=SchemaRegistryConfig(**registry),
        **options,
    )
    check_transaction_timeouts(config)
    check_service(config)
    check_producer_queue(config)
    base = base_dir or Path.cwd()
    if config.resume_token_file is not None:  # relative to the config file, like contracts
        config = replace(config, resume_token_file=str(base / config.resume_token_file))
    problems: list[str] = []
    built = [route_config(config, i, route, base, problems) for i, route in enumerate(doc.routes)]
    routes = tuple(route for route in built if route is not None)
    problems.extend(route_problems(routes))
    problems.extend(registry_problems(config.schema_registry, routes))
    if problems:
        raise ConfigError(f"{source}: {problem_listing(problems)}")
    return replace(config, routes=routes)


def _librdkafka_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


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
