"""validate_jsonl: a JSON-lines input streamed through the verifier, memory flat."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from stream_validator import DataSchemaContractVerifier, load_contract
from stream_validator.offline import lines as input_lines
from stream_validator.offline import validate_jsonl
from tests.support.ticks import TickFactory

REPO = Path(__file__).resolve().parents[3]
TICK = REPO / "config" / "contracts" / "tick.yaml"


def jsonl(*records: object) -> bytes:
    return b"".join(
        (r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in records
    )


def test_summary_bounds_payload_derived_names(tmp_path: Path, make_tick: TickFactory) -> None:
    """90,000 unique unknown keys keep the summary small: 50 names shown, the rest counted."""
    keys = {f"k{i}": 1 for i in range(90_000)}
    source = io.BytesIO(
        jsonl(*(make_tick(i, **dict(list(keys.items())[i::20])) for i in range(20)))
    )
    verifier = DataSchemaContractVerifier(load_contract(TICK))
    summary = validate_jsonl(verifier, source, batch_size=5).as_dict()
    assert len(summary["observed_unknown_fields"]) == 50
    assert summary["observed_unknown_fields_left_out"] >= 89_950
    assert len(json.dumps(summary)) < 20_000


def test_batch_size_scopes_the_null_ceiling(make_tick: TickFactory) -> None:
    """With --batch-size the null ceiling is judged per batch: one bad batch fails the run."""
    verifier = DataSchemaContractVerifier(load_contract(TICK))
    data = jsonl(*(make_tick(i, bid=None if i == 150 else 99.5) for i in range(300)))
    whole = validate_jsonl(verifier, io.BytesIO(data))
    assert whole.is_valid  # 1 null in 300 = 0.33% <= 1%
    batched = validate_jsonl(verifier, io.BytesIO(data), batch_size=50)
    assert batched.batches == 6 and batched.invalid_batch_count == 1  # 1 in 50 = 2% > 1%
    assert batched.invalid_batches[0]["lines"] == [151, 200]


def test_validate_streams_blocks_like_line_by_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make_tick: TickFactory
) -> None:
    """Lines split across read blocks, CRLF, blank lines and batch edges change nothing."""
    lines = [
        json.dumps(make_tick(i, **({"size": -1} if i % 3 == 0 else {}))).encode() for i in range(9)
    ]
    data = b"\r\n".join(lines[:4]) + b"\r\n\n  \n" + b"\n".join(lines[4:]) + b"\n" + b"{"
    verifier = DataSchemaContractVerifier(load_contract(TICK))
    outputs = []
    for block in (7, 1 << 20):
        monkeypatch.setattr(input_lines, "BLOCK_BYTES", block)
        valid, dlq = io.BytesIO(), io.BytesIO()
        summary = validate_jsonl(
            verifier, io.BytesIO(data), batch_size=4, valid_out=valid, dlq_out=dlq
        )
        outputs.append((summary.as_dict(), valid.getvalue(), dlq.getvalue()))
    assert outputs[0] == outputs[1]
    summary_dict, valid_bytes, dlq_bytes = outputs[0]
    assert summary_dict["lines"] == 12 and summary_dict["blank_lines_skipped"] == 2
    assert valid_bytes == b"".join(line + b"\n" for i, line in enumerate(lines) if i % 3)
    assert [json.loads(e)["line"] for e in dlq_bytes.splitlines()] == [1, 4, 9, 12]
    assert [d["lines"] for d in summary_dict["invalid_batch_details"]] == [
        [1, 4],
        [7, 10],
        [11, 12],
    ]


def test_a_line_over_the_limit_is_never_held_whole(make_tick: TickFactory) -> None:
    """A 20 MiB line (a JSON array dump given by mistake) between valid lines, and again
    unended at the end of the input: each is quarantined as oversized with its true length,
    its DLQ entry holds only its first max_payload_bytes + 1 bytes (``raw_truncated``), and
    the lines around it are judged as usual."""
    limit = 1000
    verifier = DataSchemaContractVerifier(load_contract(TICK), max_payload_bytes=limit)
    huge = b"[" + b"1," * (10 << 20) + b"1]"
    good = [make_tick.json(1), make_tick.json(2)]
    data = good[0] + b"\n" + huge + b"\n" + good[1] + b"\n" + huge
    valid, dlq = io.BytesIO(), io.BytesIO()
    summary = validate_jsonl(verifier, io.BytesIO(data), valid_out=valid, dlq_out=dlq)
    assert (summary.lines, summary.valid, summary.quarantined) == (4, 2, 2)
    assert valid.getvalue() == good[0] + b"\n" + good[1] + b"\n"
    entries = [json.loads(line) for line in dlq.getvalue().splitlines()]
    assert [entry["line"] for entry in entries] == [2, 4]
    for entry in entries:
        assert (entry["raw_truncated"], entry["raw_length"]) == (True, len(huge))
        assert len(entry["raw"]) == limit + 1
        (violation,) = entry["violations"]
        assert violation["kind"] == "oversized"
        assert f"payload is {len(huge)} bytes, above" in violation["message"]
        assert f"payload is {len(huge)} bytes, above" in entry["violation_reason"]
