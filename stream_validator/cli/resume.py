"""``resume``: close a route's DLQ circuit breaker on a running service.

It calls ``POST /breaker/resume?route=NAME`` on the service's health port (``--url``, or the
health_host/health_port of ``--config``). Exit codes: ``errors.ResumeExit``.
"""

from __future__ import annotations

import argparse
import http.client
import sys
import urllib.error
import urllib.request
from urllib.parse import quote

from stream_validator.cli.argtypes import Subparsers, timeout_seconds
from stream_validator.codec import decode_json
from stream_validator.errors import DecodeError, ResumeExit

DEFAULT_URL = "http://127.0.0.1:8080"
_ANSWERS = {
    200: ResumeExit.OK,
    202: ResumeExit.PENDING,
    400: ResumeExit.USAGE,
    404: ResumeExit.UNKNOWN_ROUTE,
}


def add_parser(commands: Subparsers) -> None:
    """Register ``resume`` with the command line."""
    resume = commands.add_parser(
        "resume", help="close a route's DLQ circuit breaker on a running service"
    )
    resume.add_argument("--route", required=True, metavar="NAME", help="the route to resume")
    where = resume.add_mutually_exclusive_group()
    where.add_argument(
        "--url", metavar="URL", help=f"the service's health server (default {DEFAULT_URL})"
    )
    where.add_argument(
        "--config", metavar="FILE", help="take the health host and port from this service config"
    )
    resume.add_argument(
        "--timeout", type=timeout_seconds, default=10.0, metavar="S", help="default 10"
    )
    resume.set_defaults(run=_resume)


def _resume(args: argparse.Namespace) -> int:
    base = args.url or DEFAULT_URL
    if args.config:
        from stream_validator.config.settings import load_config

        config = load_config(args.config)
        # A server listening on every interface is reached on this host through loopback.
        host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(config.health_host, config.health_host)
        base = f"http://[{host}]" if ":" in host else f"http://{host}"
        base += f":{config.health_port}"
    url = f"{base.rstrip('/')}/breaker/resume?route={quote(args.route, safe='')}"
    try:
        request = urllib.request.Request(url, data=b"", method="POST")
        with urllib.request.urlopen(request, timeout=args.timeout) as response:
            code, body = response.status, response.read()
    except urllib.error.HTTPError as exc:
        code, body = exc.code, exc.read()
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        print(f"stream-validator: error: service unreachable at {base}: {reason}", file=sys.stderr)
        return ResumeExit.UNREACHABLE
    except (ValueError, http.client.InvalidURL) as exc:  # "unknown url type", a bad port, ...
        print(f"stream-validator: error: --url {base!r}: {exc}", file=sys.stderr)
        return ResumeExit.USAGE
    try:
        answer = decode_json(body)
    except DecodeError:
        answer = {}
    answer = answer if isinstance(answer, dict) else {}
    exit_code = _ANSWERS.get(code, ResumeExit.UNREACHABLE)
    if exit_code is ResumeExit.OK:
        print(f"route {args.route}: breaker {answer.get('before')} -> {answer.get('state')}")
    elif exit_code is ResumeExit.PENDING:
        print(f"route {args.route}: resume queued; the service has not acted on it yet")
    else:
        error = str(answer.get("error", f"HTTP {code}"))[:500]
        print(f"stream-validator: error: {url}: {error}", file=sys.stderr)
    return exit_code
