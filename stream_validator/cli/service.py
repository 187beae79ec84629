"""``run`` (the streaming service) and ``create-topics`` (the topics a config names)."""

from __future__ import annotations

import argparse
import sys

from stream_validator.cli.argtypes import Subparsers, partition_count
from stream_validator.errors import CheckExit, TopicAdminError


def add_parser(commands: Subparsers) -> None:
    """Register ``run`` and ``create-topics`` with the command line."""
    run = commands.add_parser("run", help="run the streaming validator service")
    run.add_argument("--config", required=True, metavar="FILE", help="service YAML config")
    run.set_defaults(run=_run)

    topics = commands.add_parser("create-topics", help="create the topics a service config names")
    topics.add_argument("--config", required=True, metavar="FILE", help="service YAML config")
    topics.add_argument("--partitions", type=partition_count, default=3, metavar="N")
    topics.add_argument(
        "--replication-factor",
        type=int,
        default=-1,
        metavar="N",
        help="default -1: the cluster's default",
    )
    topics.set_defaults(run=_create_topics)


def _run(args: argparse.Namespace) -> int:
    # Imported here: the service pulls in the Kafka client and Prometheus.
    from stream_validator.service.app import run_service

    return run_service(args.config)


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
        error = scrub(str(exc), config.kafka.secrets())
        print(f"stream-validator: error: {error}", file=sys.stderr)
        return CheckExit.INVALID
    for name, what in outcome.items():
        print(f"{what:8} {name}")
    return CheckExit.OK
