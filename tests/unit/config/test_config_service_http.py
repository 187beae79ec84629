"""The health and metrics listen hosts and the resume token file of the ``service`` section."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from stream_validator.config.settings import load_config, read_resume_token
from stream_validator.errors import ConfigError, ServiceExit
from stream_validator.service.app import run_service
from tests.unit.config.test_config_errors import document, error

TOKEN = "0123456789abcdef0123456789abcdef"


@pytest.mark.parametrize(
    ("variable", "key"),
    [("SV_SERVICE__HEALTH_HOST", "service.health_host"), ("SV_METRICS__HOST", "metrics.host")],
)
@pytest.mark.parametrize("value", ["", "  "])
def test_an_empty_listen_host_is_a_config_error_naming_the_key(
    tmp_path: Path, variable: str, key: str, value: str
) -> None:
    """``SV_SERVICE__HEALTH_HOST=`` (or metrics) is refused, not a bind on every interface."""
    message = error(tmp_path, document(), {variable: value})
    assert message.startswith(f"{key} must not be empty")
    assert "0.0.0.0" in message  # says how to listen everywhere on purpose


def test_the_resume_token_file_is_relative_to_the_config_file(tmp_path: Path) -> None:
    """``service.resume_token_file`` resolves like the contract paths, and its token reads back
    without the final newline."""
    (tmp_path / "token").write_text(TOKEN + "\n")
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(document(service={"resume_token_file": "token"})))
    config = load_config(path, {})
    assert config.resume_token_file == str(tmp_path / "token")
    assert read_resume_token(config.resume_token_file) == TOKEN


def test_without_a_token_file_resume_has_no_token(tmp_path: Path) -> None:
    """The default is no token file (resume then refused by the service)."""
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(document()))
    assert load_config(path, {}).resume_token_file is None


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("short", "got 5 characters"),
        (TOKEN[:8] + " " + TOKEN, "without spaces"),
        ("", "got 0 characters"),
        ("é" * 20, "printable ASCII"),
    ],
)
def test_a_bad_token_is_refused_without_showing_it(
    tmp_path: Path, content: str, needle: str
) -> None:
    """A token too short, with a space or not ASCII: a ConfigError naming the key and file,
    never the token's text."""
    path = tmp_path / "token"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        read_resume_token(str(path))
    message = str(info.value)
    assert message.startswith(f"service.resume_token_file: the token in {path} must be")
    assert needle in message
    assert not content or content not in message


def test_a_missing_token_file_names_the_key_and_the_path(tmp_path: Path) -> None:
    """A token file that cannot be read is a ConfigError naming the key and the path."""
    with pytest.raises(ConfigError, match=r"service.resume_token_file: cannot read the token"):
        read_resume_token(str(tmp_path / "nope"))


def test_run_refuses_a_malformed_token_file_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``run`` with a token file that holds no valid token: exit 2 naming the key, before the
    health port listens, and the file's text is not logged."""
    (tmp_path / "token").write_text("hunter2 hunter2")
    doc = document(service={"resume_token_file": "token", "health_port": 0})
    doc["metrics"] = {"enabled": False}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(doc))
    assert run_service(str(path), {}) == ServiceExit.CONFIG
    err = capsys.readouterr().err
    assert "service.resume_token_file: the token in" in err
    assert "hunter2" not in err
