"""``shadow-report``: how a running service's shadow contracts judge records differently.

It reads ``GET /status`` from the service's health port (``--url``, or the health_host and
health_port of ``--config``) and prints its ``shadows`` section: per route the shadow and the
live contract, the records compared, rescued and newly quarantined, the violations of those
by kind and field, the null-ceiling changes, and example source offsets. A table (rich), or
with ``--json`` the section as the service gives it. No proxy, no redirect.
Exit codes: ``errors.ShadowReportExit``.
"""

from __future__ import annotations

import argparse
import http.client
import sys
import urllib.error
import urllib.request
from typing import Any

from stream_validator.cli.argtypes import Subparsers, timeout_seconds
from stream_validator.cli.healthurl import DEFAULT_URL, config_url, url_problem
from stream_validator.codec import decode_json, encode_json
from stream_validator.errors import ConfigError, DecodeError, ShadowReportExit


def add_parser(commands: Subparsers) -> None:
    """Register ``shadow-report`` with the command line."""
    report = commands.add_parser("shadow-report")
    where = report.add_mutually_exclusive_group()
    where.add_argument(
        "--url", metavar="URL", help=f"the service's health server (default: {DEFAULT_URL})"
    )
    where.add_argument(
        "--config", metavar="FILE", help="take the health host and port from this service config"
    )
    report.add_argument("--json", action="store_true", help="print the section as JSON")
    report.add_argument(
        "--timeout", type=timeout_seconds, default=10.0, metavar="S", help="seconds to wait"
    )
    report.set_defaults(run=_report)


def _report(args: argparse.Namespace) -> int:
    base: str = args.url or DEFAULT_URL
    if args.config:
        from stream_validator.config.settings import load_config

        try:
            base = config_url(load_config(args.config))
        except ConfigError as exc:
            print(f"stream-validator: error: {exc}", file=sys.stderr)
            return ShadowReportExit.USAGE
    problem = url_problem(base)
    if problem:
        print(f"stream-validator: error: --url {base!r}: {problem}", file=sys.stderr)
        return ShadowReportExit.USAGE
    shadows = _fetch(f"{base.rstrip('/')}/status", args.timeout)
    if isinstance(shadows, int):
        return shadows
    if args.json:
        sys.stdout.write(encode_json(shadows).decode() + "\n")
    if not shadows:
        print(f"{base}: no route of this service has a shadow_contract", file=sys.stderr)
        return ShadowReportExit.NO_SHADOW
    if not args.json:
        _print_tables(shadows)
    return ShadowReportExit.OK


_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def _fetch(url: str, timeout: float) -> dict[str, Any] | int:
    """The ``shadows`` section of /status, or the exit code after printing why not."""
    try:
        with _OPENER.open(url, timeout=timeout) as response:
            body = response.read()
    except urllib.error.HTTPError as exc:
        print(f"stream-validator: error: {url}: HTTP {exc.code}", file=sys.stderr)
        return ShadowReportExit.UNREACHABLE
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        print(f"stream-validator: error: service unreachable at {url}: {reason}", file=sys.stderr)
        return ShadowReportExit.UNREACHABLE
    except (ValueError, http.client.InvalidURL) as exc:  # a bad port, ...
        print(f"stream-validator: error: --url {url!r}: {exc}", file=sys.stderr)
        return ShadowReportExit.USAGE
    try:
        status = decode_json(body)
    except DecodeError:
        status = None
    if not isinstance(status, dict) or not isinstance(status.get("shadows"), dict):
        print(f"stream-validator: error: {url}: not a stream-validator /status", file=sys.stderr)
        return ShadowReportExit.UNREACHABLE
    return dict(status["shadows"])


def _print_tables(shadows: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    summary = Table(title="Shadow contracts")
    for column in ("route", "shadow", "live", "records", "rescued", "newly quarantined"):
        summary.add_column(column, justify="right" if column[0] in "rn" else "left")
    for route, entry in sorted(shadows.items()):
        same = " (= live)" if entry.get("same_as_live") else ""
        summary.add_row(
            route,
            f"{entry.get('contract')} v{entry.get('version')}{same}",
            f"{entry.get('live_contract')} v{entry.get('live_version')}",
            str(entry.get("records", 0)),
            str(entry.get("rescued", 0)),
            str(entry.get("newly_quarantined", 0)),
        )
    console.print(summary)
    details = Table(title="Differences by kind and field, with example offsets")
    for column in ("route", "difference", "kind", "field", "records"):
        details.add_column(column, justify="right" if column == "records" else "left")
    for route, entry in sorted(shadows.items()):
        for difference, kinds in (entry.get("violations") or {}).items():
            for kind, fields in kinds.items():
                for name, count in fields.items():
                    details.add_row(route, difference, kind, name, str(count))
        for change, fields in (entry.get("null_ceiling_changes") or {}).items():
            for name, count in fields.items():
                details.add_row(route, change, "null_ceiling_breach", name, f"{count} batches")
        for difference, examples in (entry.get("examples") or {}).items():
            where = ", ".join(f"{e['topic']}/{e['partition']}/{e['offset']}" for e in examples)
            if where:
                details.add_row(route, difference, "examples", where, "")
        if entry.get("last_reload_error"):
            details.add_row(route, "reload rejected", "", str(entry["last_reload_error"]), "")
    if details.row_count:
        console.print(details)
    else:
        console.print("No differences.")
