"""``stream-validator dev-kafka``: run a real local Kafka broker for development and tests.

    start   fetch jars if needed, format a fresh data dir (unless --keep-data), start detached,
            wait until it serves metadata; the last stdout line is the bootstrap address
    stop    SIGTERM the broker of the state dir (SIGKILL after --timeout seconds)
    status  running or not, pid, address, resident memory; exit 1 when not running
    fetch   only download the jars into the cache

Progress and errors go to stderr, so ``addr=$(... start | tail -n1)`` captures the address.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from stream_validator.cli.argtypes import Subparsers, port_number, timeout_seconds
from stream_validator.cli.devprocess import (
    add_stop_status_fetch,
    say,
    state_dir_option,
    status,
    stop,
)
from stream_validator.devbroker.broker import LocalKafkaBroker
from stream_validator.devbroker.jars import KAFKA_VERSION, fetch_jars
from stream_validator.devbroker.settings import DEFAULT_HEAP
from stream_validator.errors import DevBrokerError

__all__ = ["DevBrokerError", "LocalKafkaBroker", "main"]

DEFAULT_STATE_DIR = Path(".dev-kafka")


NAME = "dev-kafka"


def add_parser(commands: Subparsers) -> None:
    """Register ``dev-kafka`` with the command line."""
    parser = commands.add_parser(
        NAME,
        description=f"Run a local single-node Apache Kafka {KAFKA_VERSION} broker (no Docker).",
    )
    parser.set_defaults(run=run)
    commands = parser.add_subparsers(dest="action", required=True)
    state = state_dir_option(
        DEFAULT_STATE_DIR,
        "broker config, data, log and pid file",
    )
    start = commands.add_parser("start", parents=[state], help="start a broker")
    start.add_argument("--port", type=port_number, help="client port (default: a free one)")
    start.add_argument("--controller-port", type=port_number, help="KRaft controller port")
    start.add_argument("--heap", default=DEFAULT_HEAP, help="JVM -Xms/-Xmx")
    start.add_argument(
        "--timeout", type=timeout_seconds, default=120.0, help="seconds to wait for ready"
    )
    start.add_argument(
        "--keep-data",
        action="store_true",
        help="restart on the existing data dir and ports instead of formatting afresh",
    )
    add_stop_status_fetch(commands, state, "broker", "broker jars")


def main(argv: list[str] | None = None) -> int:
    """``stream-validator dev-kafka ARGS``; return the process exit code."""
    from stream_validator.cli.main import main as cli_main

    return cli_main([NAME, *(sys.argv[1:] if argv is None else argv)])


def run(args: argparse.Namespace) -> int:
    """Run one ``dev-kafka`` action; return the process exit code."""
    try:
        if args.action == "fetch":
            print(fetch_jars(say=say))
            return 0
        if args.action == "start":
            return _start(args)
        broker = LocalKafkaBroker(args.state_dir)
        if args.action == "stop":
            return stop(broker, broker.layout.root, "broker", args.timeout)
        return status(broker, broker.layout.root, lambda: f"bootstrap={broker.bootstrap_servers}")
    except DevBrokerError as exc:
        say(f"error: {exc}")
        return 1


def _start(args: argparse.Namespace) -> int:
    broker = LocalKafkaBroker(
        args.state_dir,
        port=args.port,
        controller_port=args.controller_port,
        heap=args.heap,
        startup_timeout=args.timeout,
    )
    if broker.is_running():
        say(f"a broker from {broker.layout.root} is already running (pid {broker.pid})")
        print(broker.bootstrap_servers)
        return 0
    fetch_jars(broker.kafka_version, say=say)
    kept = args.keep_data and broker.layout.meta_properties.is_file()
    how = "on its existing data" if kept else "with a freshly formatted data dir"
    say(f"starting Kafka {broker.kafka_version} in {broker.layout.root} {how}")
    bootstrap = broker.start(keep_data=args.keep_data)
    say(f"ready: pid {broker.pid}, log {broker.layout.broker_log}")
    print(bootstrap)
    return 0


if __name__ == "__main__":
    sys.exit(main())
