"""The file path through the native core: each block of the input judged in place.

``judge_in_place`` reads the input as ``lines.spans`` (whole blocks, unsplit) and hands
each to the core (``verify.rustcore.add_lines``), which finds the lines itself, judges
each where it lies, fills the per-symbol state's rows from the same scan and gives the
records back as spans: the valid lines go out with one ``write`` per block, the state is
fed with one call, and a line becomes a bytes object only for its DLQ entry. Lines,
blank lines, line numbers, batches, DLQ entries and summaries are those of the
line-by-line path (``runner``), which stays the reference and takes the contracts the
core does not judge.
"""

from __future__ import annotations

from typing import IO, cast

from stream_validator.dlq.jsonlines import dlq_line
from stream_validator.offline.filestate import FileState
from stream_validator.offline.lines import spans
from stream_validator.offline.summary import FileSummary
from stream_validator.verify import DataSchemaContractVerifier
from stream_validator.verify.batch import BatchAccumulator
from stream_validator.verify.rustcore import add_lines, lines_supported

__all__ = ["PROGRESS_EVERY", "in_place", "judge_in_place"]

#: Lines between two progress updates.
PROGRESS_EVERY = 50_000


def in_place(batch: BatchAccumulator, state: FileState | None) -> bool:
    """Whether the core can take the input in place: it judges the contract, and the
    state (if any) is the native tracker fed from the scan's rows."""
    return lines_supported(batch) and (state is None or state.rows is not None)


def judge_in_place(
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
    """``validate_jsonl``'s loop when ``in_place(batch, state)`` (``batch``: the first
    batch, begun): every batch folded into ``summary``; the number of lines read."""
    first_line = last_line = 1
    in_batch = 0
    number = 0  # lines read so far
    rows = state.rows if state is not None else None
    tracker = state.tracker if rows is not None and state is not None else None
    learning = True  # the first call is small: it meets only values first seen
    for block in spans(source, verifier.max_payload_bytes):
        before = number
        at = block.start
        view = memoryview(block.data)
        while at < block.end:
            take = batch_size - in_batch if batch_size else block.end + 1
            if rows is not None:
                rows.clear()
            added = add_lines(
                batch,
                block.data,
                at,
                block.end,
                tail=block.tail,
                cut_first=at == block.start and block.cut is not None,
                take=take,
                state_rows=rows,
                learning=learning,
                tracker=tracker,
            )
            records, quarantined, learning = added.records, added.quarantined, added.learning
            cut = block.cut if at == block.start else None
            at = added.after
            line_one = number + 1  # the number of the call's first line
            number += added.lines
            summary.blank_lines += added.blanks
            if not len(records):
                continue
            if in_batch == 0:
                first_line = line_one + records.line(0)
            last_line = line_one + records.line(len(records) - 1)
            in_batch += len(records)
            if state is not None:
                state.feed_scanned(records, quarantined, added.fed, added.events)
            if valid_out is not None and len(quarantined) < len(records):
                left_out = sorted(quarantined)
                runs = records.runs(left_out)
                if runs is None:  # CRLF or an unended line: the lines copied with their \n
                    valid_out.write(records.join(left_out))
                else:  # slices of the block itself
                    for run_start, run_end in runs:
                        valid_out.write(view[run_start:run_end])
            if dlq_out is not None and quarantined:
                entries = records.dlq_lines(line_one, quarantined)  # the core's where it can
                if None in entries:  # the writer's: a cut line, base64, a rule's violation
                    for i, (position, q) in enumerate(quarantined.items()):
                        if entries[i] is None:
                            line = records.line(position)
                            length = cut if line == 0 else None
                            entries[i] = dlq_line(line_one + line, q, records[position], length)
                dlq_out.write(b"".join(cast(list[bytes], entries)))
            if batch_size and in_batch >= batch_size:
                summary.add(batch.finish(), first_line, last_line)
                batch = verifier.start_batch(keep_records=False)
                in_batch = 0
        if progress is not None and number // PROGRESS_EVERY != before // PROGRESS_EVERY:
            progress.write(f"\rvalidated {number:,} lines")
            progress.flush()
    if in_batch or summary.batches == 0:
        summary.add(batch.finish(), first_line, number)
    return number
