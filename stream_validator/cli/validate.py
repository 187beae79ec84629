"""``validate``: a JSON-lines file against a contract, no Kafka (``stream_validator.offline``)."""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from pathlib import Path

from stream_validator.cli.argtypes import Subparsers, non_negative_int, positive_int
from stream_validator.codec import encode_json
from stream_validator.contracts import load_contract
from stream_validator.errors import CheckExit
from stream_validator.gcpolicy import collector_tuned
from stream_validator.offline import open_input, render_summary, validate_jsonl
from stream_validator.verify import DataSchemaContractVerifier


def add_parser(commands: Subparsers) -> None:
    """Register ``validate`` with the command line."""
    validate = commands.add_parser("validate")
    validate.add_argument("--contract", required=True, metavar="FILE", help="contract YAML file")
    validate.add_argument("input", metavar="INPUT.jsonl", help="one JSON value per line; - = stdin")
    validate.add_argument(
        "--valid-out", metavar="FILE", help="write valid lines here, unchanged (CRLF endings as LF)"
    )
    validate.add_argument("--dlq-out", metavar="FILE", help="write DLQ entries here (JSON lines)")
    validate.add_argument(
        "--batch-size",
        type=non_negative_int,
        default=0,
        metavar="N",
        help="records per batch for the null ceiling, 0: the whole input",
    )
    validate.add_argument(
        "--max-payload-bytes",
        type=positive_int,
        default=1_048_576,
        metavar="N",
        help="longer lines are quarantined as oversized",
    )
    validate.add_argument("--json", action="store_true", help="print the summary as JSON")
    validate.set_defaults(run=_validate)


def _validate(args: argparse.Namespace) -> int:
    verifier = DataSchemaContractVerifier(
        load_contract(args.contract), max_payload_bytes=args.max_payload_bytes
    )
    with ExitStack() as stack:
        stack.enter_context(collector_tuned())  # a long loop of short-lived containers
        source = (
            stack.enter_context(open_input(args.input)) if args.input != "-" else open_input("-")
        )
        valid_out = stack.enter_context(Path(args.valid_out).open("wb")) if args.valid_out else None
        dlq_out = stack.enter_context(Path(args.dlq_out).open("wb")) if args.dlq_out else None
        summary = validate_jsonl(
            verifier,
            source,
            batch_size=args.batch_size,
            valid_out=valid_out,
            dlq_out=dlq_out,
            progress=sys.stderr if sys.stderr.isatty() else None,
        )
    if args.json:
        sys.stdout.write(encode_json(summary.as_dict()).decode() + "\n")
    else:
        print(render_summary(summary))
    return CheckExit.OK if summary.is_valid else CheckExit.INVALID
