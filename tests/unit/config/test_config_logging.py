"""service.log_summary_interval_s: a duration of at most a day, or 0 (no summary)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from stream_validator.config.settings import load_config

from .test_config_errors import document, error


def loaded(tmp_path: Path, env: dict[str, str] | None = None, **service: object) -> float:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(document(service=service) if service else document()))
    return load_config(path, env or {}).log_summary_interval_s


def test_the_summary_interval_defaults_to_a_minute(tmp_path: Path) -> None:
    """Unset: a summary every 60 s."""
    assert loaded(tmp_path) == 60.0


@pytest.mark.parametrize("value", [0, 0.5, 86_400])
def test_the_summary_interval_may_be_zero_or_up_to_a_day(tmp_path: Path, value: float) -> None:
    """0 (off), a fraction of a second and a whole day are accepted as given."""
    assert loaded(tmp_path, log_summary_interval_s=value) == value


def test_the_environment_sets_the_summary_interval(tmp_path: Path) -> None:
    """SV_SERVICE__LOG_SUMMARY_INTERVAL_S overrides the file."""
    env = {"SV_SERVICE__LOG_SUMMARY_INTERVAL_S": "5"}
    assert loaded(tmp_path, env, log_summary_interval_s=30) == 5.0


@pytest.mark.parametrize(
    ("value", "bound"),
    [(-1.0, ">= 0.0"), (86_401.0, "<= 86400.0"), (math.inf, "<= 86400.0"), (math.nan, ">= 0.0")],
    ids=["negative", "over-a-day", "inf", "nan"],
)
def test_a_bad_summary_interval_is_refused_by_name(
    tmp_path: Path, value: float, bound: str
) -> None:
    """Negative, past a day, infinite or NaN: refused at load, naming the key."""
    message = error(tmp_path, document(service={"log_summary_interval_s": value}))
    assert message == f"service.log_summary_interval_s: expected float {bound}, got {value!r}"


def test_a_summary_interval_that_is_not_a_number_is_refused(tmp_path: Path) -> None:
    """A string is refused with the key and the type."""
    message = error(tmp_path, document(service={"log_summary_interval_s": "often"}))
    assert message == "service.log_summary_interval_s: expected float, got str"
