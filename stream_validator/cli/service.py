"""``run`` (the streaming service), ``check-config`` (the config, its contracts and, with
``--connect``, its topics and schema registry) and ``create-topics`` (the topics a config names)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from stream_validator.cli.argtypes import Subparsers, partition_count, timeout_seconds
from stream_validator.errors import CheckExit, RegistryUnavailableError, TopicAdminError

if TYPE_CHECKING:
    from stream_validator.config.settings import RouteConfig, ServiceConfig


def add_parser(commands: Subparsers) -> None:
    """Register ``run`` and ``create-topics`` with the command line."""
    run = commands.add_parser("run")
    run.add_argument("--config", required=True, metavar="FILE", help="service YAML config")
    run.set_defaults(run=_run)

    check = commands.add_parser(
        "check-config",
        description="Load the config and every route's contract and list every problem"
        " (exit 2); print a summary of the routes when there is none (exit 0).",
    )
    check.add_argument("config", metavar="FILE", help="service YAML config")
    check.add_argument(
        "--connect",
        action="store_true",
        help="also connect to the broker and check that every source, clean and DLQ topic"
        " exists (topics matching a source_pattern are not checked), and, when a route has a"
        " registry format, that the schema registry answers and accepts the credentials",
    )
    check.add_argument(
        "--timeout",
        type=timeout_seconds,
        default=10.0,
        metavar="SECONDS",
        help="how long --connect waits for the broker (and for each registry request)",
    )
    check.set_defaults(run=_check_config)

    topics = commands.add_parser("create-topics")
    topics.add_argument("--config", required=True, metavar="FILE", help="service YAML config")
    topics.add_argument(
        "--partitions", type=partition_count, default=3, metavar="N", help="for each new topic"
    )
    topics.add_argument(
        "--replication-factor",
        type=int,
        default=-1,
        metavar="N",
        help="-1: the cluster's default",
    )
    topics.set_defaults(run=_create_topics)


def _run(args: argparse.Namespace) -> int:
    # Imported here: the service pulls in the Kafka client and Prometheus.
    from stream_validator.service.app import run_service

    return run_service(args.config)


def _check_config(args: argparse.Namespace) -> int:
    from stream_validator.config.settings import load_config
    from stream_validator.kafka.topics import topics_of

    config = load_config(args.config)  # a ConfigError lists every problem (exit 2)
    topics = topics_of(config)
    print(f"OK {args.config}: {len(config.routes)} route(s), {len(topics)} topic(s)")
    for route in config.routes:
        print(f"  {_describe(route)}")
    if not args.connect:
        return CheckExit.OK
    broker_ok = _check_topics(config, args, len(topics))
    registry_ok = _check_registry(config, args.timeout)
    return CheckExit.OK if broker_ok and registry_ok else CheckExit.USAGE


def _check_topics(config: ServiceConfig, args: argparse.Namespace, count: int) -> bool:
    """``--connect``: every configured topic exists on the broker (says why not)."""
    from stream_validator.config.settings import scrub
    from stream_validator.kafka.clients import create_admin
    from stream_validator.kafka.topics import missing_topics

    where = f"Kafka at {config.kafka.bootstrap_servers}"
    try:
        # log_level 2: librdkafka's connection errors repeat every 50 ms until the timeout;
        # the one error below says what failed.
        admin = create_admin(config, {"log_level": 2})
        missing = missing_topics(admin, config, timeout_s=args.timeout, where=where)
    except TopicAdminError as exc:
        error = scrub(str(exc), config.secrets())
        print(f"stream-validator: error: {error}", file=sys.stderr)
        return False
    if missing:
        error = (
            f"{where}: {len(missing)} of {count} topic(s) missing: {', '.join(missing)}"
            f" (create them with: stream-validator create-topics --config {args.config})"
        )
        print(f"stream-validator: error: {scrub(error, config.secrets())}", file=sys.stderr)
        return False
    print(f"OK {scrub(where, config.secrets())}: all {count} topic(s) exist")
    return True


def _check_registry(config: ServiceConfig, timeout_s: float) -> bool:
    """``--connect``: the schema registry answers, credentials accepted, when a route has a
    registry format (nothing to check otherwise)."""
    formats = sorted({route.format for route in config.routes} - {"json"})
    if not formats or config.schema_registry.url is None:
        return True
    from stream_validator.config.settings import scrub
    from stream_validator.registry.client import check_registry

    where = f"the schema registry at {config.schema_registry.url}"
    try:
        subjects = check_registry(config.schema_registry, timeout_s=timeout_s)
    except RegistryUnavailableError as exc:
        error = scrub(f"{where} {exc}", config.secrets())
        print(f"stream-validator: error: {error}", file=sys.stderr)
        return False
    print(
        scrub(
            f"OK {where}: answers, {subjects} subject(s) (for {', '.join(formats)} routes)",
            config.secrets(),
        )
    )
    return True


def _describe(route: RouteConfig) -> str:
    """One line per route: sources -> clean topic, DLQ topic, contract."""
    sources = ", ".join(route.source_topics) or f"pattern {route.source_pattern!r}"
    contract = route.contract
    return (
        f"{route.name}: {sources} -> {route.clean_topic} (DLQ {route.dlq_topic});"
        f" contract {contract.name!r} version {contract.version!r},"
        f" {len(contract.fields)} field(s), {len(contract.rules)} rule(s)"
    )


def _create_topics(args: argparse.Namespace) -> int:
    from stream_validator.config.settings import load_config, scrub
    from stream_validator.kafka.clients import create_admin
    from stream_validator.kafka.topics import create_topics, topics_of

    config = load_config(args.config)
    try:
        outcome = create_topics(
            create_admin(config),
            topics_of(config),
            partitions=args.partitions,
            replication_factor=args.replication_factor,
            where=f"Kafka at {config.kafka.bootstrap_servers}",
        )
    except TopicAdminError as exc:
        error = scrub(str(exc), config.secrets())
        print(f"stream-validator: error: {error}", file=sys.stderr)
        return CheckExit.INVALID
    for name, what in outcome.items():
        print(f"{what:8} {name}")
    return CheckExit.OK
