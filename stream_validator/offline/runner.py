"""Offline validation of a JSON-lines input: no Kafka involved.

``validate_jsonl`` streams the lines through the verifier in batches, writes the valid
lines and the DLQ lines (``dlq.jsonlines``) as they are judged, and folds each batch's
report into a ``FileSummary``: memory stays flat however long the input. When the native
core judges the contract, the blocks of the input are judged in place (``inplace``);
else line by line here, the reference both give the same outputs as.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import IO, Any

from stream_validator.dlq.jsonlines import dlq_line
from stream_validator.offline.filestate import FileState
from stream_validator.offline.inplace import PROGRESS_EVERY, in_place, judge_in_place
from stream_validator.offline.lines import blocks, without
from stream_validator.offline.summary import FileSummary
from stream_validator.state.native import native_wanted
from stream_validator.verify import BatchAccumulator, DataSchemaContractVerifier

__all__ = ["PROGRESS_EVERY", "open_input", "validate_jsonl"]


def validate_jsonl(
    verifier: DataSchemaContractVerifier,
    source: IO[bytes],
    *,
    batch_size: int = 0,
    valid_out: IO[bytes] | None = None,
    dlq_out: IO[bytes] | None = None,
    progress: IO[str] | None = None,
) -> FileSummary:
    """Stream a JSON-lines input through the verifier in batches (0 = one batch).

    Memory stays flat: records are written out as they are judged and only counts
    are kept. Blank lines are skipped and counted.
    """
    contract = verifier.contract
    summary = FileSummary(contract.name, contract.version)
    native = native_wanted(os.environ)
    state = FileState(verifier, native=native) if contract.state is not None else None
    batch = verifier.start_batch(keep_records=False)
    run = judge_in_place if in_place(batch, state) else _judge_lines
    number = run(
        verifier,
        batch,
        source,
        summary,
        state,
        batch_size=batch_size,
        valid_out=valid_out,
        dlq_out=dlq_out,
        progress=progress,
    )
    summary.lines = number
    if state is not None:
        summary.symbol_state = state.summary()
    if progress is not None:
        progress.write(f"\rvalidated {number:,} lines\n")
    return summary


def _judge_lines(
    verifier: DataSchemaContractVerifier,
    batch: BatchAccumulator,
    source: IO[bytes],
    summary: FileSummary,
    state: FileState | None,
    *,
    batch_size: int,
    valid_out: IO[bytes] | None,
    dlq_out: IO[bytes] | None,
    progress: IO[str] | None,
) -> int:
    """``judge_in_place``'s loop line by line (the reference, and the path of the contracts
    the core does not judge): every batch folded into ``summary``; the lines read."""
    first_line = 1
    in_batch = 0
    number = 0  # lines read so far
    for lines, cut in blocks(source, verifier.max_payload_bytes):
        start = number + 1
        number += len(lines)
        # A cut first line is kept as its first max_payload_bytes + 1 bytes (oversized).
        lengths = {start: cut} if cut is not None else {}
        blank: list[int] = []
        if not all(lines) or any(map(bytes.isspace, lines)):  # in C: usually none
            blank = [i for i, line in enumerate(lines) if not line or line.isspace()]
        if blank:
            summary.blank_lines += len(blank)
            skip = set(blank)
            numbers = [start + i for i in range(len(lines)) if i not in skip]
            lines = [line for i, line in enumerate(lines) if i not in skip]
        else:
            numbers = list(range(start, number + 1))
        done = 0
        while done < len(lines):
            take = len(lines) - done
            if batch_size:
                take = min(take, batch_size - in_batch)
            if in_batch == 0:
                first_line = numbers[done]
            _write(
                batch, lines[done : done + take], numbers, done, valid_out, dlq_out, state, lengths
            )
            done += take
            in_batch += take
            if batch_size and in_batch >= batch_size:
                summary.add(batch.finish(), first_line, numbers[done - 1])
                batch = verifier.start_batch(keep_records=False)
                in_batch = 0
        if progress is not None and number // PROGRESS_EVERY != (start - 1) // PROGRESS_EVERY:
            progress.write(f"\rvalidated {number:,} lines")
            progress.flush()
    if in_batch or summary.batches == 0:
        summary.add(batch.finish(), first_line, number)
    return number


def _write(
    batch: BatchAccumulator,
    payloads: list[bytes],
    numbers: list[int],
    offset: int,
    valid_out: IO[bytes] | None,
    dlq_out: IO[bytes] | None,
    state: FileState | None = None,
    lengths: dict[int, int] | None = None,
) -> None:
    """Validate payloads (one batch's share of a block) and write them out in order;
    ``lengths``: line number -> length of the lines cut short."""
    base = batch.total_records
    decoded: list[Any] | None = [] if state is not None else None
    rows = state.rows if state is not None else None
    if rows is not None:
        rows.clear()  # one row per payload of this share, filled by the verdict scan
    quarantined = batch.add_payloads(payloads, decoded, rows)
    if state is not None and decoded is not None:
        state.feed(payloads, {q.index - base: q for q in quarantined}, decoded)
    if valid_out is not None:
        if not quarantined:
            valid_out.write(b"\n".join(payloads) + b"\n")
        else:
            valid = without(payloads, sorted(q.index - base for q in quarantined))
            if valid:
                valid_out.write(b"\n".join(valid) + b"\n")
    if dlq_out is not None:
        for q in quarantined:
            position = q.index - base
            line = numbers[offset + position]
            length = lengths.get(line) if lengths else None
            dlq_out.write(dlq_line(line, q, payloads[position], length))


def open_input(path: str) -> IO[bytes]:
    """The input stream: a file, or stdin for '-'."""
    if path == "-":
        return sys.stdin.buffer
    return Path(path).open("rb")
