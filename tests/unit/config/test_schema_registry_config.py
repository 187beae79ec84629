"""The schema_registry section and routes[].format: checked, defaulted, secrets kept out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stream_validator.config.settings import config_from_mapping, load_config
from stream_validator.errors import ConfigError

CONTRACT = "name: c\nversion: '1'\nfields:\n  - {name: a, type: int}\n"


def document(tmp_path: Path, route: dict[str, Any] | None = None, **top: Any) -> dict[str, Any]:
    (tmp_path / "c.yaml").write_text(CONTRACT)
    return {
        "routes": [
            {
                "name": "r",
                "contract": str(tmp_path / "c.yaml"),
                "source_topics": ["s"],
                "clean_topic": "c",
                "dlq_topic": "d",
                **(route or {}),
            }
        ],
        **top,
    }


def test_format_defaults_to_json_and_needs_no_registry(tmp_path: Path) -> None:
    """Without format a route is JSON; the registry section stays unset."""
    config = config_from_mapping(document(tmp_path))
    assert config.routes[0].format == "json"
    assert config.schema_registry.url is None


def test_a_registry_format_is_read_with_its_registry(tmp_path: Path) -> None:
    """format avro and the registry's keys reach the typed config."""
    config = config_from_mapping(
        document(
            tmp_path,
            {"format": "avro"},
            schema_registry={"url": "https://sr:8081", "bearer_token": "tok-123", "timeout_s": 2},
        )
    )
    assert config.routes[0].format == "avro"
    assert config.schema_registry.url == "https://sr:8081"
    assert config.schema_registry.timeout_s == 2
    assert "tok-123" in config.secrets()


@pytest.mark.parametrize(
    ("route", "registry", "needle"),
    [
        ({"format": "protobuf"}, None, "'protobuf' needs schema_registry.url"),
        ({"format": "xml"}, None, "format"),
        ({}, {"url": "sr:8081"}, "expected an http:// or https:// URL"),
        ({}, {"url": "http://sr", "basic_auth_user": "u"}, "go together"),
        (
            {},
            {"url": "http://sr", "basic_auth_user": "u", "basic_auth_password": "p",
             "bearer_token": "t"},
            "not both",
        ),
        ({}, {"url": "http://sr", "ssl_key_location": "/k"}, "needs ssl_certificate_location"),
        ({}, {"url": "http://sr", "timeout_s": 0}, "timeout_s"),
    ],
)  # fmt: skip
def test_bad_registry_settings_name_the_key(
    tmp_path: Path, route: dict[str, Any], registry: dict[str, Any] | None, needle: str
) -> None:
    """Each inconsistent setting fails at load, naming the key."""
    top = {} if registry is None else {"schema_registry": registry}
    with pytest.raises(ConfigError, match=needle.replace("(", r"\(")):
        config_from_mapping(document(tmp_path, route, **top))


def test_the_password_never_appears_in_an_error_or_the_redacted_view(tmp_path: Path) -> None:
    """A registry password is scrubbed like a Kafka one: not in the redacted settings, not
    in a config error."""
    doc = document(
        tmp_path,
        {"format": "avro"},
        schema_registry={"url": "http://sr", "basic_auth_user": "u",
                         "basic_auth_password": "s3cr3t-pw", "bearer_token": "t"},
    )  # fmt: skip
    with pytest.raises(ConfigError) as info:
        config_from_mapping(doc)
    assert "s3cr3t-pw" not in str(info.value)
    del doc["schema_registry"]["bearer_token"]
    config = config_from_mapping(doc)
    assert config.schema_registry.redacted() == {
        "url": "http://sr",
        "basic_auth_user": "u",
        "basic_auth_password": "***",
        "timeout_s": 10.0,
    }


def test_environment_overrides_reach_the_registry(tmp_path: Path) -> None:
    """SV_SCHEMA_REGISTRY__URL sets schema_registry.url."""
    (tmp_path / "c.yaml").write_text(CONTRACT)
    path = tmp_path / "service.yaml"
    path.write_text(
        "routes:\n  - {name: r, contract: c.yaml, source_topics: [s], clean_topic: c,"
        " dlq_topic: d, format: avro}\n"
    )
    config = load_config(path, {"SV_SCHEMA_REGISTRY__URL": "http://sr:8080/apis/ccompat/v7"})
    assert config.schema_registry.url == "http://sr:8080/apis/ccompat/v7"
