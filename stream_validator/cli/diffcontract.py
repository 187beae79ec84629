"""``stream-validator diff-contract OLD NEW``: every change between two contract versions,
each classified by what it does to records that passed OLD (``lifecycle.diff``).

    stream-validator diff-contract tick-v1.yaml tick-v2.yaml --sample ticks.jsonl
    stream-validator diff-contract old.yaml new.yaml --json --bootstrap 127.0.0.1:9092 --topic ticks

With a sample (``--sample FILE.jsonl``, or ``--topic`` with ``--config``/``--bootstrap``) each
change shows how many sampled records it would flip (``lifecycle.flips``). Exit codes
(``errors.DiffExit``), for CI: 0 no tightening change; 1 at least one tightening change;
3 the contract changed but its ``version`` did not (before 1); 2 usage, a contract file
that does not load, or a sample that cannot be read (before all).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from stream_validator.cli.argtypes import Subparsers
from stream_validator.cli.sampling import add_topic_options, check_topic_options, sample_chunks
from stream_validator.codec import encode_json
from stream_validator.contracts import SchemaContract, load_contract
from stream_validator.errors import DiffExit, StreamValidatorError
from stream_validator.lifecycle.change import Change, Effect, count_effects
from stream_validator.lifecycle.diff import diff_contracts
from stream_validator.lifecycle.flips import FlipCounter, Flips

_PROG = "stream-validator diff-contract"
_MARK = {Effect.TIGHTENING: "TIGHTENING", Effect.LOOSENING: "loosening", Effect.NEUTRAL: "neutral"}


def add_parser(commands: Subparsers) -> None:
    """Register ``diff-contract`` with the command line."""
    parser = commands.add_parser(
        "diff-contract",
        description="Classify every change between two contract versions by what it does to"
        " records that passed OLD: tightening (may newly quarantine), loosening or neutral.",
        epilog="exit codes: 0 no tightening change, 1 a tightening change, 2 usage error or a"
        " malformed contract, 3 the contract changed but its version did not",
    )
    add = parser.add_argument
    add("old", metavar="OLD", help="the contract file now in use")
    add("new", metavar="NEW", help="the candidate contract file")
    add("--json", action="store_true", help="print one JSON object")
    add("--sample", metavar="FILE.jsonl", help="count the records each change would flip")
    add_topic_options(parser, "--sample-records")
    parser.set_defaults(run=run, parser=parser)


def run(args: argparse.Namespace) -> int:
    """Run ``stream-validator diff-contract``; return the exit code."""
    if args.sample is not None or args.topic is not None or args.config or args.bootstrap:
        check_topic_options(args.parser, args, args.sample)
    elif args.sample_size is not None:
        args.parser.error("--sample-records goes with --sample or --topic")
    try:
        old, new = load_contract(args.old), load_contract(args.new)
    except StreamValidatorError as exc:
        return _error(str(exc))
    changes = diff_contracts(old, new)
    flips: Flips | None = None
    if args.sample is not None or args.topic is not None:
        counter = FlipCounter(old, new, changes, args.max_payload_bytes)
        try:
            for payloads, numbers in sample_chunks(args, args.sample, "diff-contract"):
                counter.add(payloads, numbers)
        except (StreamValidatorError, OSError) as exc:
            return _error(f"cannot read the sample: {exc}")
        flips = counter.flips
    code = exit_code(old, new, changes)
    if args.json:
        sys.stdout.write(encode_json(as_dict(old, new, changes, flips, code)).decode() + "\n")
    else:
        sys.stdout.write(render(old, new, changes, flips, code))
    return code


def exit_code(old: SchemaContract, new: SchemaContract, changes: list[Change]) -> DiffExit:
    """3 when something but the version changed and the version did not, else 1 when a
    change is tightening, else 0."""
    if old.version == new.version and changes:
        return DiffExit.VERSION_NOT_BUMPED
    if any(change.effect is Effect.TIGHTENING for change in changes):
        return DiffExit.TIGHTENING
    return DiffExit.OK


def as_dict(
    old: SchemaContract,
    new: SchemaContract,
    changes: list[Change],
    flips: Flips | None,
    code: DiffExit,
) -> dict[str, Any]:
    """The ``--json`` document."""
    listed = []
    for i, change in enumerate(changes):
        entry = change.as_dict()
        if flips is not None:
            entry["sample_flips"] = flips.by_change.get(i, 0)
            entry["sample_examples"] = flips.examples.get(i, [])
        listed.append(entry)
    return {
        "old": {"name": old.name, "version": old.version},
        "new": {"name": new.name, "version": new.version},
        "changes": listed,
        "counts": count_effects(changes),
        "version_bumped": old.version != new.version,
        "sample": flips.as_dict(old, new) if flips is not None else None,
        "exit_code": int(code),
    }


def render(
    old: SchemaContract,
    new: SchemaContract,
    changes: list[Change],
    flips: Flips | None,
    code: DiffExit,
) -> str:
    """The human-readable report."""
    lines = [f"{old.name} v{old.version} -> {new.name} v{new.version}: {len(changes)} change(s)"]
    for i, change in enumerate(changes):
        line = f"  {_MARK[change.effect]:<10} {change.subject}: {change.detail}"
        if flips is not None and change.effect is not Effect.NEUTRAL:
            n = flips.by_change.get(i, 0)
            verb = "newly quarantined" if change.effect is Effect.TIGHTENING else "newly passing"
            line += f" [{n} sampled record(s) {verb}"
            examples = flips.examples.get(i)
            line += f", e.g. line(s) {', '.join(map(str, examples))}]" if examples else "]"
        lines.append(line)
    counts = count_effects(changes)
    lines.append(", ".join(f"{n} {effect}" for effect, n in counts.items()))
    if flips is not None:
        lines.append(
            f"sample: {flips.records} records, {flips.newly_quarantined} newly quarantined,"
            f" {flips.newly_passing} newly passing ({flips.unattributed} not put down to a"
            " change)"
        )
        for label, contract, is_new in (("old", old, False), ("new", new, True)):
            breaches = flips.null_breaches(contract, is_new)
            if breaches:
                shown = ", ".join(f"{p!a} {r:.2f}%" for p, r in sorted(breaches.items()))
                lines.append(
                    f"sample null rates over the {label} ceiling"
                    f" ({contract.max_allowed_null_pct}%): {shown}"
                )
    verdict = {
        DiffExit.OK: "no tightening change",
        DiffExit.TIGHTENING: "tightening: records that passed OLD may be quarantined",
        DiffExit.VERSION_NOT_BUMPED: f"the contract changed but its version ({new.version})"
        " did not",
    }
    lines.append(f"verdict: {verdict[code]} (exit {int(code)})")
    return "\n".join(lines) + "\n"


def _error(message: str) -> int:
    print(f"{_PROG}: error: {message}", file=sys.stderr)
    return DiffExit.USAGE
