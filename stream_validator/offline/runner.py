"""Offline validation: contract files and JSON-lines files, no Kafka involved."""

from __future__ import annotations

import sys
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TypeVar

from stream_validator.codec import encode_json, payload_to_text
from stream_validator.contracts import load_contract
from stream_validator.errors import ContractFileError
from stream_validator.labels import MAX_SUMMARY_NAMES, bounded_counts, bounded_names, count_bounded
from stream_validator.state import EventTally, StateFeed, SymbolStateTracker, distrusted
from stream_validator.verify import (
    BatchAccumulator,
    DataSchemaContractVerifier,
    QuarantinedRecord,
    SchemaContractValidationReport,
    ViolationKind,
)

PROGRESS_EVERY = 50_000
# Read size: big enough that per-block costs vanish, small enough for flat memory.
BLOCK_BYTES = 1 << 20
MAX_LISTED_BATCHES = 20

T = TypeVar("T")


def check_contract_files(paths: Iterable[str], out: IO[str], err: IO[str]) -> int:
    """Load every contract file; print one line each. Exit status 1 if any is malformed."""
    status = 0
    for path in paths:
        try:
            contract = load_contract(path)
        except ContractFileError as exc:
            print(f"INVALID {exc}", file=err)
            status = 1
        else:
            print(
                f"OK {path}: contract {contract.name!r} version {contract.version!r},"
                f" {len(contract.fields)} fields",
                file=out,
            )
    return status


@dataclass(slots=True)
class FileSummary:
    """Totals of one validate run over a JSON-lines input."""

    contract: str
    contract_version: str
    lines: int = 0
    blank_lines: int = 0
    records: int = 0
    valid: int = 0
    quarantined: int = 0
    batches: int = 0
    violations_by_kind: Counter[str] = field(default_factory=Counter)
    violations_by_field: Counter[str] = field(default_factory=Counter)
    #: Valid records with a flagged breach; per flag rule; per (flagged field, kind).
    flagged: int = 0
    flagged_by_rule: Counter[str] = field(default_factory=Counter)
    flagged_by_field: Counter[tuple[str, str]] = field(default_factory=Counter)
    null_counts: Counter[str] = field(default_factory=Counter)
    unknown_fields: set[str] = field(default_factory=set)
    unknown_fields_left_out: int = 0
    invalid_batches: list[dict[str, Any]] = field(default_factory=list)
    invalid_batch_count: int = 0
    symbol_state: dict[str, Any] | None = None

    @property
    def is_valid(self) -> bool:
        """True when every batch was valid."""
        return self.invalid_batch_count == 0

    def add(self, report: SchemaContractValidationReport, first_line: int, last_line: int) -> None:
        """Fold one batch report into the totals."""
        self.batches += 1
        self.records += report.total_records
        self.valid += report.valid_count
        self.quarantined += report.quarantined_count
        self.violations_by_kind.update(report.counts_by_kind())
        for name, n in report.counts_by_field().items():
            count_bounded(self.violations_by_field, name, n)
        self.flagged += report.flagged_records
        self.flagged_by_rule.update(report.flagged_counts)
        self.flagged_by_field.update(report.flagged_field_counts)
        self.null_counts.update(report.null_counts)
        for name in report.observed_unknown_fields:
            # Payload-derived: memory stays bounded however many distinct keys a file holds.
            if name in self.unknown_fields or len(self.unknown_fields) < MAX_SUMMARY_NAMES:
                self.unknown_fields.add(name)
            else:
                self.unknown_fields_left_out += 1
        self.unknown_fields_left_out += report.unknown_fields_left_out
        if not report.is_batch_valid:
            self.invalid_batch_count += 1
            if len(self.invalid_batches) < MAX_LISTED_BATCHES:
                self.invalid_batches.append(
                    {
                        "batch": self.batches,
                        "lines": [first_line, last_line],
                        "quarantined": report.quarantined_count,
                        "null_breach_fields": report.null_breach_fields,
                    }
                )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        rates = {
            name: (n * 100.0 / self.valid if self.valid else 0.0)
            for name, n in self.null_counts.items()
        }
        unknown, left_out = bounded_names(self.unknown_fields)
        by_field, fields_left_out = bounded_counts(self.violations_by_field)
        # Rule and field names come from the contract (a closed set): not bounded.
        flagged_by_field: dict[str, dict[str, int]] = {}
        for (name, kind), n in sorted(self.flagged_by_field.items()):
            flagged_by_field.setdefault(name, {})[kind] = n
        return {
            "contract": self.contract,
            "contract_version": self.contract_version,
            "lines": self.lines,
            "blank_lines_skipped": self.blank_lines,
            "records": self.records,
            "valid": self.valid,
            "quarantined": self.quarantined,
            "flagged": self.flagged,
            "flagged_by_rule": dict(sorted(self.flagged_by_rule.items())),
            "flagged_by_field": flagged_by_field,
            "batches": self.batches,
            "invalid_batches": self.invalid_batch_count,
            "invalid_batch_details": self.invalid_batches,
            "violations_by_kind": dict(self.violations_by_kind.most_common()),
            "violations_by_field": by_field,
            "violations_by_field_left_out": fields_left_out,
            "null_rates_overall": rates,
            "observed_unknown_fields": unknown,
            # At least this many more: names past the in-memory cap are counted per batch.
            "observed_unknown_fields_left_out": left_out + self.unknown_fields_left_out,
            "symbol_state": self.symbol_state,
            "verdict": "VALID" if self.is_valid else "INVALID",
        }


