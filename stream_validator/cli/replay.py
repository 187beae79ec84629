"""``stream-validator replay``: re-validate quarantined DLQ records and send the fixed ones on.

    stream-validator replay --config service.yaml --dlq-topic ticks.dlq \\
        --contract tick-v2.yaml --kind below_min --field price --to clean --dry-run

This module is the command line: its options, their checks (a DLQ topic that is not the
route's, an unknown ``--kind`` or ``--rule``, a target another route owns) and the summary.
The run itself is ``replay.runner``; what happens to each record, ``replay.planner``. What a
replay does, its idempotence, its limits and its exit codes: docs/replay.md.
"""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import IO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

from stream_validator.cli.argtypes import (
    Subparsers,
    non_negative_int,
    positive_int,
    timeout_seconds,
)
from stream_validator.cli.signals import stop_on_signals
from stream_validator.codec import encode_json
from stream_validator.config.settings import (
    PAYLOAD_HEADROOM_BYTES,
    RouteConfig,
    ServiceConfig,
    load_config,
)
from stream_validator.contracts import SchemaContract, load_contract
from stream_validator.errors import ConfigError, ReplayExit, ReplaySetupError, StreamValidatorError
from stream_validator.registry.decoder import route_decoders
from stream_validator.replay.planner import DEFAULT_MAX_REPLAYS, Outcome, Target
from stream_validator.replay.report import ReplaySummary
from stream_validator.replay.runner import DlqReplayer, ReplayJob
from stream_validator.replay.selection import Selection, parse_offset_bound
from stream_validator.verify import DataSchemaContractVerifier, ViolationKind

_PROG = "stream-validator replay"
# The broker's default offset.metadata.max.bytes is 4096; keep room for the framing.
_MAX_SELECTION_BYTES = 3500
#: 9999-12-31T23:59:59.999Z, the last millisecond a datetime holds
_MAX_EPOCH_MS = 253_402_300_799_999
_KINDS = frozenset(str(kind) for kind in ViolationKind)


NAME = "replay"


def add_parser(commands: Subparsers) -> argparse.ArgumentParser:
    """Register ``replay`` with the command line."""
    parser = commands.add_parser(
        NAME,
        description="Re-validate quarantined DLQ records and send the ones that now pass on.",
        epilog="exit codes: 0 all selected records replayed, 1 some not (still failing,"
        " exhausted, held back, unreplayable), 2 usage/config error, 3 Kafka error,"
        " 130 interrupted. Targets, selection, idempotence: docs/replay.md.",
    )
    add = parser.add_argument
    add("--config", required=True, metavar="FILE", help="service YAML config (Kafka settings)")
    add("--dlq-topic", required=True, metavar="TOPIC", help="the DLQ topic to replay")
    add("--route", metavar="NAME", help="(default: the route whose dlq_topic is the DLQ topic)")
    add("--contract", metavar="FILE", help="contract to re-validate with (default: the route's)")
    add("--to", default="clean", metavar="clean|source|TOPIC", help="target")
    add("--from", dest="from_time", metavar="TIME", help="DLQ record timestamp >= TIME (ISO-8601)")
    add("--until", dest="until_time", metavar="TIME", help="DLQ record timestamp < TIME")
    add("--from-offset", action="append", default=[], metavar="[P:]N", help="offset >= N")
    add("--until-offset", action="append", default=[], metavar="[P:]N", help="offset < N")
    add("--kind", action="append", default=[], help="a violation kind (repeatable)")
    add("--field", action="append", default=[], help="a violation field (repeatable)")
    add("--rule", action="append", default=[], metavar="NAME", help="a contract rule (repeatable)")
    add("--source-topic", action="append", default=[], metavar="TOPIC", help="(repeatable)")
    add("--contract-version", action="append", default=[], metavar="V", help="of the envelope")
    add(
        "--max-replays",
        type=non_negative_int,
        default=DEFAULT_MAX_REPLAYS,
        metavar="N",
        help="a record replayed N times already stays in the DLQ, exhausted (default: %(default)s)",
    )
    add("--no-requeue", action="store_true", help="leave still-failing records in place")
    add(
        "--force",
        action="store_true",
        help="allow --to another route's source, clean or DLQ topic, --route with a DLQ topic"
        " not its own, and envelopes without payload_length/payload_sha256",
    )
    add("--dry-run", action="store_true", help="report what would happen; write nothing")
    add("--group", metavar="BASE", help="consumer group base name (see the idempotence notes)")
    add("--batch-size", type=positive_int, default=500, metavar="N", help="records per transaction")
    add(
        "--timeout",
        type=timeout_seconds,
        default=30.0,
        metavar="SECONDS",
        help="per broker request",
    )
    add("--examples", type=non_negative_int, default=3, metavar="N", help="examples per outcome")
    add("--json", action="store_true", help="print the summary as one JSON object")
    parser.set_defaults(run=run)
    return parser


