"""``stream-validator infer``: a draft contract from a JSON-lines file or a topic sample.

    stream-validator infer ticks.jsonl -o tick-draft.yaml
    stream-validator infer --bootstrap 127.0.0.1:9092 --topic ticks --sample 5000 --margin 0.2

The draft (YAML) goes to stdout or ``-o FILE``; the report (records read, lines that are no
record, fields left out and why) to stderr. What a draft holds: ``lifecycle.infer``.
Exit codes (``errors.InferExit``): 0 a draft was written, 1 nothing to draft from (no
record, or no field could be typed), 2 usage, an unreadable file, a bad config or a missing
topic, 3 the broker failed or went quiet.
"""

from __future__ import annotations

import argparse
import sys
from fractions import Fraction
from pathlib import Path

from stream_validator.cli.argtypes import Subparsers
from stream_validator.cli.sampling import (
    add_topic_options,
    check_topic_options,
    sample_chunks,
    source_name,
)
from stream_validator.contracts.check import MAX_NAME_CHARS
from stream_validator.errors import (
    InferExit,
    KafkaClientError,
    ReadStalledError,
    StreamValidatorError,
    TopicAdminError,
)
from stream_validator.lifecycle.draftyaml import left_out_lines, render_draft
from stream_validator.lifecycle.infer import DEFAULT_MARGIN, Draft, InferOptions, infer_contract
from stream_validator.lifecycle.lines import fold, fold_values
from stream_validator.lifecycle.observe import SampleObservations

_PROG = "stream-validator infer"
#: The largest --margin: 10 = bounds at 11 times the observed magnitude.
MAX_MARGIN = 10.0


def margin(text: str) -> Fraction:
    """A fraction from 0 to MAX_MARGIN (0.1 = 10 %), or an argparse error."""
    try:
        value = Fraction(text)
    except (ValueError, ZeroDivisionError):
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 <= value <= MAX_MARGIN:
        raise argparse.ArgumentTypeError(f"must be from 0 to {MAX_MARGIN:g}, got {text}")
    return value


def add_parser(commands: Subparsers) -> None:
    """Register ``infer`` with the command line."""
    parser = commands.add_parser(
        "infer",
        description="Draft a contract from a JSON-lines file or a topic sample.",
        epilog="exit codes: 0 draft written, 1 nothing to draft from, 2 usage/config error or"
        " missing topic, 3 Kafka error",
    )
    add = parser.add_argument
    add("file", nargs="?", metavar="FILE.jsonl", help="one JSON object per line; - = stdin")
    add_topic_options(parser, "--sample")
    add("-o", "--output", metavar="FILE", help="write the draft here instead of stdout")
    add("--name", metavar="NAME", help="the contract's name (default: the file's or topic's)")
    add(
        "--margin",
        type=margin,
        default=str(float(DEFAULT_MARGIN)),
        metavar="FRACTION",
        help="widen observed min/max by this share of their magnitude, and the null ceiling"
        " above the highest null rate",
    )
    add("--no-bounds", action="store_true", help="draft no min_value/max_value/item counts")
    parser.set_defaults(run=run, parser=parser)


def run(args: argparse.Namespace) -> int:
    """Run ``stream-validator infer``; return the exit code."""
    check_topic_options(args.parser, args, args.file)
    source = source_name(args, args.file)
    sample = SampleObservations()
    try:
        number = 1
        for payloads, _ in sample_chunks(args, args.file, "infer"):
            if args.file is not None:  # a file's None is an oversized line
                number = fold(sample, payloads, number)
            else:
                number = fold_values(sample, payloads, number)
    except (TopicAdminError, OSError) as exc:
        return _error(str(exc), InferExit.USAGE)
    except (KafkaClientError, ReadStalledError) as exc:
        return _error(str(exc), InferExit.KAFKA)
    except StreamValidatorError as exc:  # a bad config
        return _error(str(exc), InferExit.USAGE)
    options = InferOptions(
        name=_name(args.name, args.topic if args.file is None else Path(args.file).stem),
        description=f"Drafted from {sample.records} records of {source}",
        margin=args.margin,
        bounds=not args.no_bounds,
    )
    draft = infer_contract(sample, options)
    _report(sample, draft, source)
    if draft.contract is None:
        why = "no field could be typed" if sample.records else "the sample holds no record"
        if draft.problems:
            why = "the draft is malformed: " + "; ".join(draft.problems)
        return _error(f"no draft: {why}", InferExit.NO_DRAFT)
    text = render_draft(draft, source, args.margin)
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            return _error(f"cannot write {args.output}: {exc}", InferExit.USAGE)
        print(f"infer: wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return InferExit.OK


def _name(given: str | None, derived: str | None) -> str:
    for name in (given, derived):
        if name and name.isprintable() and name.strip():
            return name[:MAX_NAME_CHARS]
    return "draft"


def _report(sample: SampleObservations, draft: Draft, source: str) -> None:
    err = sys.stderr
    skipped = sum(sample.skipped.values())
    line = f"infer: {sample.records} records from {source!a}"
    if skipped:
        parts = ", ".join(
            f"{n} {reason} (first: {sample.first_skipped[reason]})"
            for reason, n in sample.skipped.most_common()
        )
        line += f"; {skipped} lines are no record: {parts}"
    print(line, file=err)
    if draft.contract is not None:
        left = len(draft.partial) + len(draft.untyped)
        print(
            f"infer: {len(draft.contract.fields)} top-level fields declared,"
            f" {left} field(s) left out",
            file=err,
        )
    for text in left_out_lines(draft, "infer: "):
        print(text, file=err)


def _error(message: str, code: InferExit) -> int:
    print(f"{_PROG}: error: {message}", file=sys.stderr)
    return code
