"""The address of a running service's health server, for the commands that call it
(``resume``, ``shadow-report``): given as ``--url`` or taken from a service config."""

from __future__ import annotations

from urllib.parse import urlsplit

from stream_validator.config.model import ServiceConfig

DEFAULT_URL = "http://127.0.0.1:8080"


def config_url(config: ServiceConfig) -> str:
    """The health server of the service ``config`` describes, as reached from this host."""
    # A server listening on every interface is reached on this host through loopback.
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(config.health_host, config.health_host)
    base = f"http://[{host}]" if ":" in host else f"http://{host}"
    return f"{base}:{config.health_port}"


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a health server's address, or None."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number or too big
    except ValueError as exc:
        return str(exc)
    if parts.scheme.lower() not in ("http", "https"):
        return "expected an http:// or https:// URL, e.g. http://127.0.0.1:8080"
    if not parts.hostname:
        return "no host in the URL"
    return None