def parse_time_ms(text: str) -> int:
    """ISO-8601 (a naive time is UTC) or epoch milliseconds up to the year 9999; raise
    ValueError."""
    problem = ValueError(f"not an ISO-8601 time or epoch milliseconds: {text!r}")
    if text.isascii() and text.isdigit():
        if (epoch_ms := int(text)) > _MAX_EPOCH_MS:
            raise problem
        return epoch_ms
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise problem from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1000)


def build_job(args: argparse.Namespace) -> ReplayJob:
    """Resolve config, route, contract, target and selection; raise on bad usage."""
    config = load_config(args.config)
    unknown = sorted(set(args.kind) - _KINDS)
    if unknown:
        names = ", ".join(repr(k[:100]) for k in unknown)
        raise ValueError(f"unknown --kind {names}; the kinds are: {', '.join(sorted(_KINDS))}")
    route = _route(config, args.route, args.dlq_topic, force=args.force)
    if args.contract:
        contract = load_contract(args.contract)
    elif route is not None:
        contract = route.contract
    else:
        raise ConfigError(
            f"no route has dlq_topic {args.dlq_topic!r} ({_dlq_topics(config)}):"
            " pass --route, or --contract with --to TOPIC"
        )
    _check_rules(args.rule, contract, route.contract if route is not None else contract)
    target, source_filter = _target(args.to, route, config, args.dlq_topic, force=args.force)
    if source_filter and args.source_topic:
        raise ValueError("--to a source topic already filters by it: use --to source instead")
    from_ms = None if args.from_time is None else parse_time_ms(args.from_time)
    until_ms = None if args.until_time is None else parse_time_ms(args.until_time)
    if from_ms is not None and until_ms is not None and until_ms <= from_ms:
        raise ValueError("--until must be later than --from")
    selection = Selection(
        route=route.name if route is not None else None,
        kinds=frozenset(args.kind),
        fields=frozenset(args.field),
        rules=frozenset(args.rule),
        source_topics=frozenset(args.source_topic) | source_filter,
        contract_versions=frozenset(args.contract_version),
        from_ms=from_ms,
        until_ms=until_ms,
        from_offset=parse_offset_bound(args.from_offset),
        until_offset=parse_offset_bound(args.until_offset),
    )
    if len(selection.encode().encode()) > _MAX_SELECTION_BYTES:
        raise ValueError("the selection is too large to store as commit metadata")
    limit = config.max_message_bytes - PAYLOAD_HEADROOM_BYTES
    verifier = DataSchemaContractVerifier(
        contract, max_payload_bytes=route.max_payload_bytes if route is not None else limit
    )
    return ReplayJob(
        config=config,
        dlq_topic=args.dlq_topic,
        selection=selection,
        verifier=verifier,
        target=target,
        group_base=args.group or f"stream-validator-replay.{args.dlq_topic}.{target.label}",
        max_replays=args.max_replays,
        requeue=not args.no_requeue,
        dry_run=args.dry_run,
        allow_unchecked=args.force,
        batch_size=args.batch_size,
        timeout_s=args.timeout,
        max_examples=args.examples,
        # A registry route's originals are decoded as the service decodes them.
        decode=(
            route_decoders([route], config.schema_registry)[route.name].decode
            if route is not None and route.format != "json"
            else None
        ),
    )


def _check_rules(names: Sequence[str], contract: SchemaContract, route: SchemaContract) -> None:
    """``--rule``: names of the route's contract rules or of ``--contract``'s."""
    known = {rule.name for rule in (*route.rules, *contract.rules)}
    unknown = sorted(set(names) - known)
    if unknown:
        shown = ", ".join(repr(name[:100]) for name in unknown)
        rules = ", ".join(sorted(known)) if known else "none"
        which = repr(route.name) if route is contract else f"{route.name!r} or {contract.name!r}"
        raise ValueError(f"unknown --rule {shown}; the rules of contract {which} are: {rules}")


