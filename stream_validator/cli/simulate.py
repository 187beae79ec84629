"""``stream-validator simulate``: produce realistic market data, with scheduled vendor drift.

    stream-validator simulate --topic ticks --rate 500 --duration 120 \\
        --scenario field_rename@30s+10s --scenario null_bid_spike@every60s+5s
    python -m stream_validator.cli.simulate --topic t --count 5000 --rate 0 \\
        --seed 7 --scenario garbage@n1000+100 --create-topic --partitions 3

Every message is keyed by symbol and carries a ``sv-sim-scenario`` header ("clean" or the
drift's name). The last stdout line is a JSON summary. Exit codes: ``errors.SimulateExit``.
SIGINT/SIGTERM stop producing and flush; a second one abandons the flush.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final

from stream_validator.cli.argtypes import (
    Subparsers,
    bounded_int,
    partition_count,
    timeout_seconds,
)
from stream_validator.cli.signals import stop_on_signals
from stream_validator.codec import encode_json
from stream_validator.errors import (
    KafkaErrorInfo,
    ScenarioSpecError,
    SimulateExit,
    StreamValidatorError,
)
from stream_validator.kafka.clients import admin_from_settings, producer_from_settings
from stream_validator.sim import SCENARIOS, Entity, ScenarioWindow, Schedule, Simulator, parse_spec
from stream_validator.sim import schedule as spec_grammar
from stream_validator.sim.producer import (
    Limits,
    MessageSource,
    RunResult,
    StopFlag,
    check_topic,
    ensure_topic,
    produce_simulated,
)

DEFAULT_BOOTSTRAP: Final = "127.0.0.1:9092"
# librdkafka's default (300 s) would make a dead broker look like a hang.
DEFAULT_MESSAGE_TIMEOUT_MS: Final = 30_000
_PROG: Final = "stream-validator simulate"
#: Each symbol is an instrument held in memory (10**11 of them took the machine's memory).
MAX_SYMBOLS: Final = 100_000


NAME: Final = "simulate"


def add_parser(commands: Subparsers) -> None:
    """Register ``simulate`` with the command line."""
    grammar = (spec_grammar.__doc__ or "").replace("``", "")
    width = max(map(len, SCENARIOS)) + 2
    scenarios = "\n".join(f"  {s.name:<{width}}{s.summary}" for s in SCENARIOS.values())
    parser = commands.add_parser(
        NAME,
        description="Produce simulated market data (with scheduled vendor drift) to Kafka.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"scenarios:\n{scenarios}\n\nscenario specs (--scenario):\n{grammar}",
    )
    add = parser.add_argument
    add(
        "--bootstrap-servers",
        default=os.environ.get("KAFKA_BOOTSTRAP_SERVERS") or DEFAULT_BOOTSTRAP,
        help=f"the broker: $KAFKA_BOOTSTRAP_SERVERS when set, else {DEFAULT_BOOTSTRAP}",
    )
    add("--topic", required=True)
    add("--entity", choices=[e.value for e in Entity], default=Entity.TICK.value)
    add(
        "--rate",
        type=_non_negative(float),
        default=1000.0,
        help="messages per second, 0: as fast as possible (default: %(default)g)",
    )
    add("--duration", type=_positive(float), metavar="SECONDS", help="stop after this long")
    add("--count", type=_positive(int), metavar="N", help="stop after N messages")
    add(
        "--symbols",
        type=bounded_int(MAX_SYMBOLS),
        default=10,
        metavar="N",
        help=f"at most {MAX_SYMBOLS:,}",
    )
    add(
        "--seed",
        type=int,
        help="fixes the prices and the count windows; event times follow the clock"
        " (default: random, shown in the summary)",
    )
    add(
        "--scenario",
        type=_scenario,
        action="append",
        default=[],
        metavar="SPEC",
        help="NAME[@WINDOW][:FRACTION], repeatable; see below",
    )
    add(
        "--format",
        choices=["json", "avro"],
        default="json",
        help="json (default), or avro: each record written by confluent-kafka's AvroSerializer"
        " under a schema derived from --contract, registered in --schema-registry (what cannot"
        " be written, such as garbage, goes out unframed)",
    )
    add("--schema-registry", metavar="URL", help="with --format avro: the registry's URL")
    add("--contract", metavar="FILE", help="with --format avro: the contract the schema follows")
    add("--create-topic", action="store_true", help="create the topic if it is missing")
    add("--partitions", type=partition_count, metavar="N", help="with --create-topic (default: 1)")
    add(
        "-X",
        dest="extra",
        type=_setting,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="librdkafka setting, repeatable (e.g. -X linger.ms=20)",
    )
    add(
        "--connect-timeout",
        type=timeout_seconds,
        default=10.0,
        metavar="SECONDS",
        help="how long to wait for the broker at start (default: %(default)s)",
    )
    parser.set_defaults(run=run, parser=parser)


def _positive(kind: Callable[[str], float]) -> Callable[[str], float]:
    def parse(text: str) -> float:
        value = _number(kind, text)
        if not value > 0:
            raise argparse.ArgumentTypeError(f"must be > 0, got {text}")
        return value

    return parse


def _non_negative(kind: Callable[[str], float]) -> Callable[[str], float]:
    def parse(text: str) -> float:
        value = _number(kind, text)
        if not value >= 0:
            raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
        return value

    return parse


def _number(kind: Callable[[str], float], text: str) -> float:
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None


def _scenario(text: str) -> ScenarioWindow:
    try:
        return parse_spec(text)
    except ScenarioSpecError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _setting(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key.strip(), value


def main(argv: list[str] | None = None) -> int:
    """``stream-validator simulate ARGS``; return the process exit code."""
    from stream_validator.cli.main import main as cli_main

    return cli_main([NAME, *(sys.argv[1:] if argv is None else argv)])


def run(args: argparse.Namespace) -> int:
    """Run ``stream-validator simulate``; return the process exit code."""
    parser: argparse.ArgumentParser = args.parser
    if args.count is None and args.duration is None:
        parser.error("give --count and/or --duration")
    if args.partitions is not None and not args.create_topic:
        parser.error("--partitions only applies with --create-topic")
    if (args.format == "avro") != bool(args.schema_registry and args.contract):
        parser.error("--format avro goes with --schema-registry and --contract (and only it)")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    extra = dict(args.extra)
    config = _producer_config(args.bootstrap_servers, extra)
    stop = StopFlag()
    # Installed before setup, so a Ctrl-C while waiting for the broker ends the run cleanly.
    with stop_on_signals(stop.request):
        try:
            admin = admin_from_settings(
                {"bootstrap.servers": args.bootstrap_servers, "log_level": 2} | extra
            )
            where, timeout = args.bootstrap_servers, args.connect_timeout
            if args.create_topic:
                ensure_topic(admin, args.topic, args.partitions or 1, timeout, where=where)
            producer = producer_from_settings(config, on_error=_error_reporter(stop))
            check_topic(admin, args.topic, timeout, where=where)
        except StreamValidatorError as exc:  # also a setting librdkafka refused (ConfigError)
            print(f"{_PROG}: error: {exc}", file=sys.stderr)
            return SimulateExit.USAGE
        sim: MessageSource = Simulator(
            args.entity,
            symbols=args.symbols,
            seed=seed,
            schedule=Schedule(tuple(args.scenario)),
            start=datetime.now(UTC),
        )
        if args.format == "avro":
            try:
                sim = _avro_framed(sim, args)
            except (StreamValidatorError, OSError, ValueError) as exc:
                print(f"{_PROG}: error: {exc}", file=sys.stderr)
                return SimulateExit.USAGE
        limits = Limits(count=args.count, duration=args.duration, rate=args.rate)
        flush_timeout = _message_timeout_s(config) + 5.0
        result = produce_simulated(
            producer, args.topic, sim, limits, stop, flush_timeout=flush_timeout
        )
    for error in result.tally.errors:
        print(f"{_PROG}: delivery failed: {error}", file=sys.stderr)
    print(encode_json(_summary(args, seed, result)).decode(), flush=True)
    return SimulateExit.FAILED if result.tally.failed else SimulateExit.OK


def _avro_framed(sim: MessageSource, args: argparse.Namespace) -> MessageSource:
    """The simulator's messages as framed Avro (``sim.framing``)."""
    from stream_validator.config.model import SchemaRegistryConfig
    from stream_validator.contracts import load_contract
    from stream_validator.registry.client import registry_client
    from stream_validator.sim.framing import AvroFramedSimulator

    client = registry_client(SchemaRegistryConfig(url=args.schema_registry))
    return AvroFramedSimulator(sim, load_contract(args.contract), client, args.topic)