class FileState:
    """The contract's per-symbol state over a file: one partition, in file order.

    It reports events only (counts per kind, five example symbols each): an action
    ``quarantine`` moves no record to the DLQ output here, so the file's verdict and its
    valid/DLQ outputs are the schema's alone. Records are read from the fast path's decoded
    Structs where there are some (``state.StateFeed``), so no line is decoded twice.
    """

    def __init__(self, verifier: DataSchemaContractVerifier) -> None:
        spec = verifier.contract.state
        assert spec is not None
        types = {f.name: f.expected_type for f in verifier.contract.fields}
        self._spec = spec
        self.tracker = SymbolStateTracker(spec)
        self._feed = StateFeed(self.tracker, types, verifier.field_getter)
        self.tally = EventTally(5)

    def feed(
        self,
        payloads: list[bytes],
        quarantined: dict[int, QuarantinedRecord],
        decoded: list[Any],
    ) -> None:
        """Fold one share of a batch in: valid lines, and quarantined ones whose key passed,
        each state field used only when it passed (``state.distrusted``; ``decoded``:
        what ``add_payloads`` decoded of each)."""
        # Per quarantined line, not per line: most lines are valid.
        parts = {
            position: distrusted(self._spec, q.violations) for position, q in quarantined.items()
        }
        unfed = sorted(position for position, part in parts.items() if "key" in part)
        values, rows = _without(payloads, unfed), _without(decoded, unfed)
        distrust: dict[int, frozenset[str]] = {}
        for position, part in parts.items():
            if part and "key" not in part:
                # its position once the unfed lines before it are left out
                distrust[position - bisect_left(unfed, position)] = part
        for _, events in self._feed.observe_many([0] * len(values), values, rows, distrust):
            self.tally.add(events)

    def summary(self) -> dict[str, Any]:
        """JSON-ready, for the file summary."""
        return {
            "events": self.tally.summary(),
            "evictions": self.tracker.evictions,
            "symbols": len(self.tracker),
        }


def _blocks(stream: IO[bytes], limit: int) -> Iterator[tuple[list[bytes], int | None]]:
    """The input's lines (without line endings) in lists of about BLOCK_BYTES, and the
    length of the block's first line when it was cut (else None).

    A line that runs over several blocks is kept only up to ``limit + 1`` bytes, enough
    for the verifier to judge it oversized: a file that is one huge line (a JSON array
    dump, say) is never held whole, nor copied again with each block.
    """
    rest = b""  # the start of the line not yet ended, at most limit + 1 bytes of it
    length = 0  # that line's length so far
    while True:
        data = stream.read(BLOCK_BYTES)
        if not data:
            if length:
                yield [rest], (length if length > len(rest) else None)
            return
        if b"\n" not in data:  # the line goes on
            length += len(data)
            if len(rest) <= limit:
                rest += data[: limit + 1 - len(rest)]
            continue
        first_cut = length > len(rest)
        if rest:
            data = rest + data
        lines = data.split(b"\n")
        cut = None
        if first_cut:
            cut = length + len(lines[0]) - len(rest)
            lines[0] = lines[0][: limit + 1]
        rest = lines.pop()
        length = len(rest)
        if length > limit:
            rest = rest[: limit + 1]
        if b"\r" in data:
            lines = [line.rstrip(b"\r") for line in lines]
        yield lines, cut


def _without(items: list[T], positions: list[int]) -> list[T]:
    """``items`` without those at ``positions`` (ascending), copied slice by slice."""
    if not positions:
        return items
    kept: list[T] = []
    start = 0
    for position in positions:
        kept += items[start:position]
        start = position + 1
    kept += items[start:]
    return kept


