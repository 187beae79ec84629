"""A config file's routes: each checked and built, then checked against each other."""

from __future__ import annotations

import re
from pathlib import Path

from stream_validator.config import topicpattern
from stream_validator.config.breaker import breaker_spec_from_mapping
from stream_validator.config.model import RouteConfig, ServiceConfig
from stream_validator.config.schema import PAYLOAD_HEADROOM_BYTES, RouteDoc
from stream_validator.contracts import load_contract
from stream_validator.errors import ConfigError, ContractFileError, PatternError

__all__ = ["MAX_ROUTE_NAME_CHARS", "route_config", "route_problems"]

MAX_ROUTE_NAME_CHARS = 100
_ROUTE_NAME = re.compile(rf"[A-Za-z0-9._-]{{1,{MAX_ROUTE_NAME_CHARS}}}")


def route_config(
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
    shadow_path = base_dir / doc.shadow_contract if doc.shadow_contract is not None else None
    shadow = None
    if shadow_path is not None:
        try:
            shadow = load_contract(shadow_path)
        except ContractFileError as exc:
            problems.extend(f"{at('shadow_contract')}: {exc.path}: {p}" for p in exc.problems)
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
        shadow_contract=shadow,
        shadow_contract_path=str(shadow_path) if shadow_path is not None else None,
    )


def route_problems(routes: tuple[RouteConfig, ...]) -> list[str]:
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
