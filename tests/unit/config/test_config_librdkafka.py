"""librdkafka values reach librdkafka as the text written, and secrets among them are scrubbed."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from stream_validator.config.settings import KafkaConfig, load_config, scrub
from stream_validator.errors import ConfigError

TICK = str(Path(__file__).resolve().parents[3] / "config" / "contracts" / "tick.yaml")
ROUTES = yaml.safe_dump(
    {
        "routes": [
            {
                "name": "ticks",
                "source_topics": ["t"],
                "contract": TICK,
                "clean_topic": "tc",
                "dlq_topic": "td",
            }
        ]
    }
)


def kafka(tmp_path: Path, section: str, env: dict[str, str] | None = None) -> KafkaConfig:
    path = tmp_path / "c.yaml"
    path.write_text(f"kafka:\n{section}\n{ROUTES}")
    return load_config(path, env or {}).kafka


@pytest.mark.parametrize(
    ("written", "text"),
    [
        ("0123", "0123"),  # YAML 1.1: octal 83
        ("0x1F", "0x1F"),  # hex 31
        ("12:30", "12:30"),  # sexagesimal 750
        ("no", "no"),  # false
        ("1_000", "1_000"),  # 1000
        ("1.50", "1.50"),  # 1.5
        ("2024-01-02", "2024-01-02"),  # a date
    ],
)
def test_a_plain_librdkafka_value_is_the_text_written(
    tmp_path: Path, written: str, text: str
) -> None:
    """sasl.password: 0123 is the password '0123', not YAML 1.1's octal 83 (nor 0x1F 31...)."""
    config = kafka(tmp_path, f"  settings:\n    sasl.password: {written}")
    assert config.settings == {"sasl.password": text}


def test_every_librdkafka_section_keeps_the_text_written(tmp_path: Path) -> None:
    """settings, consumer and producer (and a '<<' merge into one) keep 0123, 12:30, no."""
    config = kafka(
        tmp_path,
        "  settings: {client.rack: 12:30}\n"
        "  consumer:\n    <<: {sasl.username: 0x1F}\n    ssl.key.password: no\n"
        "  producer: {linger.ms: 5, enable.idempotence: true}",
    )
    assert config.settings == {"client.rack": "12:30"}
    assert config.consumer == {"sasl.username": "0x1F", "ssl.key.password": "no"}
    assert config.producer == {"linger.ms": "5", "enable.idempotence": "true"}


def test_a_secret_written_as_a_number_is_scrubbed_as_written(tmp_path: Path) -> None:
    """The scrub list holds '0123' (the real password), so it never appears in a message."""
    config = kafka(tmp_path, "  settings: {sasl.password: 0123, ssl.key.password: 0x1F}")
    assert sorted(config.secrets()) == ["0123", "0x1F"]
    assert scrub("SASL auth failed for password 0123 (key 0x1F)", config.secrets()) == (
        "SASL auth failed for password *** (key ***)"
    )


def test_an_env_override_of_a_librdkafka_value_stays_the_text_given(tmp_path: Path) -> None:
    """SV_KAFKA__SETTINGS__SASL_PASSWORD=0123 is '0123' (and scrubbed), never 83."""
    env = {"SV_KAFKA__SETTINGS__SASL_PASSWORD": "0123", "SV_KAFKA__CONSUMER__CLIENT_RACK": "12:30"}
    config = kafka(tmp_path, "  settings: {}", env)
    assert config.settings == {"sasl.password": "0123"}
    assert config.consumer == {"client.rack": "12:30"}
    assert config.secrets() == ["0123"]


def test_other_keys_still_read_yaml_values(tmp_path: Path) -> None:
    """Only the librdkafka mappings are verbatim: kafka.group_id: 0x1F is still an int."""
    path = tmp_path / "c.yaml"
    path.write_text(f"kafka: {{group_id: 0x1F}}\n{ROUTES}")
    with pytest.raises(ConfigError, match=r"kafka\.group_id: expected str, got int"):
        load_config(path, {})


def test_an_empty_librdkafka_value_is_still_null(tmp_path: Path) -> None:
    """'sasl.username:' with nothing after it is refused, not read as the text ''."""
    path = tmp_path / "c.yaml"
    path.write_text(f"kafka:\n  settings:\n    sasl.username:\n{ROUTES}")
    with pytest.raises(ConfigError, match=r"\['sasl.username'\]: expected .*, got null"):
        load_config(path, {})


def test_an_unsigned_exponent_is_a_float_in_the_file_and_the_environment(tmp_path: Path) -> None:
    """batch.timeout_s: 2.0e0 and SV_SERVICE__SHUTDOWN_TIMEOUT_S=1e1 are numbers (text in 1.1)."""
    path = tmp_path / "c.yaml"
    path.write_text(f"batch: {{timeout_s: 2.0e0}}\n{ROUTES}")
    config = load_config(path, {"SV_SERVICE__SHUTDOWN_TIMEOUT_S": "1e1"})
    assert (config.batch_timeout_s, config.shutdown_timeout_s) == (2.0, 10.0)
