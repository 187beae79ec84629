"""Service configuration: file + environment overrides, validation, secrets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from stream_validator.config.redaction import is_secret_key
from stream_validator.config.settings import (
    apply_env_overrides,
    load_config,
    redacted,
    scrub,
)
from stream_validator.errors import ConfigError

REPO = Path(__file__).resolve().parents[3]
SAMPLE = REPO / "config" / "service.yaml"
TICK = str(REPO / "config" / "contracts" / "tick.yaml")


def minimal(**changes: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "kafka": {"bootstrap_servers": "k:9092"},
        "routes": [
            {
                "name": "t",
                "source_topics": ["in"],
                "contract": TICK,
                "clean_topic": "out",
                "dlq_topic": "dlq",
            }
        ],
    }
    document.update(changes)
    return document


def load(tmp_path: Path, document: dict[str, Any], env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(document))
    return load_config(path, env or {})


def test_sample_config_loads() -> None:
    """config/service.yaml loads with four routes and their contracts."""
    config = load_config(SAMPLE, {})
    assert [r.name for r in config.routes] == ["ticks", "books", "bars", "orders"]
    assert [r.contract.name for r in config.routes] == [
        "tick",
        "orderbook_snapshot",
        "ohlcv_bar",
        "order",
    ]
    assert config.routes[2].on_null_ceiling_breach == "quarantine"


def test_defaults(tmp_path: Path) -> None:
    """Unset keys take documented, safe defaults (loopback endpoints, alert policy)."""
    config = load(tmp_path, minimal())
    assert (config.health_host, config.metrics_host) == ("127.0.0.1", "127.0.0.1")
    assert config.batch_max_records == 500 and config.routes[0].on_null_ceiling_breach == "alert"
    assert (config.batch_linger_s, config.batch_commit_interval_s) == (0.005, 0.1)
    assert config.routes[0].max_payload_bytes < config.max_message_bytes


def test_connect_headers_and_created_series_are_off_unless_set(tmp_path: Path) -> None:
    """dlq.connect_headers and metrics.created_series default to false; the file or the
    environment turns them on."""
    config = load(tmp_path, minimal())
    assert (config.dlq_connect_headers, config.metrics_created_series) == (False, False)
    config = load(tmp_path, minimal(dlq={"connect_headers": True}))
    assert config.dlq_connect_headers is True
    env = {"SV_DLQ__CONNECT_HEADERS": "true", "SV_METRICS__CREATED_SERIES": "true"}
    config = load(tmp_path, minimal(), env)
    assert (config.dlq_connect_headers, config.metrics_created_series) == (True, True)


def test_default_window_fits_a_larger_batch(tmp_path: Path) -> None:
    """Unset, batch.max_in_flight_records is 5,000, or batch.max_records when that is larger."""
    assert load(tmp_path, minimal()).batch_max_in_flight_records == 5000
    larger = load(tmp_path, minimal(batch={"max_records": 8000}))
    assert larger.batch_max_in_flight_records == 8000


def test_env_overrides_nested_keys(tmp_path: Path) -> None:
    """SV_SECTION__KEY overrides a value, typed as a YAML scalar."""
    config = load(
        tmp_path,
        minimal(),
        {
            "SV_KAFKA__BOOTSTRAP_SERVERS": "prod:9093",
            "SV_BATCH__MAX_RECORDS": "1000",
            "SV_METRICS__ENABLED": "false",
            "UNRELATED": "x",
            "SV_NOSEPARATOR": "y",
        },
    )
    assert config.kafka.bootstrap_servers == "prod:9093"
    assert config.batch_max_records == 1000
    assert config.metrics_enabled is False


def test_env_librdkafka_passthrough(tmp_path: Path) -> None:
    """In kafka.settings/consumer/producer, '_' becomes '.' and values stay strings."""
    config = load(
        tmp_path,
        minimal(),
        {"SV_KAFKA__SETTINGS__SASL_PASSWORD": "p4ss", "SV_KAFKA__PRODUCER__LINGER_MS": "20"},
    )
    assert config.kafka.settings == {"sasl.password": "p4ss"}
    assert config.kafka.producer == {"linger.ms": "20"}
    assert config.kafka.secrets() == ["p4ss"]


def test_env_cannot_set_routes() -> None:
    """Routes come from the file only."""
    with pytest.raises(ConfigError, match="SV_ROUTES__X"):
        apply_env_overrides({}, {"SV_ROUTES__X": "1"})


@pytest.mark.parametrize(
    ("changes", "needle"),
    [
        (
            {"colour": 1},
            "unknown key(s) colour (allowed: batch, dlq, kafka, metrics, routes,"
            " schema_registry, service)",
        ),
        ({"dlq": {"connect": True}}, "dlq: unknown key(s) connect (allowed: connect_headers)"),
        ({"dlq": {"connect_headers": "yes"}}, "dlq.connect_headers: expected bool, got str"),
        ({"metrics": {"created_series": 1}}, "metrics.created_series: expected bool, got int"),
        (
            {"batch": {"max_record": 5}},
            "batch: unknown key(s) max_record (allowed: commit_interval_s, linger_s,"
            " max_in_flight_records, max_records,",
        ),
        ({"batch": {"max_records": "many"}}, "batch.max_records: expected int, got str"),
        ({"batch": {"max_records": True}}, "batch.max_records: expected int, got bool"),
        ({"batch": {"max_records": 0}}, "batch.max_records: expected int >= 1, got 0"),
        ({"batch": {"linger_s": -0.1}}, "batch.linger_s: expected float >= 0.0, got -0.1"),
        (
            {"batch": {"max_in_flight_records": 0}},
            "batch.max_in_flight_records: expected int >= 1, got 0",
        ),
        (
            {"batch": {"max_in_flight_records": 100_001}},
            "batch.max_in_flight_records: expected int <= 100000, got 100001",
        ),
        (
            {"batch": {"max_records": 600, "max_in_flight_records": 599}},
            "batch.max_in_flight_records (599) must be at least batch.max_records (600)",
        ),
        ({"kafka": {"bootstrap": "x"}}, "kafka: unknown key(s) bootstrap (allowed:"),
        ({"kafka": {"settings": ["a"]}}, "kafka.settings: expected mapping, got list"),
        ({"service": {"log_level": "LOUD"}}, "service.log_level"),
        ({"routes": []}, "routes: expected list of length >= 1, got []"),
    ],
)
def test_invalid_config_names_the_key(tmp_path: Path, changes: dict[str, Any], needle: str) -> None:
    """Every invalid setting fails at load with a message naming the key."""
    with pytest.raises(ConfigError) as info:
        load(tmp_path, minimal(**changes))
    assert needle in str(info.value)


@pytest.mark.parametrize(
    ("route_changes", "needle"),
    [
        ({"contract": "absent.yaml"}, "routes[0].contract (route 't'): "),
        ({"source_pattern": "^x"}, "exactly one of source_topics, source_pattern"),
        ({"source_topics": [], "source_pattern": "("}, "not a regex"),
        ({"on_null_ceiling_breach": "panic"}, "on_null_ceiling_breach"),
        ({"clean_topic": "in"}, "output topic 'in' is also a source topic"),
        ({"dlq_topic": None}, "routes[0].dlq_topic (route 't'): expected str, got null"),
        ({"max_payload_bytes": 10**9}, "max_payload_bytes"),
        ({"extra": 1}, "routes[0] (route 't'): unknown key(s) extra (allowed:"),
    ],
)
def test_invalid_route(tmp_path: Path, route_changes: dict[str, Any], needle: str) -> None:
    """Route errors name the route and the key."""
    document = minimal()
    document["routes"][0].update(route_changes)
    with pytest.raises(ConfigError) as info:
        load(tmp_path, document)
    assert needle in str(info.value)


def test_pattern_matching_own_output_is_refused(tmp_path: Path) -> None:
    """A source pattern that would consume the route's own outputs is a config error."""
    document = minimal()
    document["routes"][0].update(
        source_topics=[], source_pattern="^md\\..*", clean_topic="md.clean"
    )
    with pytest.raises(ConfigError, match="also a source topic"):
        load(tmp_path, document)


