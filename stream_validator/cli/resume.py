"""``resume``: close a route's DLQ circuit breaker on a running service.

It calls ``POST /breaker/resume?route=NAME`` on the service's health port (``--url``, repeated
for every pod of the route, or the health_host/health_port of ``--config``) with the resume
token as ``Authorization: Bearer``: from ``--token-file``, else ``$SV_RESUME_TOKEN``, else the
``service.resume_token_file`` of ``--config`` (never a plain argument: ``ps`` would show it).
No proxy, no redirect: the token goes to the URL given and nowhere else.
Exit codes: ``errors.ResumeExit``; with several URLs, the first that is not 0.
"""

from __future__ import annotations

import argparse
import http.client
import os
import sys
import urllib.error
import urllib.request
from urllib.parse import quote

from stream_validator.cli.argtypes import Subparsers, timeout_seconds
from stream_validator.cli.healthurl import DEFAULT_URL, config_url, url_problem
from stream_validator.codec import decode_json
from stream_validator.errors import ConfigError, DecodeError, ResumeExit

TOKEN_ENV = "SV_RESUME_TOKEN"
_ANSWERS = {
    200: ResumeExit.OK,
    202: ResumeExit.PENDING,
    400: ResumeExit.USAGE,
    401: ResumeExit.USAGE,  # no token, or a wrong one
    403: ResumeExit.USAGE,  # the service has no token configured (or the request looked odd)
    404: ResumeExit.UNKNOWN_ROUTE,
}


def add_parser(commands: Subparsers) -> None:
    """Register ``resume`` with the command line."""
    resume = commands.add_parser("resume")
    resume.add_argument("--route", required=True, metavar="NAME", help="the route to resume")
    where = resume.add_mutually_exclusive_group()
    where.add_argument(
        "--url",
        action="append",
        metavar="URL",
        help=f"a service's health server (default: {DEFAULT_URL}); repeat it for every pod"
        " running the route",
    )
    where.add_argument(
        "--config",
        metavar="FILE",
        help="take the health host and port (and the token file) from this service config",
    )
    resume.add_argument(
        "--token-file",
        metavar="FILE",
        help=f"the file holding the resume token (default: ${TOKEN_ENV}, else the"
        " service.resume_token_file of --config)",
    )
    resume.add_argument(
        "--timeout",
        type=timeout_seconds,
        default=10.0,
        metavar="S",
        help="seconds to wait for each service",
    )
    resume.set_defaults(run=_resume)


def _resume(args: argparse.Namespace) -> int:
    bases: list[str] = args.url or [DEFAULT_URL]
    token_file: str | None = args.token_file
    try:
        if args.config:
            from stream_validator.config.settings import load_config

            config = load_config(args.config)
            bases = [config_url(config)]
            if token_file is None and TOKEN_ENV not in os.environ:
                token_file = config.resume_token_file
        token = _token(token_file)
    except ConfigError as exc:
        print(f"stream-validator: error: {exc}", file=sys.stderr)
        return ResumeExit.USAGE
    for base in bases:
        problem = url_problem(base)
        if problem:
            print(f"stream-validator: error: --url {base!r}: {problem}", file=sys.stderr)
            return ResumeExit.USAGE
    codes = [_resume_one(base, args, token, named=len(bases) > 1) for base in bases]
    return next((code for code in codes if code != ResumeExit.OK), ResumeExit.OK)


def _token(token_file: str | None) -> str | None:
    from stream_validator.config.settings import check_resume_token, read_resume_token

    if token_file is not None:
        return read_resume_token(token_file, "--token-file")
    if os.environ.get(TOKEN_ENV):
        return check_resume_token(os.environ[TOKEN_ENV], f"${TOKEN_ENV}")
    return None  # the service will say that a token is needed


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is an answer (exit 3), never followed with the token."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())


def _resume_one(base: str, args: argparse.Namespace, token: str | None, *, named: bool) -> int:
    url = f"{base.rstrip('/')}/breaker/resume?route={quote(args.route, safe='')}"
    where = f"{base}: " if named else ""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        request = urllib.request.Request(url, data=b"", method="POST", headers=headers)
        with _OPENER.open(request, timeout=args.timeout) as response:
            code, body = response.status, response.read()
    except urllib.error.HTTPError as exc:
        code, body = exc.code, exc.read()
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        print(f"stream-validator: error: service unreachable at {base}: {reason}", file=sys.stderr)
        return ResumeExit.UNREACHABLE
    except (ValueError, http.client.InvalidURL) as exc:  # a bad port, ...
        print(f"stream-validator: error: --url {base!r}: {exc}", file=sys.stderr)
        return ResumeExit.USAGE
    try:
        answer = decode_json(body)
    except DecodeError:
        answer = {}
    answer = answer if isinstance(answer, dict) else {}
    exit_code = _ANSWERS.get(code, ResumeExit.UNREACHABLE)
    if exit_code is ResumeExit.OK:
        print(f"{where}route {args.route}: breaker {answer.get('before')} -> {answer.get('state')}")
    elif exit_code is ResumeExit.PENDING:
        print(f"{where}route {args.route}: resume queued; the service has not acted on it yet")
    else:
        error = str(answer.get("error", f"HTTP {code}"))[:500]
        print(f"stream-validator: error: {url}: {error}", file=sys.stderr)
    return exit_code
