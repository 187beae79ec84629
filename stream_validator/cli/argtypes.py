"""argparse value types shared by the commands, and the type of the command registry."""

from __future__ import annotations

import argparse
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


#: What ``add_subparsers()`` returns; each command's ``add_parser`` registers itself on it.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
