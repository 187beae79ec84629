"""The command registry: every command registered lazily, every default shown in --help."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

from stream_validator.cli.main import COMMANDS, build_parser


def _parsers(
    parser: argparse.ArgumentParser, name: str = "stream-validator"
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                yield from _parsers(sub, f"{name} {sub_name}")


def _commands(parser: argparse.ArgumentParser) -> list[str]:
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return list(actions[0].choices)


def test_every_default_is_in_the_help_of_its_option() -> None:
    """Each option of each subcommand with a default (not None, False or []) shows it."""
    missing = []
    every = [item for command in COMMANDS for item in _parsers(build_parser(command))]
    for name, parser in every:
        formatter = parser._get_formatter()
        for action in parser._actions:
            if not action.option_strings or action.default in (None, False, [], "==SUPPRESS=="):
                continue
            text = formatter._expand_help(action) if action.help else ""
            if not re.search(r"\(default: [^)]+\)", text) or "None" in text:
                missing.append(f"{name} {action.option_strings[0]}: {text!r}")
    assert missing == []


def test_the_top_level_help_lists_every_command_with_its_line() -> None:
    """Without a command, --help lists every command of COMMANDS with its help line."""
    text = " ".join(build_parser().format_help().split())
    for name, (_, summary) in COMMANDS.items():
        assert f"{name} {summary}" in text


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_command_given_registers_only_its_module(command: str) -> None:
    """With a command named, only the commands of its module are on the parser."""
    module = COMMANDS[command][0]
    assert _commands(build_parser(command)) == [c for c, m in COMMANDS.items() if m[0] == module]


HEAVY = ("stream_validator.replay", "stream_validator.devbroker", "confluent_kafka")


@pytest.mark.parametrize(
    ("command", "unimported"),
    [
        (
            "--help",
            (
                *HEAVY,
                "stream_validator.cli.validate",
                "stream_validator.cli.checkcontract",
                "stream_validator.offline",
            ),
        ),
        ("validate", HEAVY),
        ("infer", HEAVY),  # the Kafka modules only with --topic
        ("diff-contract", HEAVY),
    ],
)
def test_help_and_validate_leave_the_other_commands_unimported(
    command: str, unimported: tuple[str, ...]
) -> None:
    """The top-level --help imports no command module; ``validate``, ``infer`` and
    ``diff-contract`` only their own (no Kafka client)."""
    code = (
        "import sys; from stream_validator.cli.main import build_parser;"
        f" build_parser({command!r}).format_help();"
        f" print(sorted(m for m in sys.modules if m.startswith({unimported!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
