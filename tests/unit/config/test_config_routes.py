"""Routes: names fit labels and logs, every source topic belongs to exactly one route."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from stream_validator.config.settings import ServiceConfig, load_config
from stream_validator.errors import ConfigError, ServiceExit
from stream_validator.service.app import run_service

TICK = str(Path(__file__).resolve().parents[3] / "config" / "contracts" / "tick.yaml")


def route(name: str, n: int, **sources: Any) -> dict[str, Any]:
    return {"name": name, "contract": TICK, "clean_topic": f"c{n}", "dlq_topic": f"d{n}", **sources}


def load(tmp_path: Path, *routes: dict[str, Any]) -> ServiceConfig:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"routes": list(routes)}))
    return load_config(path, {})


def test_a_pattern_routes_only_topics_it_matches_whole(tmp_path: Path) -> None:
    """'books' does not claim 'ticks.books': routing uses the subscription's full match."""
    config = load(
        tmp_path,
        route("books", 1, source_pattern="books"),
        route("ticks", 2, source_pattern=r"^ticks\..*"),
    )
    assert [r.name for r in config.routes if r.matches("ticks.books")] == ["ticks"]
    assert [r.subscription() for r in config.routes] == [["^(books)$"], [r"^(ticks\..*)$"]]


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ({"source_topics": ["md.x"]}, {"source_topics": ["md.y", "md.x"]}),
        ({"source_topics": ["md.ticks.a"]}, {"source_pattern": r"md\.ticks\..*"}),
        ({"source_pattern": r"md\..*"}, {"source_pattern": r"md\.ticks\..*"}),
        ({"source_pattern": r"md\.books|md\.ticks"}, {"source_pattern": r"md\.ticks\.a"}),
    ],
    ids=["topic-in-two-routes", "topic-matched-by-pattern", "nested-prefixes", "alternation"],
)
def test_routes_that_could_share_a_topic_are_refused(
    tmp_path: Path, first: dict[str, Any], second: dict[str, Any]
) -> None:
    """A topic that two routes could claim is a config error naming both routes."""
    with pytest.raises(ConfigError, match="routes one and two could both match"):
        load(tmp_path, route("one", 1, **first), route("two", 2, **second))


def test_patterns_with_diverging_prefixes_are_accepted(tmp_path: Path) -> None:
    """Two pattern routes load when their fixed prefixes cannot both start one topic."""
    config = load(
        tmp_path,
        route("books", 1, source_pattern=r"md\.books\..+"),
        route("ticks", 2, source_pattern=r"md\.ticks\..+"),
    )
    assert len(config.routes) == 2


def test_overlapping_routes_stop_the_service_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """run refuses the overlapping config before touching Kafka: exit 2, both routes named."""
    path = tmp_path / "c.yaml"
    routes = [route("one", 1, source_topics=["md.x"]), route("two", 2, source_pattern="md.*")]
    path.write_text(yaml.safe_dump({"routes": routes}))
    assert run_service(str(path), {}) == ServiceExit.CONFIG
    assert "routes one and two could both match topic 'md.x'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "name", ["has space", "x" * 101, "route\u00e9", "tab\there", "a/b", "new\nline", "{x}"]
)
def test_bad_route_names_are_refused(tmp_path: Path, name: str) -> None:
    """A route name is 1-100 characters of A-Z a-z 0-9 . _ - (it is a label and log field)."""
    with pytest.raises(ConfigError, match=r"routes\[0\]\.name must be 1-100 characters"):
        load(tmp_path, route(name, 1, source_topics=["in"]))


def test_longest_route_name_is_accepted(tmp_path: Path) -> None:
    """100 characters of the allowed set is a valid name."""
    name = "Az09._-" * 14 + "xx"
    assert load(tmp_path, route(name, 1, source_topics=["in"])).routes[0].name == name


def test_source_topic_must_be_a_kafka_topic_name(tmp_path: Path) -> None:
    """A listed topic that librdkafka would read as a regex ('^...') is refused."""
    with pytest.raises(ConfigError, match="is not a Kafka topic name"):
        load(tmp_path, route("r", 1, source_topics=["^md.*"]))


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        (r"md\.books\.raw\.([a-z]{1,300}){1,300}", "has {1,300} at position 22"),
        ("(" * 5000 + "a" + ")" * 5000, "nests groups more than 8 deep"),  # a RecursionError
    ],
)
def test_a_pattern_past_the_regex_bounds_names_route_and_key(
    tmp_path: Path, pattern: str, problem: str
) -> None:
    """Refused at load, naming the route, the key and the bound, never at subscribe."""
    with pytest.raises(ConfigError) as info:
        load(tmp_path, route("books", 1, source_pattern=pattern))
    assert f"routes[0].source_pattern (route 'books') {problem}" in str(info.value)
