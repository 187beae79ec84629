"""confluent-kafka's SchemaRegistryClient, built from the ``schema_registry`` config section.

The client caches schemas by id (ids never change meaning), so each schema is fetched once.
One request is bounded by ``timeout_s`` and retried by nobody here: the service's batch retry
(with its backoff, readiness false) is the one retry, as for a broker outage.
"""

from __future__ import annotations

from typing import Any

from confluent_kafka.schema_registry import SchemaRegistryClient

from stream_validator.config.model import SchemaRegistryConfig


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