def test_duplicate_route_names(tmp_path: Path) -> None:
    """Route names are unique."""
    document = minimal()
    document["routes"].append(
        {**document["routes"][0], "source_topics": ["in2"], "clean_topic": "o2", "dlq_topic": "d2"}
    )
    with pytest.raises(ConfigError, match="duplicate route name 't'"):
        load(tmp_path, document)


@pytest.mark.parametrize(
    "key",
    [
        "sasl.password",
        "ssl.key.password",
        "sasl.oauthbearer.client.secret",
        "ssl.key.pem",
        "sasl.jaas.config",
        "SASL_PASSWORD",
        "sasl.oauthbearer.config",
        "sasl.oauthbearer.extensions",
        "ssl.keystore.password",
        "ssl.certificate.pem",
        "sasl.oauthbearer.token.endpoint.url.token",
        "my.plugin.password",
        "vendor.secret",
        "refresh_token_file",
    ],
)
def test_secret_keys(key: str) -> None:
    """Password, secret, key and JAAS settings are treated as secrets."""
    assert is_secret_key(key)


def test_non_secret_keys() -> None:
    """Ordinary settings are not redacted."""
    assert not is_secret_key("sasl.username") and not is_secret_key("linger.ms")


def test_redacted_and_scrub() -> None:
    """redacted() masks secret values; scrub() removes them from any text."""
    assert redacted({"sasl.password": "x", "acks": "all"}) == {
        "sasl.password": "***",
        "acks": "all",
    }
    assert scrub("bad value 'hunter2' for sasl.password", ["hunter2"]) == (
        "bad value '***' for sasl.password"
    )


