"""A route's shadow_contract: loaded and checked like its contract, relative to the file."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from stream_validator.config.settings import load_config
from stream_validator.errors import ConfigError
from tests.support.contractfiles import BROKEN, V2
from tests.support.ticks import TICK_YAML


def write(tmp_path: Path, **route: object) -> Path:
    path = tmp_path / "service.yaml"
    entry = {"name": "ticks", "source_topics": ["src"], "contract": str(TICK_YAML),
             "clean_topic": "clean", "dlq_topic": "dlq", **route}  # fmt: skip
    path.write_text(yaml.safe_dump({"routes": [entry]}))
    return path


def test_a_shadow_contract_is_loaded_relative_to_the_config_file(tmp_path: Path) -> None:
    """shadow_contract names a file beside the config: its contract and path are kept."""
    (tmp_path / "candidate.yaml").write_text(V2)
    (route,) = load_config(write(tmp_path, shadow_contract="candidate.yaml"), {}).routes
    assert route.shadow_contract is not None
    assert (route.shadow_contract.name, route.shadow_contract.version) == ("tick", "2")
    assert route.shadow_contract_path == str(tmp_path / "candidate.yaml")
    assert route.contract.version == "1"


def test_no_shadow_contract_is_the_default(tmp_path: Path) -> None:
    """Without the key the route has no shadow."""
    (route,) = load_config(write(tmp_path), {}).routes
    assert (route.shadow_contract, route.shadow_contract_path) == (None, None)


@pytest.mark.parametrize(
    ("text", "problem"),
    [(BROKEN, "flaot"), (None, "cannot read")],
    ids=["malformed", "missing"],
)
def test_a_bad_shadow_contract_is_a_config_error_naming_the_key(
    tmp_path: Path, text: str | None, problem: str
) -> None:
    """A shadow contract that does not load fails the config like a bad contract would,
    the message naming routes[0].shadow_contract."""
    if text is not None:
        (tmp_path / "candidate.yaml").write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_config(write(tmp_path, shadow_contract="candidate.yaml"), {})
    message = str(caught.value)
    assert "routes[0].shadow_contract (route 'ticks')" in message
    assert problem in message


def test_an_empty_shadow_contract_path_is_refused(tmp_path: Path) -> None:
    """shadow_contract: '' is not a path."""
    with pytest.raises(ConfigError, match="shadow_contract"):
        load_config(write(tmp_path, shadow_contract=""), {})