def dlq_line(
    line_number: int, quarantined: QuarantinedRecord, raw: bytes, length: int | None = None
) -> bytes:
    """One DLQ entry of the offline validator, as a JSON line.

    ``length``: the line's length when ``raw`` is only its start (a line over
    max_payload_bytes that spanned blocks): the entry says so and gives that length."""
    violations = [v.as_dict() for v in quarantined.violations]
    reason = quarantined.violation_reason
    if length is not None:
        said, true = f"payload is {len(raw)} bytes", f"payload is {length} bytes"
        for violation in violations:
            if violation["kind"] == ViolationKind.OVERSIZED:
                violation["message"] = (violation["message"] or "").replace(said, true, 1)
        reason = reason.replace(said, true, 1)
    text, encoding = payload_to_text(raw)
    entry: dict[str, Any] = {
        "line": line_number,
        "violations": violations,
        "violation_reason": reason,
        "raw": text,
        "raw_encoding": encoding,
    }
    if length is not None:
        entry["raw_truncated"] = True
        entry["raw_length"] = length
    return encode_json(entry) + b"\n"


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
    state = FileState(verifier) if contract.state is not None else None
    batch = verifier.start_batch(keep_records=False)
    first_line = 1
    in_batch = 0
    number = 0  # lines read so far
    for lines, cut in _blocks(source, verifier.max_payload_bytes):
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
    summary.lines = number
    if state is not None:
        summary.symbol_state = state.summary()
    if progress is not None:
        progress.write(f"\rvalidated {number:,} lines\n")
    return summary


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
    quarantined = batch.add_payloads(payloads, decoded)
    if state is not None and decoded is not None:
        state.feed(payloads, {q.index - base: q for q in quarantined}, decoded)
    if valid_out is not None:
        if not quarantined:
            valid_out.write(b"\n".join(payloads) + b"\n")
        else:
            valid = _without(payloads, sorted(q.index - base for q in quarantined))
            if valid:
                valid_out.write(b"\n".join(valid) + b"\n")
    if dlq_out is not None:
        for q in quarantined:
            position = q.index - base
            line = numbers[offset + position]
            length = lengths.get(line) if lengths else None
            dlq_out.write(dlq_line(line, q, payloads[position], length))


def render_summary(summary: FileSummary) -> str:
    """Human-readable summary for the terminal."""
    data = summary.as_dict()
    out = [
        f"contract {data['contract']} v{data['contract_version']}: {data['records']} records"
        f" in {data['batches']} batch(es), {data['valid']} valid"
        + (f" ({data['flagged']} flagged)" if data["flagged"] else "")
        + f", {data['quarantined']} quarantined"
        + (
            f", {data['blank_lines_skipped']} blank lines skipped"
            if data["blank_lines_skipped"]
            else ""
        ),
    ]
    for title, key in (
        ("violations by kind", "violations_by_kind"),
        ("violations by field", "violations_by_field"),
    ):
        if data[key]:
            out.append(f"{title}: " + ", ".join(f"{k}={v}" for k, v in data[key].items()))
    if data["flagged_by_rule"]:
        flags = data["flagged_by_rule"].items()
        out.append("flagged by rule: " + ", ".join(f"{k}={v}" for k, v in flags))
    if data["flagged_by_field"]:
        out.append(
            "flagged by field: "
            + ", ".join(
                f"{name} {kind}={n}"
                for name, kinds in data["flagged_by_field"].items()
                for kind, n in kinds.items()
            )
        )
    if data["null_rates_overall"]:
        out.append(
            "null rates (valid records): "
            + ", ".join(f"{k}={v:.3f}%" for k, v in data["null_rates_overall"].items())
        )
    for detail in data["invalid_batch_details"]:
        lo, hi = detail["lines"]
        breaches = ", ".join(f"{k}={v:.3f}%" for k, v in detail["null_breach_fields"].items())
        out.append(
            f"invalid batch {detail['batch']} (lines {lo}-{hi}):"
            f" {detail['quarantined']} quarantined"
            + (f", null ceiling breached: {breaches}" if breaches else "")
        )
    symbol_state = data["symbol_state"]
    if symbol_state and symbol_state["events"]:
        out.append(
            "per-symbol state events: "
            + ", ".join(
                # Symbols are payload values: escaped, so no control character reaches a terminal.
                f"{kind}={found['count']} (e.g. {', '.join(map(_printable, found['examples']))})"
                for kind, found in symbol_state["events"].items()
            )
        )
    if data["observed_unknown_fields"]:
        out.append("schema drift, unknown fields: " + ", ".join(data["observed_unknown_fields"]))
    out.append(f"verdict: {data['verdict']}")
    return "\n".join(out)


def _printable(text: str) -> str:
    return text if text.isprintable() else ascii(text)


def open_input(path: str) -> IO[bytes]:
    """The input stream: a file, or stdin for '-'."""
    if path == "-":
        return sys.stdin.buffer
    return Path(path).open("rb")