def test_invalid_yaml(tmp_path: Path) -> None:
    """A broken file names itself."""
    path = tmp_path / "bad.yaml"
    path.write_text("kafka: [")
    with pytest.raises(ConfigError, match=r"bad\.yaml: not valid YAML"):
        load_config(path, {})


def test_client_settings_refuse_unsafe_overrides(tmp_path: Path) -> None:
    """Settings that would break at-least-once delivery or block producing are refused."""
    from stream_validator.kafka.clients import consumer_settings, producer_settings

    for section, key, value, needle in [
        ("consumer", "enable.auto.commit", "true", "enable.auto.commit=true is not allowed"),
        ("producer", "acks", "1", "acks=1 is not allowed"),
        ("producer", "transactional.id", "x", "set kafka.transactional_id"),
        # The producer would report failures only: its outputs never counted as delivered,
        # nothing ever committed.
        (
            "producer",
            "delivery.report.only.error",
            True,
            "delivery.report.only.error=true is not allowed",
        ),
    ]:
        document = minimal()
        document["kafka"][section] = {key: value}
        config = load(tmp_path, document)
        build = consumer_settings if section == "consumer" else producer_settings
        with pytest.raises(ConfigError, match=needle):
            build(config)


def test_client_settings_defaults(tmp_path: Path) -> None:
    """Consumer and producer get the delivery-critical settings and user pass-through."""
    from stream_validator.kafka.clients import consumer_settings, producer_settings

    document = minimal()
    document["kafka"]["settings"] = {"security.protocol": "SASL_SSL"}
    config = load(tmp_path, document)
    consumer, producer = consumer_settings(config), producer_settings(config)
    assert consumer["enable.auto.offset.store"] == "false"
    assert consumer["partition.assignment.strategy"] == "cooperative-sticky"
    assert producer["enable.idempotence"] == "true" and producer["acks"] == "all"
    assert consumer["security.protocol"] == producer["security.protocol"] == "SASL_SSL"
    assert producer["linger.ms"] == "1"
    # The adapter decides whether acknowledgements are reported (a bool: confluent-kafka's).
    assert producer["delivery.report.only.error"] is False
    assert producer_settings(config, silent_acks=True)["delivery.report.only.error"] is True


def test_producer_linger_can_be_set(tmp_path: Path) -> None:
    """kafka.producer's linger.ms replaces the 1 ms default."""
    from stream_validator.kafka.clients import producer_settings

    document = minimal()
    document["kafka"]["producer"] = {"linger.ms": 20}
    assert producer_settings(load(tmp_path, document))["linger.ms"] == "20"


def test_transactional_id_turns_on_exactly_once(tmp_path: Path) -> None:
    """kafka.transactional_id (or SV_KAFKA__TRANSACTIONAL_ID) reaches the producer settings."""
    from stream_validator.kafka.clients import producer_settings

    config = load(tmp_path, minimal(), {"SV_KAFKA__TRANSACTIONAL_ID": "validator-0"})
    assert config.kafka.transactional_id == "validator-0"
    assert producer_settings(config)["transactional.id"] == "validator-0"
    assert "transactional.id" not in producer_settings(load(tmp_path, minimal()))


def test_duplicate_keys_in_the_config_are_refused(tmp_path: Path) -> None:
    """A key written twice in one mapping is an error naming the key and both lines."""
    path = tmp_path / "c.yaml"
    path.write_text(
        "kafka:\n  bootstrap_servers: a:9092\n  group_id: g\n  bootstrap_servers: b:9092\n"
        + yaml.safe_dump({"routes": minimal()["routes"]})
    )
    with pytest.raises(
        ConfigError, match=r"duplicate key 'bootstrap_servers' at line 4 \(first at line 2\)"
    ):
        load_config(path, {})


def test_yaml_error_on_the_password_line_shows_position_not_text(tmp_path: Path) -> None:
    """A syntax error gives line and column, never the source line (it may hold a password)."""
    path = tmp_path / "c.yaml"
    path.write_text('kafka:\n  settings:\n    sasl.password: hun"ter2: x\n')
    with pytest.raises(ConfigError) as info:
        load_config(path, {})
    message = str(info.value)
    assert "not valid YAML at line 3, column" in message and "hun" not in message
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_apply_env_overrides_names_every_bad_variable() -> None:
    """apply_env_overrides names each variable it cannot apply, and applies the others."""
    document: dict[str, Any] = {"batch": {"max_records": 5}}
    with pytest.raises(ConfigError) as info:
        apply_env_overrides(
            document,
            {"SV_ROUTES__X": "1", "SV_BATCH__MAX_RECORDS__X": "1", "SV_BATCH__LINGER_S": "0.5"},
        )
    assert "SV_ROUTES__X" in str(info.value) and "SV_BATCH__MAX_RECORDS__X" in str(info.value)
    assert document["batch"] == {"max_records": 5, "linger_s": 0.5}
