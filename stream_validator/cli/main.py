"""The command line: ``stream-validator <command> ...``, one registry of commands.

Each command module registers its subcommands with ``add_parser`` and sets ``run`` on
the parsed arguments; ``main`` parses once and calls it. Exit codes: ``errors.CheckExit``
for ``check-contract``/``validate`` (0 valid, 1 invalid, 2 usage or setup error); the other
commands document theirs (``ServiceExit``, ``ResumeExit``, ``ReplayExit``,
``SimulateExit``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from stream_validator import __version__
from stream_validator.cli import devkafka, files, replay, resume, service, simulate
from stream_validator.errors import CheckExit, StreamValidatorError

#: Every command, in the order ``--help`` lists them.
COMMANDS = (files, service, resume, simulate, devkafka, replay)


def build_parser() -> argparse.ArgumentParser:
    """The whole command line, every command registered."""
    parser = argparse.ArgumentParser(
        prog="stream-validator",
        description="Validate market-data records against schema contracts.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``stream-validator`` console script."""
    args = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        return int(args.run(args))
    except (StreamValidatorError, OSError) as exc:
        print(f"stream-validator: error: {exc}", file=sys.stderr)
        return CheckExit.USAGE