def _producer_config(bootstrap: str, extra: dict[str, str]) -> dict[str, Any]:
    """Idempotent, acks=all, a bounded delivery timeout; ``-X`` settings win."""
    config: dict[str, Any] = {
        "bootstrap.servers": bootstrap,
        "client.id": "stream-validator-simulate",
        "enable.idempotence": True,
        "acks": "all",
        "linger.ms": 5,
        # Connection failures reach error_cb, reported once each; -X log_level=6 shows the rest.
        "log_level": 2,
        # Topics are created on purpose (--create-topic), never by a metadata request.
        "allow.auto.create.topics": False,
        # Java-compatible key hashing: a symbol lands where a Java vendor feed would put it.
        "partitioner": "murmur2_random",
    }
    if "delivery.timeout.ms" not in extra:  # an alias: setting both would be ambiguous
        config["message.timeout.ms"] = DEFAULT_MESSAGE_TIMEOUT_MS
    return config | extra


def _message_timeout_s(config: dict[str, Any]) -> float:
    value = config.get("message.timeout.ms", config.get("delivery.timeout.ms"))
    return float(value) / 1000 if value is not None else DEFAULT_MESSAGE_TIMEOUT_MS / 1000


def _summary(args: argparse.Namespace, seed: int, result: RunResult) -> dict[str, object]:
    produced = sum(result.produced.values())
    return {
        "topic": args.topic,
        "entity": args.entity,
        "seed": seed,
        "produced": produced,
        "scenarios": dict(sorted(result.produced.items())),
        "delivered": result.tally.delivered,
        "failed": result.tally.failed,
        "elapsed_s": round(result.elapsed, 3),
        "rate_per_s": round(produced / result.elapsed, 1) if result.elapsed > 0 else None,
        "stopped_by": result.stopped_by,
    }


def _error_reporter(stop: StopFlag) -> Callable[[KafkaErrorInfo], None]:
    """The producer's error callback: report each kind of error once; stop on a fatal one."""
    seen: set[str] = set()

    def on_error(err: KafkaErrorInfo) -> None:
        if err.fatal:
            stop.abort(f"fatal error: {err.reason}")
        if err.code not in seen:
            seen.add(err.code)
            print(f"{_PROG}: kafka: {err.reason}", file=sys.stderr)

    return on_error


if __name__ == "__main__":
    sys.exit(main())
