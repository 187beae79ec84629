"""The ``validate`` command: a JSON-lines file against a contract."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stream_validator.cli.main import main
from tests.support.ticks import TickFactory

REPO = Path(__file__).resolve().parents[3]
TICK = REPO / "config" / "contracts" / "tick.yaml"


def jsonl(*records: object) -> bytes:
    return b"".join(
        (r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in records
    )


def test_validate_writes_valid_and_dlq(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make_tick: TickFactory
) -> None:
    """Valid lines go out unchanged, DLQ entries carry line, violations and the raw line."""
    source = tmp_path / "in.jsonl"
    source.write_bytes(
        jsonl(make_tick(1), make_tick(2, price="190.5"), b"\xffgarbage", make_tick(3))
    )
    valid, dlq = tmp_path / "valid.jsonl", tmp_path / "dlq.jsonl"
    status = main(
        [
            "validate",
            "--contract",
            str(TICK),
            str(source),
            "--valid-out",
            str(valid),
            "--dlq-out",
            str(dlq),
        ]
    )
    assert status == 1
    assert valid.read_bytes() == jsonl(make_tick(1), make_tick(3))
    entries = [json.loads(line) for line in dlq.read_bytes().splitlines()]
    assert [e["line"] for e in entries] == [2, 3]
    assert entries[0]["violations"] == [
        {
            "field": "price",
            "kind": "type_mismatch",
            "message": "field 'price': expected float, got str '190.5'",
        }
    ]
    assert entries[0]["raw"] == json.dumps(make_tick(2, price="190.5"))
    assert entries[1]["raw_encoding"] == "base64"
    out = capsys.readouterr().out
    assert "2 valid, 2 quarantined" in out and "verdict: INVALID" in out


def test_validate_all_valid_exits_zero(tmp_path: Path, make_tick: TickFactory) -> None:
    """A clean file exits 0."""
    source = tmp_path / "in.jsonl"
    source.write_bytes(jsonl(*(make_tick(i) for i in range(10))))
    assert main(["validate", "--contract", str(TICK), str(source)]) == 0


def test_validate_json_summary(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make_tick: TickFactory
) -> None:
    """--json prints counts, violations by kind/field, null rates, drift and the verdict."""
    source = tmp_path / "in.jsonl"
    source.write_bytes(
        jsonl(make_tick(1, bid=None), make_tick(2, venue="X"), make_tick(3, size=-1), b"", [1])
    )
    assert main(["validate", "--contract", str(TICK), str(source), "--json"]) == 1
    summary = json.loads(capsys.readouterr().out)
    assert summary["records"] == 4 and summary["blank_lines_skipped"] == 1
    assert summary["valid"] == 2 and summary["quarantined"] == 2
    assert summary["violations_by_kind"] == {"below_min": 1, "not_a_mapping": 1}
    assert summary["violations_by_field"] == {"size": 1, "<record>": 1}
    assert summary["null_rates_overall"]["bid"] == 50.0
    assert summary["observed_unknown_fields"] == ["venue"]
    assert summary["verdict"] == "INVALID"


def test_validate_reads_stdin(tmp_path: Path, make_tick: TickFactory) -> None:
    """'-' reads the input from stdin (through the real console entry point)."""
    proc = subprocess.run(
        [sys.executable, "-m", "stream_validator", "validate", "--contract", str(TICK), "-"],
        input=jsonl(make_tick(1)),
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert b"verdict: VALID" in proc.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "in.jsonl"],
        ["validate", "--contract", str(TICK), "--batch-size", "-1", "in.jsonl"],
        ["nonsense"],
    ],
)
def test_usage_errors_exit_two(argv: list[str]) -> None:
    """Bad arguments exit 2."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2


