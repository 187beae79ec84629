"""A character YAML refuses (a control character) in a config or contract file is a clear error
with its line and column and the command's usage/config exit code, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_validator.cli.main import main
from stream_validator.errors import CheckExit, ServiceExit

# \x01 is at line 4, column 7.
CONTRACT = "name: x\nfields:\n  - {name: a, type: int}\n# bad \x01 here\n"
WHERE = "not valid YAML at line 4, column 7: character U+0001 is not allowed"


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def config_text(contract: Path) -> str:
    return (
        "routes:\n"
        f"  - {{name: r, contract: '{contract}', source_topics: [a],"
        " clean_topic: b, dlq_topic: c}\n"
    )


def test_validate_with_such_a_contract_exits_2_naming_the_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """validate --contract: exit 2, 'line 4, column 7', no traceback."""
    contract = write(tmp_path / "c.yaml", CONTRACT)
    records = write(tmp_path / "in.jsonl", '{"a": 1}\n')
    assert main(["validate", "--contract", str(contract), str(records)]) == CheckExit.USAGE
    assert f"{contract}: {WHERE}" in capsys.readouterr().err


def test_check_contract_reports_such_a_file_as_malformed_with_the_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """check-contract: the file is INVALID (exit 1, like any malformed contract) at line 4."""
    contract = write(tmp_path / "c.yaml", CONTRACT)
    assert main(["check-contract", str(contract)]) == CheckExit.INVALID
    assert capsys.readouterr().err == f"INVALID {contract}: {WHERE}" + (
        " (control characters must be written as escapes in a quoted string)\n"
    )


@pytest.mark.parametrize("char", ["\x01", "\x1b", "\x7f", "\x9b", "\ufffe"])
def test_run_with_such_a_config_exits_2_naming_the_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], char: str
) -> None:
    """run --config: exit 2 (config), the file and line 2, column 8 in the logged error."""
    contract = write(tmp_path / "c.yaml", "name: x\nfields: [{name: a, type: int}]\n")
    config = write(tmp_path / "s.yaml", f"kafka:\n  a: b {char}\n" + config_text(contract))
    assert main(["run", "--config", str(config)]) == ServiceExit.CONFIG
    err = capsys.readouterr().err
    assert f"{config}: not valid YAML at line 2, column 8: character U+{ord(char):04X}" in err


def test_run_with_such_a_contract_exits_2_naming_both_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """run --config whose route's contract holds \\x01: exit 2, the route, contract and line."""
    contract = write(tmp_path / "c.yaml", CONTRACT)
    config = write(tmp_path / "s.yaml", config_text(contract))
    assert main(["run", "--config", str(config)]) == ServiceExit.CONFIG
    err = capsys.readouterr().err
    assert "routes[0].contract (route 'r')" in err and f"{contract}: {WHERE}" in err


def test_create_topics_with_such_a_config_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every command that loads a config (here create-topics) says where, with exit 2."""
    config = write(tmp_path / "s.yaml", "routes: []\x00\n")
    assert main(["create-topics", "--config", str(config)]) == CheckExit.USAGE
    assert "not valid YAML at line 1, column 11: character U+0000" in capsys.readouterr().err
