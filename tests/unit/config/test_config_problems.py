"""A config file's error lists every problem of one stage in one run, one per line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from stream_validator.config.settings import load_config
from stream_validator.errors import ConfigError

REPO = Path(__file__).resolve().parents[3]
TICK = str(REPO / "config" / "contracts" / "tick.yaml")


def route(name: str, **changes: Any) -> dict[str, Any]:
    document = {
        "name": name,
        "source_topics": [f"{name}-in"],
        "contract": TICK,
        "clean_topic": f"{name}-out",
        "dlq_topic": f"{name}-dlq",
    }
    document.update(changes)
    return document


def problems(tmp_path: Path, document: dict[str, Any]) -> list[str]:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(document))
    with pytest.raises(ConfigError) as info:
        load_config(path, {})
    head, *lines = str(info.value).splitlines()
    assert head == f"{path}: {len(lines)} problems:"
    return [line.strip() for line in lines]


def test_unknown_keys_wrong_types_bounds_and_missing_keys_in_one_run(tmp_path: Path) -> None:
    """Every key's problem, in every section and route, is listed at once."""
    document = {
        "batch": {"max_records": 0, "timeout_s": "fast", "size": 3},
        "routes": [route("a", clean_topic=7), {"name": "b"}],
    }
    assert problems(tmp_path, document) == [
        "routes[0].clean_topic (route 'a'): expected str, got int",
        "routes[1] (route 'b'): missing required key 'contract'",
        "routes[1] (route 'b'): missing required key 'clean_topic'",
        "routes[1] (route 'b'): missing required key 'dlq_topic'",
        "batch: unknown key(s) size (allowed: commit_interval_s, linger_s,"
        " max_in_flight_records, max_records, timeout_s)",
        "batch.max_records: expected int >= 1, got 0",
        "batch.timeout_s: expected float, got str",
    ]


def test_every_route_and_its_contract_in_one_run(tmp_path: Path) -> None:
    """A bad topic name, a missing contract file and a bad contract each name their route."""
    bad_contract = tmp_path / "bad.yaml"
    bad_contract.write_text("name: x\nfields:\n  - {name: a, type: flot, nulable: true}\n")
    document = {
        "routes": [
            route("a", clean_topic="no spaces"),
            route("b", contract=str(tmp_path / "missing.yaml")),
            route("c", contract=str(bad_contract)),
        ]
    }
    listed = problems(tmp_path, document)
    assert len(listed) == 4
    assert listed[0].startswith("routes[0].clean_topic (route 'a'): 'no spaces' is not a Kafka")
    assert listed[1].startswith("routes[1].contract (route 'b'): ") and "cannot read" in listed[1]
    assert listed[2].startswith(f"routes[2].contract (route 'c'): {bad_contract}: fields[0] (")
    assert listed[3].startswith(f"routes[2].contract (route 'c'): {bad_contract}: fields[0].type")


def test_the_rules_between_keys_are_listed_together(tmp_path: Path) -> None:
    """Three broken rules between service keys are three lines of one error."""
    document = {
        "batch": {"timeout_s": 90},
        "service": {"liveness_timeout_s": 60, "retry_backoff_s": 9, "retry_backoff_max_s": 1},
        "metrics": {"host": " "},
        "routes": [route("a")],
    }
    listed = problems(tmp_path, document)
    assert [line.split(" ")[0] for line in listed] == [
        "service.liveness_timeout_s",
        "service.retry_backoff_s",
        "metrics.host",
    ]


def test_every_bad_environment_variable_in_one_run(tmp_path: Path) -> None:
    """Two SV_* variables that cannot be applied are both named, with the file's key
    problems, in one error."""
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"batch": {"max_records": 0}, "routes": [route("a")]}))
    environ = {
        "SV_ROUTES__X": "1",
        "SV_BATCH__MAX_RECORDS__DEEP": "1",
        "SV_SERVICE__LOG_LEVEL": "DEBUG",  # applied
    }
    with pytest.raises(ConfigError) as info:
        load_config(path, environ)
    head, *lines = str(info.value).splitlines()
    assert head == f"{path}: 3 problems:"
    assert [line.strip() for line in lines] == [
        "SV_BATCH__MAX_RECORDS__DEEP: batch.max_records is not a section",
        "SV_ROUTES__X: routes cannot be set from the environment",
        "batch.max_records: expected int >= 1, got 0",
    ]


def test_bad_environment_variables_alone_are_listed(tmp_path: Path) -> None:
    """With a valid file, the SV_* variables that cannot be applied are still all named."""
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"service": {"log_level": "INFO"}, "routes": [route("a")]}))
    environ = {"SV_ROUTES__X": "1", "SV_SERVICE__LOG_LEVEL__Y": "1"}
    with pytest.raises(ConfigError) as info:
        load_config(path, environ)
    assert str(info.value).splitlines()[1:] == [
        "  SV_ROUTES__X: routes cannot be set from the environment",
        "  SV_SERVICE__LOG_LEVEL__Y: service.log_level is not a section",
    ]
