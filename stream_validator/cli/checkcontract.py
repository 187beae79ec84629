"""``check-contract``: load contract files and say, for each, whether it is valid."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from typing import IO

from stream_validator.cli.argtypes import Subparsers
from stream_validator.contracts import load_contract
from stream_validator.errors import CheckExit, ContractFileError


def add_parser(commands: Subparsers) -> None:
    """Register ``check-contract`` with the command line."""
    check = commands.add_parser("check-contract")
    check.add_argument("files", nargs="+", metavar="FILE")
    check.set_defaults(run=_check)


def _check(args: argparse.Namespace) -> int:
    return check_contract_files(args.files, sys.stdout, sys.stderr)


def check_contract_files(paths: Iterable[str], out: IO[str], err: IO[str]) -> int:
    """Load every contract file; print one line each. Exit status 1 if any is malformed."""
    status = CheckExit.OK
    for path in paths:
        try:
            contract = load_contract(path)
        except ContractFileError as exc:
            print(f"INVALID {exc}", file=err)
            status = CheckExit.INVALID
        else:
            print(
                f"OK {path}: contract {contract.name!r} version {contract.version!r},"
                f" {len(contract.fields)} fields",
                file=out,
            )
    return status
