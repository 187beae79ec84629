"""Config errors name the file, the path (``routes[1].contract``) and expected vs got."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from stream_validator.config.settings import ServiceConfig, config_from_mapping, load_config
from stream_validator.errors import ConfigError

TICK = str(Path(__file__).resolve().parents[3] / "config" / "contracts" / "tick.yaml")


def document(**changes: Any) -> dict[str, Any]:
    routes = [
        {"name": "ticks", "source_topics": ["t"], "contract": TICK, "clean_topic": "tc"},
        {"name": "books", "source_topics": ["b"], "contract": TICK, "clean_topic": "bc"},
    ]
    for n, route in enumerate(routes):
        route["dlq_topic"] = f"dlq{n}"
    return {"routes": routes, **changes}


def error(tmp_path: Path, doc: dict[str, Any], env: dict[str, str] | None = None) -> str:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(ConfigError) as info:
        load_config(path, env or {})
    message = str(info.value)
    assert message.startswith(f"{path}: ")
    return message.removeprefix(f"{path}: ")


def test_wrong_type_in_a_route_names_index_route_and_types(tmp_path: Path) -> None:
    """A route key of the wrong type reads routes[1].contract (route 'books'): expected, got."""
    doc = document()
    doc["routes"][1]["contract"] = 7
    assert error(tmp_path, doc) == "routes[1].contract (route 'books'): expected str, got int"


def test_unknown_keys_at_depth_are_listed_with_the_allowed_ones(tmp_path: Path) -> None:
    """Every unknown key of one mapping is named, with the keys that mapping allows."""
    doc = document()
    doc["routes"][1].update(colour="red", topic="x")
    assert error(tmp_path, doc) == (
        "routes[1] (route 'books'): unknown key(s) colour, topic (allowed: circuit_breaker,"
        " clean_topic, contract, dlq_topic, max_payload_bytes, name, on_null_ceiling_breach,"
        " shadow_contract, source_pattern, source_topics)"
    )


def test_a_bad_list_item_is_named_by_its_index(tmp_path: Path) -> None:
    """An empty topic in source_topics names its index inside the route."""
    doc = document()
    doc["routes"][0]["source_topics"] = ["t", ""]
    assert error(tmp_path, doc) == (
        "routes[0].source_topics[1] (route 'ticks'): expected str of length >= 1, got ''"
    )


def test_a_missing_required_key_is_named(tmp_path: Path) -> None:
    """A route without dlq_topic names the route and the key."""
    doc = document()
    del doc["routes"][1]["dlq_topic"]
    assert error(tmp_path, doc) == "routes[1] (route 'books'): missing required key 'dlq_topic'"


def test_a_bound_shows_the_value_found(tmp_path: Path) -> None:
    """A number outside its bound shows the bound and the number."""
    message = error(tmp_path, document(service={"health_port": 70000}))
    assert message == "service.health_port: expected int <= 65535, got 70000"


def test_an_env_override_of_the_wrong_type_names_the_key(tmp_path: Path) -> None:
    """SV_BATCH__MAX_RECORDS=many is refused like the same value in the file."""
    message = error(tmp_path, document(), {"SV_BATCH__MAX_RECORDS": "many"})
    assert message == "batch.max_records: expected int, got str"


def test_a_librdkafka_value_of_the_wrong_type_never_shows_the_value(tmp_path: Path) -> None:
    """A secret setting with a list value names the property, not the secret."""
    message = error(tmp_path, document(kafka={"settings": {"sasl.password": ["hunter2"]}}))
    assert message == "kafka.settings['sasl.password']: expected bool | int | float | str, got list"


def test_an_empty_librdkafka_value_is_refused(tmp_path: Path) -> None:
    """'sasl.username:' with no value is an error (it used to become the string 'None')."""
    message = error(tmp_path, document(kafka={"consumer": {"a": "x", "sasl.username": None}}))
    assert message == (
        "kafka.consumer['sasl.username']: expected bool | int | float | str, got null"
    )


def test_librdkafka_values_become_strings(tmp_path: Path) -> None:
    """Numbers and booleans under kafka.settings reach librdkafka as its strings."""
    path = tmp_path / "c.yaml"
    settings = {"linger.ms": 5, "enable.idempotence": True, "acks": "all"}
    path.write_text(yaml.safe_dump(document(kafka={"producer": settings})))
    config = load_config(path, {})
    assert config.kafka.producer == {"linger.ms": "5", "enable.idempotence": "true", "acks": "all"}


def test_empty_sections_keep_their_defaults(tmp_path: Path) -> None:
    """'kafka:' or 'service:' with nothing under them mean the defaults."""
    path = tmp_path / "c.yaml"
    path.write_text("kafka:\nservice:\n" + yaml.safe_dump(document()))
    config = load_config(path, {})
    defaults = ServiceConfig(kafka=config.kafka, routes=config.routes, source=str(path))
    assert config == defaults and config.kafka.bootstrap_servers == "127.0.0.1:9092"


def test_a_broken_contract_names_the_route_and_the_contract_path(tmp_path: Path) -> None:
    """A contract error inside a route names both files and the field path in the contract."""
    contract = tmp_path / "bad.yaml"
    contract.write_text("name: x\nfields: [{name: a, type: int}, {name: b, type: int, min: 1}]\n")
    doc = document()
    doc["routes"][1]["contract"] = str(contract)
    assert error(tmp_path, doc) == (
        f"routes[1].contract (route 'books'): {contract}: fields[1] (field 'b'):"
        " unknown key(s) min (allowed: action, allow_non_finite, allowed, description, fields,"
        " items, max_age_s, max_future_s, max_items, max_length, max_value, min_items,"
        " min_length, min_value, name, nullable, pattern, require_timezone, type)"
    )


def test_rules_between_keys_show_both_values(tmp_path: Path) -> None:
    """A liveness timeout not above the batch timeout shows both numbers."""
    message = error(tmp_path, document(service={"liveness_timeout_s": 0.5}))
    assert message == "service.liveness_timeout_s must exceed batch.timeout_s (0.5 <= 1.0)"


def test_lower_case_log_levels_are_accepted(tmp_path: Path) -> None:
    """log_level is case-insensitive, as before the typed decoding."""
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(document(service={"log_level": "debug"})))
    assert load_config(path, {}).log_level == "debug"


def test_a_contract_path_with_a_nul_byte_is_a_config_error(tmp_path: Path) -> None:
    """``contract: "tick.yaml\\0"`` names the route's contract, not a ValueError."""
    doc = document()
    doc["routes"][0]["contract"] = TICK + "\x00"
    assert "routes[0].contract (route 'ticks')" in error(tmp_path, doc)


