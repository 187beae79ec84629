"""``stream-validator dev-registry``: run a real local Schema Registry for development and tests.

    start   fetch Apicurio Registry if needed, start it detached on loopback, wait until its
            API answers; the last stdout line is the URL of its Confluent-compatible API
    stop    SIGTERM the registry's process group (SIGKILL after --timeout seconds)
    status  running or not, pid, URL, resident memory; exit 1 when not running
    fetch   only download the registry into the cache

Progress and errors go to stderr, so ``url=$(... start | tail -n1)`` captures the URL.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from stream_validator.cli.argtypes import Subparsers, port_number, timeout_seconds
from stream_validator.cli.devprocess import (
    add_stop_status_fetch,
    say,
    state_dir_option,
    status,
    stop,
)
from stream_validator.devbroker.registry import LocalSchemaRegistry
from stream_validator.devbroker.registryapp import APICURIO_VERSION, fetch_registry_app
from stream_validator.devbroker.registrysettings import DEFAULT_REGISTRY_HEAP
from stream_validator.errors import DevBrokerError

__all__ = ["LocalSchemaRegistry", "main"]

DEFAULT_STATE_DIR = Path(".dev-registry")
NAME = "dev-registry"


def add_parser(commands: Subparsers) -> None:
    """Register ``dev-registry`` with the command line."""
    parser = commands.add_parser(
        NAME,
        description=(
            f"Run a local Apicurio Registry {APICURIO_VERSION} (Confluent-compatible Schema "
            "Registry API, Java 21+, no Docker)."
        ),
    )
    parser.set_defaults(run=run)
    commands = parser.add_subparsers(dest="action", required=True)
    state = state_dir_option(
        DEFAULT_STATE_DIR,
        "registry config, log, pid file (and data with --keep-data)",
    )
    start = commands.add_parser("start", parents=[state], help="start a registry")
    start.add_argument(
        "--port", type=port_number, help="API port (default: the last or a free one)"
    )
    start.add_argument(
        "--management-port", type=port_number, help="health/metrics port (default: as --port)"
    )
    start.add_argument("--heap", default=DEFAULT_REGISTRY_HEAP, help="JVM -Xmx")
    start.add_argument(
        "--timeout", type=timeout_seconds, default=180.0, help="seconds to wait for ready"
    )
    start.add_argument(
        "--keep-data",
        action="store_true",
        help="store schemas in an H2 file under the state dir (kept across restarts) "
        "instead of in memory",
    )
    add_stop_status_fetch(commands, state, "registry", "registry")


def main(argv: list[str] | None = None) -> int:
    """``stream-validator dev-registry ARGS``; return the process exit code."""
    from stream_validator.cli.main import main as cli_main

    return cli_main([NAME, *(sys.argv[1:] if argv is None else argv)])


def run(args: argparse.Namespace) -> int:
    """Run one ``dev-registry`` action; return the process exit code."""
    try:
        if args.action == "fetch":
            print(fetch_registry_app(say=say))
            return 0
        if args.action == "start":
            return _start(args)
        registry = LocalSchemaRegistry(args.state_dir)
        if args.action == "stop":
            return stop(registry, registry.layout.root, "registry", args.timeout)
        return status(registry, registry.layout.root, lambda: f"url={registry.url}")
    except DevBrokerError as exc:
        say(f"error: {exc}")
        return 1


def _start(args: argparse.Namespace) -> int:
    registry = LocalSchemaRegistry(
        args.state_dir,
        port=args.port,
        management_port=args.management_port,
        heap=args.heap,
        startup_timeout=args.timeout,
    )
    if registry.is_running():
        say(f"a registry from {registry.layout.root} is already running (pid {registry.pid})")
        print(registry.url)
        return 0
    fetch_registry_app(registry.version, say=say)
    storage = f"an H2 file in {registry.layout.data_dir}" if args.keep_data else "memory"
    say(f"starting Apicurio Registry {registry.version} in {registry.layout.root} ({storage})")
    began = time.monotonic()
    url = registry.start(keep_data=args.keep_data)
    rss = registry.rss_bytes()
    memory = f", rss {rss / 2**20:.0f} MiB" if rss is not None else ""
    say(
        f"ready in {time.monotonic() - began:.1f}s: pid {registry.pid}{memory}, "
        f"health {registry.management_url}/health/ready, log {registry.layout.log}"
    )
    print(url)
    return 0


if __name__ == "__main__":
    sys.exit(main())
