"""A route's ``circuit_breaker`` section: parsed into a BreakerSpec, errors name the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from stream_validator.config.breaker import BreakerAction, BreakerSpec
from stream_validator.config.settings import ServiceConfig, load_config
from stream_validator.errors import ConfigError

TICK = str(Path(__file__).resolve().parents[3] / "config" / "contracts" / "tick.yaml")


def load(tmp_path: Path, breaker: Any) -> ServiceConfig:
    route = {"name": "ticks", "source_topics": ["t"], "contract": TICK}
    route |= {"clean_topic": "c", "dlq_topic": "d", "circuit_breaker": breaker}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"routes": [route]}))
    return load_config(path, {})


def test_a_route_without_the_section_has_no_breaker(tmp_path: Path) -> None:
    """No ``circuit_breaker`` key: the route runs without a breaker."""
    path = tmp_path / "c.yaml"
    route = {"name": "r", "source_topics": ["t"], "contract": TICK}
    path.write_text(yaml.safe_dump({"routes": [route | {"clean_topic": "c", "dlq_topic": "d"}]}))
    assert load_config(path, {}).routes[0].circuit_breaker is None


def test_the_section_becomes_the_routes_breaker_spec(tmp_path: Path) -> None:
    """Given keys set, the others keep BreakerSpec's defaults."""
    spec = load(tmp_path, {"action": "pause", "window_records": 50, "cool_down_s": 2})
    assert spec.routes[0].circuit_breaker == BreakerSpec(
        action=BreakerAction.PAUSE, window_records=50, cool_down_s=2
    )


def test_an_empty_section_is_a_breaker_with_the_defaults(tmp_path: Path) -> None:
    """``circuit_breaker: {}`` turns the breaker on with every default (action alert)."""
    assert load(tmp_path, {}).routes[0].circuit_breaker == BreakerSpec()


@pytest.mark.parametrize(
    ("breaker", "problem"),
    [
        ({"action": "stop"}, "action must be alert or pause, got 'stop'"),
        ({"action": ["pause"]}, r"action must be alert or pause, got \['pause'\]"),
        ({"window_records": "many"}, "window_records must be a whole number"),
        ({"max_quarantined_share": 50}, r"max_quarantined_share must be in \[0, 1\)"),
        ({"probe_records": 0}, "probe_records must be >= 1"),
        # The window is a byte per record, allocated at start-up: 10**12 was a MemoryError.
        ({"window_records": 10**12}, "window_records must be at most 1,000,000"),
        ({"cool_down_s": float("nan")}, r"cool_down_s must be in \[0, 86400\]"),
        ({"cool_down_s": float("inf")}, r"cool_down_s must be in \[0, 86400\]"),
        ({"treshold": 1}, r"unknown key\(s\) treshold"),
        ("pause", "expected mapping"),
    ],
    ids=[
        "action",
        "action-list",
        "type",
        "percent",
        "bound",
        "huge-window",
        "nan-cool-down",
        "inf-cool-down",
        "unknown-key",
        "not-a-mapping",
    ],
)
def test_a_bad_section_names_the_route_and_the_key(
    tmp_path: Path, breaker: Any, problem: str
) -> None:
    """The error names the file, routes[0].circuit_breaker, the route and the problem."""
    where = r"c\.yaml: routes\[0\]\.circuit_breaker \(route 'ticks'\)"
    with pytest.raises(ConfigError, match=f"{where}.*{problem}"):
        load(tmp_path, breaker)
