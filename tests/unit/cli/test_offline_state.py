"""Offline validate applies the contract's per-symbol state: one partition, in file order."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from stream_validator import DataSchemaContractVerifier, load_contract
from stream_validator.cli.main import main
from stream_validator.offline import validate_jsonl
from tests.support.ticks import tick

TICK = Path(__file__).resolve().parents[3] / "config" / "contracts" / "tick.yaml"


def lines(*records: bytes) -> bytes:
    return b"".join(record + b"\n" for record in records)


def test_validate_reports_state_events_in_file_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A gap and a step back of AAPL are reported with their symbol; records stay valid."""
    source = tmp_path / "in.jsonl"
    seqs = [1, 2, 5, 6, 3, 7]
    source.write_bytes(lines(*(tick.json(seq, symbol="AAPL") for seq in seqs)))
    assert main(["validate", "--contract", str(TICK), str(source), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["valid"] == 6
    assert summary["symbol_state"]["events"] == {
        "sequence_gap": {"count": 1, "examples": ["AAPL"]},
        "sequence_regression": {"count": 1, "examples": ["AAPL"]},
    }
    assert summary["symbol_state"]["symbols"] == 1


def test_state_runs_across_batches_and_skips_bad_lines(tmp_path: Path) -> None:
    """State carries over --batch-size boundaries; a line with a bad field is not fed (the
    next one shows the gap), a rule-quarantined one is."""
    records = [
        tick.json(1, symbol="A"),
        tick.json(2, symbol="A", price="x"),  # type_mismatch: not fed
        tick.json(3, symbol="A"),  # so 3 after 1 is a gap
        tick.json(4, symbol="A", bid=101.0, ask=100.0),  # crossed book: fed
        tick.json(5, symbol="A"),
    ]
    verifier = DataSchemaContractVerifier(load_contract(TICK))
    summary = validate_jsonl(verifier, io.BytesIO(lines(*records)), batch_size=2)
    assert summary.batches == 3
    assert summary.symbol_state is not None
    assert summary.symbol_state["events"] == {"sequence_gap": {"count": 1, "examples": ["A"]}}


def test_terminal_summary_escapes_symbols(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A symbol with a control character is printed escaped."""
    source = tmp_path / "in.jsonl"
    source.write_bytes(lines(tick.json(1, symbol="A\x1b[2J"), tick.json(3, symbol="A\x1b[2J")))
    assert main(["validate", "--contract", str(TICK), str(source)]) == 0
    out = capsys.readouterr().out
    assert "per-symbol state events: sequence_gap=1 (e.g. 'A\\x1b[2J')" in out
    assert "\x1b" not in out
