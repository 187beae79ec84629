"""The command line: ``stream-validator <command> ...``.

Exit codes: 0 success (every batch valid), 1 validation failed / malformed
contract, 2 usage or setup error.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path

from stream_validator import __version__
from stream_validator.cli.argtypes import non_negative_int, positive_int
from stream_validator.codec import encode_json
from stream_validator.errors import CheckExit, StreamValidatorError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stream-validator",
        description="Validate market-data records against schema contracts.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = sub.add_parser("check-contract", help="check contract files; exit 1 if any is bad")
    check.add_argument("files", nargs="+", metavar="FILE")

    validate = sub.add_parser("validate", help="validate a JSON-lines file against a contract")
    validate.add_argument("--contract", required=True, metavar="FILE", help="contract YAML file")
    validate.add_argument("input", metavar="INPUT.jsonl", help="one JSON value per line; - = stdin")
    validate.add_argument("--valid-out", metavar="FILE", help="write valid lines here, unchanged")
    validate.add_argument("--dlq-out", metavar="FILE", help="write DLQ entries here (JSON lines)")
    validate.add_argument(
        "--batch-size",
        type=non_negative_int,
        default=0,
        metavar="N",
        help="records per batch for the null ceiling (default 0: whole input)",
    )
    validate.add_argument(
        "--max-payload-bytes",
        type=positive_int,
        default=1_048_576,
        metavar="N",
        help="longer lines are quarantined as oversized",
    )
    validate.add_argument("--json", action="store_true", help="print the summary as JSON")

    run = sub.add_parser("run", help="run the streaming validator service")
    run.add_argument("--config", required=True, metavar="FILE", help="service YAML config")

    topics = sub.add_parser("create-topics", help="create the topics a service config names")
    topics.add_argument("--config", required=True, metavar="FILE", help="service YAML config")
    topics.add_argument("--partitions", type=positive_int, default=3, metavar="N")
    topics.add_argument(
        "--replication-factor",
        type=int,
        default=-1,
        metavar="N",
        help="default -1: the cluster's default",
    )

    for name, text in _DELEGATED.items():
        delegated = sub.add_parser(name, help=text, add_help=False)
        delegated.add_argument("args", nargs=argparse.REMAINDER)
    return parser


# Commands with their own parsers (see their --help); imported only when used.
_DELEGATED = {
    "simulate": "produce simulated market data (with vendor drift) to a topic",
    "dev-kafka": "run a local single-node Kafka broker (development)",
    "replay": "re-validate quarantined DLQ records and send the fixed ones on",
}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``stream-validator`` console script."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["dev-kafka"]:
        from stream_validator.cli.devkafka import main as dev_kafka_main

        return dev_kafka_main(args_list[1:])
    if args_list[:1] == ["simulate"]:
        from stream_validator.cli.simulate import main as simulate_main

        return simulate_main(args_list[1:])
    if args_list[:1] == ["replay"]:
        from stream_validator.cli.replay import main as replay_main

        return replay_main(args_list[1:])
    args = _parser().parse_args(args_list)
    try:
        if args.command == "check-contract":
            from stream_validator.offline import check_contract_files

            return check_contract_files(args.files, sys.stdout, sys.stderr)
        if args.command == "validate":
            return _validate(args)
        if args.command == "create-topics":
            return _create_topics(args)
        if args.command == "run":
            from stream_validator.service.app import run_service

            return run_service(args.config)
    except StreamValidatorError as exc:
        print(f"stream-validator: error: {exc}", file=sys.stderr)
        return CheckExit.USAGE
    except OSError as exc:
        print(f"stream-validator: error: {exc}", file=sys.stderr)
        return CheckExit.USAGE
    raise AssertionError(f"unhandled command {args.command!r}")  # argparse restricts choices


def _validate(args: argparse.Namespace) -> int:
    from stream_validator.contracts import load_contract
    from stream_validator.offline import open_input, render_summary, validate_jsonl
    from stream_validator.verify import DataSchemaContractVerifier

    verifier = DataSchemaContractVerifier(
        load_contract(args.contract), max_payload_bytes=args.max_payload_bytes
    )
    with ExitStack() as stack:
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


def _create_topics(args: argparse.Namespace) -> int:
    from stream_validator.config.settings import load_config
    from stream_validator.kafka.topics import create_topics, topics_of

    config = load_config(args.config)
    try:
        outcome = create_topics(
            config,
            topics_of(config),
            partitions=args.partitions,
            replication_factor=args.replication_factor,
        )
    except RuntimeError as exc:
        print(f"stream-validator: error: {exc}", file=sys.stderr)
        return CheckExit.INVALID
    for name, what in outcome.items():
        print(f"{what:8} {name}")
    return CheckExit.OK