def test_missing_input_or_bad_contract_exit_two(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing input file or malformed contract is a setup error: exit 2 with a message."""
    assert main(["validate", "--contract", str(TICK), str(tmp_path / "absent.jsonl")]) == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nfields: []\n")
    assert main(["validate", "--contract", str(bad), "-"]) == 2
    err = capsys.readouterr().err
    assert "absent.jsonl" in err and "bad.yaml" in err


def test_validate_quarantines_hostile_lines(tmp_path: Path, make_tick: TickFactory) -> None:
    """Nesting at the decoder limit and duplicate keys become DLQ lines; the run completes."""
    deep = b"[" * 1000 + b"]" * 1000
    duplicate = json.dumps(make_tick(2, price=190.5)).replace(
        '"price": 190.5', '"price": -1, "price": 190.5'
    )
    source = tmp_path / "in.jsonl"
    source.write_bytes(jsonl(deep, make_tick(1, price=[[[]]]), duplicate.encode(), make_tick(3)))
    dlq = tmp_path / "dlq.jsonl"
    status = main(["validate", "--contract", str(TICK), str(source), "--dlq-out", str(dlq)])
    assert status == 1
    entries = [json.loads(line) for line in dlq.read_bytes().splitlines()]
    assert [(e["line"], [v["kind"] for v in e["violations"]]) for e in entries] == [
        (1, ["not_a_mapping"]),
        (2, ["type_mismatch"]),
        (3, ["duplicate_key"]),
    ]
    assert entries[2]["violations"][0]["field"] == "price"


FLAGGED_CONTRACT = """\
name: orders
fields:
  - {name: sym, type: str}
  - {name: qty, type: int, min_value: 1, action: flag}
  - {name: px, type: float, min_value: 0}
rules:
  - {name: big, check: "qty <= 1000", action: flag}
"""
ORDERS = [
    {"sym": "A", "qty": 5, "px": 1.0},
    {"sym": "A", "qty": 0, "px": 1.0},
    {"sym": "A", "qty": 5000, "px": 1.0},
    {"sym": "A", "qty": 0, "px": -1.0},
]


def test_validate_json_counts_flagged_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--json gives flagged, flagged_by_rule and flagged_by_field (records that flowed)."""
    contract = tmp_path / "orders.yaml"
    contract.write_text(FLAGGED_CONTRACT)
    source = tmp_path / "in.jsonl"
    source.write_bytes(jsonl(*ORDERS))
    assert main(["validate", "--contract", str(contract), str(source), "--json"]) == 1
    summary = json.loads(capsys.readouterr().out)
    assert (summary["valid"], summary["quarantined"], summary["flagged"]) == (3, 1, 2)
    assert summary["flagged_by_rule"] == {"big": 1}
    assert summary["flagged_by_field"] == {"qty": {"below_min": 1}}


def test_validate_summary_shows_flagged_records(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The terminal summary says how many valid records were flagged, by rule and field."""
    contract = tmp_path / "orders.yaml"
    contract.write_text(FLAGGED_CONTRACT)
    source = tmp_path / "in.jsonl"
    source.write_bytes(jsonl(*ORDERS))
    main(["validate", "--contract", str(contract), str(source)])
    out = capsys.readouterr().out
    assert "3 valid (2 flagged), 1 quarantined" in out
    assert "flagged by rule: big=1" in out and "flagged by field: qty below_min=1" in out


def test_validate_dlq_entry_marks_flagged_violations(tmp_path: Path) -> None:
    """A quarantined line's DLQ entry lists its flagged violation with action flag."""
    contract = tmp_path / "orders.yaml"
    contract.write_text(FLAGGED_CONTRACT)
    source, dlq = tmp_path / "in.jsonl", tmp_path / "dlq.jsonl"
    source.write_bytes(jsonl(*ORDERS))
    main(["validate", "--contract", str(contract), str(source), "--dlq-out", str(dlq)])
    (entry,) = [json.loads(line) for line in dlq.read_text().splitlines()]
    assert [(v["field"], v.get("action")) for v in entry["violations"]] == [
        ("px", None),
        ("qty", "flag"),
    ]
