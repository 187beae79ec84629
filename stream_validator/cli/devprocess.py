"""What ``dev-kafka`` and ``dev-registry`` share: the ``--state-dir`` option, the ``stop``,
``status`` and ``fetch`` actions, and progress on stderr (stdout carries only the address)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from stream_validator.cli.argtypes import Subparsers, timeout_seconds
from stream_validator.devbroker.javaprocess import LocalJavaProcess


def state_dir_option(default: Path, help_text: str) -> argparse.ArgumentParser:
    """The ``--state-dir`` option, as a parent parser of every action that needs it."""
    state = argparse.ArgumentParser(add_help=False)
    state.add_argument("--state-dir", type=Path, default=default, help=help_text)
    return state


def add_stop_status_fetch(
    commands: Subparsers, state: argparse.ArgumentParser, what: str, fetched: str
) -> None:
    """The ``stop``, ``status`` and ``fetch`` actions of ``what`` (a broker, a registry)."""
    stop = commands.add_parser("stop", parents=[state], help=f"stop the {what}")
    stop.add_argument(
        "--timeout", type=timeout_seconds, default=30.0, help="seconds before SIGKILL"
    )
    commands.add_parser("status", parents=[state], help=f"is the {what} running?")
    commands.add_parser("fetch", help=f"download the {fetched} into the cache only")


def stop(process: LocalJavaProcess, root: Path, what: str, timeout: float) -> int:
    """``stop``: exit 0 whether it was running or not."""
    pid = process.pid
    if pid is None:
        say(f"no {what} running from {root}")
        return 0
    process.stop(timeout)
    say(f"stopped {what} pid {pid}")
    return 0


def status(process: LocalJavaProcess, root: Path, address: Callable[[], str]) -> int:
    """``status``: one line on stdout; exit 1 when not running. ``address()`` gives
    ``name=value`` of where it serves (asked only while it runs)."""
    pid = process.pid
    if pid is None:
        print(f"not running (state dir {root})")
        return 1
    rss = process.rss_bytes()
    memory = f" rss={rss / 2**20:.0f}MiB" if rss is not None else ""
    print(f"running pid={pid} {address()}{memory}")
    return 0


def say(message: str) -> None:
    """Progress and errors: stderr, so stdout's last line is the address."""
    print(message, file=sys.stderr, flush=True)
