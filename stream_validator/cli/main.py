"""The command line: ``stream-validator <command> ...``, one registry of commands.

Each command module registers its subcommands with ``add_parser`` and sets ``run`` on
the parsed arguments; ``main`` parses once and calls it. Only the module of the command
given is imported (the others pull in the Kafka client, the replay, the dev broker); the
top-level ``--help`` lists ``COMMANDS`` without importing any. Every option's help shows its default
(``argtypes.show_defaults``). Exit codes: the IntEnums of ``errors`` (``CheckExit``,
``ServiceExit``, ``ResumeExit``, ``ReplayExit``, ``SimulateExit``, ``InferExit``,
``DiffExit``, ``FromRegistryExit``, ``ShadowReportExit``), whose comments the docs' exit-code
tables are generated from.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from stream_validator import __version__
from stream_validator.cli.argtypes import show_defaults
from stream_validator.errors import CheckExit, StreamValidatorError

#: Every command: the module of ``stream_validator.cli`` that registers it and the line
#: ``--help`` shows, in the order ``--help`` lists them (a test keeps the modules equal).
COMMANDS: dict[str, tuple[str, str]] = {
    "check-contract": ("checkcontract", "check contract files; exit 1 if any is bad"),
    "validate": ("validate", "validate a JSON-lines file against a contract"),
    "run": ("service", "run the streaming validator service"),
    "check-config": (
        "service",
        "check a service config and its contracts (--connect: and its topics)",
    ),
    "create-topics": ("service", "create the topics a service config names"),
    "resume": ("resume", "close a route's DLQ circuit breaker on a running service"),
    "shadow-report": (
        "shadowreport",
        "show how the shadow contracts of a running service judge records differently",
    ),
    "simulate": ("simulate", "produce simulated market data (with vendor drift) to a topic"),
    "dev-kafka": ("devkafka", "run a local single-node Kafka broker (development)"),
    "dev-registry": (
        "devregistry",
        "run a local Schema Registry, Apicurio, Confluent-compatible (development)",
    ),
    "replay": ("replay", "re-validate quarantined DLQ records and send the fixed ones on"),
    "infer": ("infer", "draft a contract from a JSON-lines file or a topic sample"),
    "contract": (
        "fromregistry",
        "contract from-registry: a contract file from a Schema Registry subject",
    ),
    "diff-contract": (
        "diffcontract",
        "classify the changes between two contract versions (exit 1: tightening)",
    ),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line: with a known ``command``, its module's commands; otherwise every
    command's name and help line only (enough for ``--help`` and usage errors)."""
    parser = argparse.ArgumentParser(
        prog="stream-validator",
        description="Validate market-data records against schema contracts.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    if command in COMMANDS:
        module = importlib.import_module(f"stream_validator.cli.{COMMANDS[command][0]}")
        module.add_parser(commands)
    else:
        for name, (_, summary) in COMMANDS.items():
            commands.add_parser(name, help=summary, add_help=False)
    show_defaults(parser)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``stream-validator`` console script."""
    given = list(sys.argv[1:] if argv is None else argv)
    args = build_parser(given[0] if given else None).parse_args(given)
    try:
        return int(args.run(args))
    except (StreamValidatorError, OSError) as exc:
        print(f"stream-validator: error: {exc}", file=sys.stderr)
        return CheckExit.USAGE