def test_a_config_path_that_is_not_a_regular_file_is_refused(tmp_path: Path) -> None:
    """A FIFO given as the config file is refused at once (its open would wait)."""
    fifo = tmp_path / "service.fifo"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError, match="not a regular file"):
        load_config(fifo, {})


@pytest.mark.parametrize(
    ("section", "key", "value"),
    [
        ("batch", "timeout_s", float("inf")),
        ("batch", "linger_s", float("inf")),
        ("batch", "commit_interval_s", 1e300),
        ("service", "shutdown_timeout_s", float("inf")),
        ("service", "retry_backoff_max_s", 1e12),
        ("service", "startup_check_timeout_s", float("nan")),
        ("service", "startup_check_timeout_s", float("inf")),
        ("service", "startup_check_timeout_s", -1.0),
    ],
    ids=[
        "timeout-inf",
        "linger-inf",
        "commit-huge",
        "shutdown-inf",
        "backoff-huge",
        "check-nan",
        "check-inf",
        "check-negative",
    ],
)
def test_a_duration_must_be_finite_and_at_most_a_day(
    tmp_path: Path, section: str, key: str, value: float
) -> None:
    """A duration that is not a number of seconds in (0, 86400] is refused by name: an
    infinite shutdown timeout killed the shutdown watchdog's timer thread (OverflowError),
    a NaN or infinite start-up check kept the service from ever becoming ready."""
    message = error(tmp_path, document(**{section: {key: value}}))
    bound = "> 0.0" if value != value or value <= 0 else "<= 86400.0"
    assert message == f"{section}.{key}: expected float {bound}, got {value!r}"


def test_a_librdkafka_key_of_a_non_ascii_digit_is_a_config_error() -> None:
    """A null under the key '¹' (a digit to str.isdigit, not to int) is named, not a crash."""
    document = {"kafka": {"bootstrap_servers": "k:9092", "settings": {"\u00b9": None}}}
    with pytest.raises(ConfigError, match=r"kafka\.settings\['\u00b9'\]: expected"):
        config_from_mapping(document)
