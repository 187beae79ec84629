"""argparse value types shared by the commands, and the type of the command registry."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TypeAlias


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


def port_number(text: str) -> int:
    """A TCP port, 1 to 65535, or an argparse error naming the value."""
    return bounded_int(65535)(text)


#: The longest timeout a command takes: a day. An infinite one overflowed the clock
#: (OverflowError), a negative one made librdkafka wait forever, NaN compared as never.
MAX_TIMEOUT_S = 86_400.0


def timeout_seconds(text: str) -> float:
    """A number of seconds, > 0 and at most a day, or an argparse error naming the value."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value <= MAX_TIMEOUT_S:  # NaN too
        raise argparse.ArgumentTypeError(f"must be > 0 and <= {MAX_TIMEOUT_S:g} s, got {text}")
    return value


#: What ``add_subparsers()`` returns; each command's ``add_parser`` registers itself on it.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
