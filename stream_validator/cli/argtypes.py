"""argparse value types shared by the commands, and the type of the command registry."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeAlias

from stream_validator.config.schema import MAX_SECONDS


def non_negative_int(text: str) -> int:
    """An integer >= 0, or an argparse error naming the bad value."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {value}")
    return value


def positive_int(text: str) -> int:
    """An integer > 0, or an argparse error naming the bad value."""
    value = non_negative_int(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be > 0")
    return value


def bounded_int(most: int) -> Callable[[str], int]:
    """An integer from 1 to ``most``, or an argparse error naming the value."""

    def parse(text: str) -> int:
        value = positive_int(text)
        if value > most:
            raise argparse.ArgumentTypeError(f"must be at most {most:,}, got {value}")
        return value

    return parse


#: librdkafka's own range for a new topic's partitions (past it: a ValueError traceback)
partition_count = bounded_int(100_000)


#: A TCP port, 1 to 65535
port_number = bounded_int(65535)


def timeout_seconds(text: str) -> float:
    """A number of seconds, > 0 and at most a day (``MAX_SECONDS``, as every duration of
    the config), or an argparse error naming the value. An infinite timeout overflowed the
    clock, a negative one made librdkafka wait forever, and NaN compared as never."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value <= MAX_SECONDS:  # NaN too
        raise argparse.ArgumentTypeError(f"must be > 0 and <= {MAX_SECONDS} s, got {text}")
    return value


def show_defaults(parser: argparse.ArgumentParser) -> None:
    """End every option's help with ``(default: X)`` in ``parser`` and its subcommands,
    unless the option has no default (None, False, an empty list) or its help already
    shows it with ``%(default)``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                show_defaults(sub)
            continue
        default, text = action.default, action.help or ""
        if (
            not action.option_strings
            or default is None
            or default is False
            or default == []
            or default == argparse.SUPPRESS
            or "%(default)" in text
        ):
            continue
        action.help = f"{text} (default: %(default)s)".lstrip()


#: What ``add_subparsers()`` returns; each command's ``add_parser`` registers itself on it.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
