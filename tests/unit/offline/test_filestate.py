"""Offline validate applies the contract's per-symbol state: one partition, in file order."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_validator import DataSchemaContractVerifier, load_contract
from stream_validator.cli.main import main
from stream_validator.offline import validate_jsonl
from stream_validator.offline.filestate import FileState
from stream_validator.state import EventTally, SymbolStateTracker, distrusted
from stream_validator.verify import Violation, ViolationKind
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


def test_state_runs_across_batches_and_feeds_quarantined_lines_with_a_good_seq() -> None:
    """State carries over --batch-size boundaries; a line quarantined for another field
    (a bad price, a crossed book) still feeds its seq, so the feed's seqs show no gap."""
    records = [
        tick.json(1, symbol="A"),
        tick.json(2, symbol="A", price="x"),  # type_mismatch on price: seq 2 still fed
        tick.json(3, symbol="A"),
        tick.json(4, symbol="A", bid=101.0, ask=100.0),  # crossed book: fed
        tick.json(5, symbol="A", size=True),  # bad size: fed
        tick.json(6, symbol="A"),
    ]
    verifier = DataSchemaContractVerifier(load_contract(TICK))
    summary = validate_jsonl(verifier, io.BytesIO(lines(*records)), batch_size=2)
    assert summary.quarantined == 3
    assert summary.symbol_state is not None
    assert summary.symbol_state["events"] == {}


def test_a_line_whose_seq_failed_leaves_its_number_missing() -> None:
    """A line whose seq failed its own check (below min_value) feeds no seq: the next line
    of its symbol reports the number the file never gave."""
    records = [
        tick.json(1, symbol="A"),
        tick.json(-2, symbol="A"),  # below_min on seq: its seq is not fed
        tick.json(3, symbol="A"),
    ]
    verifier = DataSchemaContractVerifier(load_contract(TICK))
    summary = validate_jsonl(verifier, io.BytesIO(lines(*records)))
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


@pytest.mark.parametrize("batch_size", [0, 7, 250])
def test_state_from_decoded_records_matches_decoding_each_line(batch_size: int) -> None:
    """The file path feeds the state from the fast path's decoded records: over ticks with
    gaps, step-backs, stale times, held quotes, lines the fast path declines (a lowercase
    z, a basic-format time) and lines quarantined for a state field or another one, the
    events are those of one observe_record per line, decoded on its own, with the parts
    its violations distrust left out."""
    rng = random.Random(7)
    seqs: dict[str, int] = {}
    records = []
    for n in range(1500):
        symbol = rng.choice("ABCD")
        seqs[symbol] = seqs.get(symbol, 0) + rng.choice([1, 1, 1, 2, -2])
        second = n - rng.choice([0, 0, 0, 9])
        changes: dict[str, object] = {
            "symbol": symbol,
            "event_ts": f"2026-12-01T10:{second // 60 % 60:02d}:{second % 60:02d}Z",
        }
        if rng.random() < 0.3:
            changes.update(price=100.0, bid=99.5, ask=100.5)  # a held quote
        odd = rng.choice(
            [None] * 12
            + ["lower", "basic", "bad", "crossed", "size", "seq", "time", "nokey", "garbage"]
        )
        if odd == "lower":
            changes["event_ts"] = str(changes["event_ts"]).replace("Z", "z")
        elif odd == "basic":
            changes["event_ts"] = f"20261201T10{second // 60 % 60:02d}{second % 60:02d}Z"
        elif odd == "bad":
            changes["price"] = "x"
        elif odd == "crossed":
            changes.update(bid=101.0, ask=100.0)
        elif odd == "size":
            changes["size"] = True
        elif odd == "time":
            changes["event_ts"] = "yesterday"
        elif odd == "nokey":
            changes["symbol"] = None
        record = tick(max(seqs[symbol], 0), **changes)
        if odd == "seq":
            record["seq"] = str(record["seq"])
        records.append(json.dumps(record).encode() if odd != "garbage" else b"{")
    verifier = DataSchemaContractVerifier(load_contract(TICK))
    summary = validate_jsonl(verifier, io.BytesIO(lines(*records)), batch_size=batch_size)
    assert summary.symbol_state is not None

    contract = verifier.contract
    assert contract.state is not None
    report = verifier.validate_payloads(records)
    quarantined = {q.index: q.violations for q in report.quarantined_records}
    tracker = SymbolStateTracker(contract.state)
    tally = EventTally(5)
    for index, payload in enumerate(records):
        parts = distrusted(contract.state, quarantined.get(index, []))
        if "key" not in parts:
            tally.add(tracker.observe_record(0, json.loads(payload), parts))
    assert summary.symbol_state["events"] == tally.summary()
    assert summary.symbol_state["symbols"] == len(tracker)
    assert set(tally.counts) >= {"sequence_gap", "sequence_regression", "event_time_regression"}


def test_the_file_path_feeds_the_state_from_the_verdict_scan_rows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the Rust core, validate hands the tracker the state's fields as the verdict scan
    read them (no second decode of each line: the decoding path is never taken), and the
    events are those of the decoding path."""
    from stream_validator.state import StateFeed

    records = [
        json.dumps(tick(seq, symbol=symbol), separators=(",", ":")).encode()
        for seq, symbol in [(1, "A"), (2, "A"), (1, "B"), (4, "A"), (3, "A"), (2, "B")]
    ]
    verifier = DataSchemaContractVerifier(load_contract(TICK))
    assert verifier._rust is not None, "the test needs the native core"
    with monkeypatch.context() as patched:  # no scan rows: the lines are decoded for the state
        patched.setattr(DataSchemaContractVerifier, "state_rows", lambda *a, **k: None)
        decoding = validate_jsonl(verifier, io.BytesIO(lines(*records)), batch_size=4)
    assert decoding.symbol_state is not None

    def no_decode(*args: object, **kwargs: object) -> None:
        raise AssertionError("the state decoded the lines again")

    monkeypatch.setattr(StateFeed, "observe_many", no_decode)
    scanned = validate_jsonl(verifier, io.BytesIO(lines(*records)), batch_size=4)
    assert scanned.symbol_state == decoding.symbol_state
    assert scanned.symbol_state["symbols"] == 2
    assert scanned.symbol_state["events"], "a gap and a step-back were expected"


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(
            st.builds(
                Violation,
                st.sampled_from(
                    [None, "symbol", "seq", "event_ts", "bid", "ask", "price", "seq.x", "bid[0]"]
                ),
                st.sampled_from(list(ViolationKind)),
                st.just("m"),
            ),
            min_size=1,
            max_size=3,
        ),
        max_size=12,
    )
)
def test_the_parts_remembered_per_violated_fields_are_distrusted_ones(
    records: list[list[Violation]],
) -> None:
    """``FileState._parts`` (remembered per tuple of violated fields) is ``distrusted`` of
    every record, however the records repeat their fields and whatever their kinds."""
    verifier = DataSchemaContractVerifier(load_contract(TICK))
    state = FileState(verifier)
    spec = verifier.contract.state
    assert spec is not None
    for violations in records + records[::-1]:
        assert state._parts(violations) == distrusted(spec, violations)