def _route(
    config: ServiceConfig, name: str | None, dlq_topic: str, *, force: bool
) -> RouteConfig | None:
    if name is not None:
        route = next((r for r in config.routes if r.name == name), None)
        if route is None:
            raise ConfigError(f"{config.source}: no route named {name!r}")
        if route.dlq_topic != dlq_topic and not force:
            # Its selection keeps only this route's envelopes: anything else would filter
            # every record out and exit 0 having replayed nothing.
            raise ConfigError(
                f"route {name!r} quarantines to {route.dlq_topic!r}, not {dlq_topic!r}"
                f" ({_dlq_topics(config)}); pass --force to replay that topic anyway"
            )
        return route
    matching = [r for r in config.routes if r.dlq_topic == dlq_topic]
    if len(matching) > 1:
        names = ", ".join(r.name for r in matching)
        raise ConfigError(f"routes {names} all quarantine to {dlq_topic!r}: pass --route")
    return matching[0] if matching else None


def _dlq_topics(config: ServiceConfig) -> str:
    topics = sorted({r.dlq_topic for r in config.routes})
    return "the routes' DLQ topics: " + (", ".join(topics) or "none")


def _target(
    spec: str, route: RouteConfig | None, config: ServiceConfig, dlq_topic: str, *, force: bool
) -> tuple[Target, frozenset[str]]:
    """The target, and a source-topic filter it implies (``--to`` one source topic)."""
    if spec == dlq_topic:
        raise ConfigError("--to cannot be the DLQ topic itself (still-failing records go there)")
    if spec == "clean" or (route is not None and spec == route.clean_topic):
        if route is None:
            raise ConfigError("--to clean needs a route (--route): its clean topic is the target")
        return Target("clean", route.clean_topic), frozenset()
    if spec == "source" or (route is not None and route.matches(spec)):
        if route is None:
            raise ConfigError("--to source needs a route (--route): its source topics")
        # Always taken from the config, never from the envelopes alone.
        target = Target("source", None, frozenset(route.source_topics), route.source_pattern)
        only = route.source_topics == (spec,) and route.source_pattern is None
        return target, frozenset() if spec == "source" or only else frozenset({spec})
    others = [other for other in config.routes if other is not route]
    if not force and any(
        spec in (other.clean_topic, other.dlq_topic) or other.matches(spec) for other in others
    ):
        # Its records would be validated by that route's contract, quarantined to its DLQ
        # and counted against its breaker (the route's own clean topic was handled above).
        raise ConfigError(
            f"--to {spec!r} is another route's source, clean or DLQ topic;"
            " pass --force to send there"
        )
    return Target("topic", spec), frozenset()


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line (argparse exits with code 2 on bad usage)."""
    parser = argparse.ArgumentParser(prog="stream-validator")
    add_parser(parser.add_subparsers(required=True))
    return parser.parse_args([NAME, *(sys.argv[1:] if argv is None else argv)])


def main(argv: Sequence[str] | None = None) -> int:
    """``stream-validator replay ARGS``; return the process exit code."""
    from stream_validator.cli.main import main as cli_main

    return cli_main([NAME, *(sys.argv[1:] if argv is None else argv)])


def run(args: argparse.Namespace) -> int:
    """Run ``stream-validator replay``; return the process exit code."""
    try:
        job = build_job(args)
    except (StreamValidatorError, ValueError, OSError) as exc:
        print(f"{_PROG}: error: {exc}", file=sys.stderr)
        return ReplayExit.USAGE
    stop = threading.Event()
    bar = _ProgressBar(sys.stderr) if sys.stderr.isatty() else None
    with stop_on_signals(stop.set):
        try:
            summary = DlqReplayer(job, progress=bar.update if bar else None, stop=stop).run()
        except (ReplaySetupError, ConfigError) as exc:
            print(f"{_PROG}: error: {exc}", file=sys.stderr)
            return ReplayExit.USAGE
        finally:
            if bar is not None:
                bar.close()
    if args.json:
        print(encode_json(summary.as_dict()).decode(), flush=True)
    else:
        print(summary.render(), flush=True)
    if summary.error is not None:
        print(f"{_PROG}: error: {summary.error}", file=sys.stderr)
    return summary.exit_code()


class _ProgressBar:
    """A live progress line on a terminal (rich), with the passing and failing counts."""

    def __init__(self, stream: IO[str]) -> None:
        self._progress = Progress(
            TextColumn("replay"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("passed {task.fields[passed]}  still failing {task.fields[failing]}"),
            console=Console(file=stream),
        )
        self._task = self._progress.add_task("replay", total=None, passed=0, failing=0)
        self._progress.start()

    def update(self, done: int, total: int, summary: ReplaySummary) -> None:
        self._progress.update(
            self._task,
            completed=done,
            total=total,
            passed=summary.outcomes[summary.name(Outcome.PASSED)],
            failing=summary.outcomes[str(Outcome.STILL_FAILING)],
        )

    def close(self) -> None:
        self._progress.stop()
