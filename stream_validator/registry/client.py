"""confluent-kafka's SchemaRegistryClient, built from the ``schema_registry`` config section.

The client caches schemas by id (ids never change meaning), so each schema is fetched once.
One request is bounded by ``timeout_s`` and retried by nobody here: the service's batch retry
(with its backoff, readiness false) is the one retry, as for a broker outage.
"""

from __future__ import annotations

from typing import Any

from confluent_kafka.schema_registry import SchemaRegistryClient, SchemaRegistryError

from stream_validator.config.model import SchemaRegistryConfig
from stream_validator.errors import RegistryUnavailableError


def client_settings(config: SchemaRegistryConfig) -> dict[str, Any]:
    """The client's configuration dictionary (holds the secrets: never log it)."""
    if config.url is None:
        raise ValueError("schema_registry.url is not set")
    settings: dict[str, Any] = {
        "url": config.url,
        "timeout": config.timeout_s,
        "max.retries": 0,
    }
    if config.basic_auth_user is not None:
        settings["basic.auth.user.info"] = (
            f"{config.basic_auth_user}:{config.basic_auth_password or ''}"
        )
    if config.bearer_token is not None:
        settings["bearer.auth.credentials.source"] = "STATIC_TOKEN"
        settings["bearer.auth.token"] = config.bearer_token
        # Required by the client (Confluent Cloud's target-sr-cluster header); empty elsewhere.
        settings["bearer.auth.logical.cluster"] = ""
    for key, value in (
        ("ssl.ca.location", config.ssl_ca_location),
        ("ssl.certificate.location", config.ssl_certificate_location),
        ("ssl.key.location", config.ssl_key_location),
    ):
        if value is not None:
            settings[key] = value
    return settings


def registry_client(config: SchemaRegistryConfig) -> SchemaRegistryClient:
    """A client of the configured registry (``mock://NAME``: confluent-kafka's in-memory
    registry, empty and private to this client, for tests)."""
    return SchemaRegistryClient.new_client(client_settings(config))


def check_registry(config: SchemaRegistryConfig, *, timeout_s: float) -> int:
    """Ask the configured registry for its subjects, as the service's client would (URL,
    credentials, TLS): the number it lists. Raises RegistryUnavailableError saying what
    failed (unreachable, credentials refused, an error answer); its message may quote the
    client's settings: scrub it before printing."""
    settings = {**client_settings(config), "timeout": timeout_s}
    try:
        with SchemaRegistryClient.new_client(settings) as client:
            return len(client.get_subjects())
    except SchemaRegistryError as exc:
        status = exc.http_status_code
        if status in (401, 403):
            # Its answer is not quoted: a proxy may echo the Authorization header back.
            raise RegistryUnavailableError(f"refused the credentials (HTTP {status})") from None
        raise RegistryUnavailableError(
            f"answered with an error (HTTP {status}): {exc.error_message}"[:500]
        ) from None
    except Exception as exc:  # the client's transport errors (connect, timeout, TLS) vary
        raise RegistryUnavailableError(
            f"cannot be reached: {type(exc).__name__}: {exc}"[:500]
        ) from None
