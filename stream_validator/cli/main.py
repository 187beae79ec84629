"""The command line: ``stream-validator <command> ...``, one registry of commands.

Each command module registers its subcommands with ``add_parser`` and sets ``run`` on
the parsed arguments; ``main`` parses once and calls it. Only the module of the command
given is imported (the others pull in the Kafka client, the replay, the dev broker); the
top-level ``--help`` imports them all. Every option's help shows its default
(``argtypes.show_defaults``). Exit codes: ``errors.CheckExit`` for
``check-contract``/``validate``/``check-config`` (0 valid, 1 invalid, 2 usage or setup
error); the other commands document theirs (``ServiceExit``, ``ResumeExit``,
``ReplayExit``, ``SimulateExit``).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from stream_validator import __version__
from stream_validator.cli.argtypes import show_defaults
from stream_validator.errors import CheckExit, StreamValidatorError

#: Every command and the module of ``stream_validator.cli`` that registers it, in the order
#: ``--help`` lists them (a test keeps this equal to what the modules register).
COMMANDS: dict[str, str] = {
    "check-contract": "files",
    "validate": "files",
    "run": "service",
    "check-config": "service",
    "create-topics": "service",
    "resume": "resume",
    "simulate": "simulate",
    "dev-kafka": "devkafka",
    "replay": "replay",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line: with a known ``command``, only its module's commands are
    registered; otherwise every command."""
    parser = argparse.ArgumentParser(
        prog="stream-validator",
        description="Validate market-data records against schema contracts.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    wanted = [COMMANDS[command]] if command in COMMANDS else COMMANDS.values()
    for module in dict.fromkeys(wanted):
        importlib.import_module(f"stream_validator.cli.{module}").add_parser(commands)
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
