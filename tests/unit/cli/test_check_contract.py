"""The ``check-contract`` command: every contract file judged, every problem named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stream_validator.cli.main import main

REPO = Path(__file__).resolve().parents[3]
TICK = REPO / "config" / "contracts" / "tick.yaml"


def jsonl(*records: object) -> bytes:
    return b"".join(
        (r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in records
    )


def test_check_contract_ok(capsys: pytest.CaptureFixture[str]) -> None:
    """check-contract exits 0 for the shipped contracts and names each."""
    assert main(["check-contract", str(TICK)]) == 0
    assert "contract 'tick'" in capsys.readouterr().out


def test_check_contract_bad(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """check-contract exits 1 for a malformed file and says which file and why."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nfields: [{name: a, type: int, min_value: 2, max_value: 1}]\n")
    assert main(["check-contract", str(TICK), str(bad)]) == 1
    err = capsys.readouterr().err
    assert str(bad) in err and "min_value" in err


def test_check_contract_reports_every_problem_of_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """check-contract lists a duplicate key and every other problem of the file, not the first."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(TICK.read_text() + "max_allowed_null_pct: 50\ncolour: red\n")
    assert main(["check-contract", str(bad)]) == 1
    err = capsys.readouterr().err
    assert "duplicate key 'max_allowed_null_pct'" in err and "unknown key(s) colour" in err
