"""The Rust verdict core (``stream_validator._native``): the whole per-record verdict of
a contract, violations included, with the GIL released. PURE.

``RustCheck.of(contract)`` compiles the contract into a native plan once; ``add_payloads``
feeds a ``BatchAccumulator`` chunk by chunk. Per record the core returns the verdict the
Python rules reach: valid (its null slots and the flag rules it broke, counted natively),
quarantined with its violations (same order, kinds and texts), or *deferred*. A deferred
record is judged by the Python rules (``BatchAccumulator._full_payload``), whose verdict
is final. Undecodable, non-object, tombstone and oversized payloads get their one violation
natively (orjson's error text and position; ``verify.malformed`` is the reference). The core
defers whatever it cannot prove equal: nesting near orjson's depth limit, escapes,
duplicate keys, ints past 64 bits or arithmetic past 2**53, datetimes
outside the plain ISO form, a skew window crossed, a broken quarantine rule, a flagged
field's breach, a pattern mismatch (a pattern's verdicts come from Python's ``re`` and are
remembered per value), a rule comparison it cannot decide exactly, and anything but a
plainly clean value of an object or array field (a violation or an undeclared key inside
it: Python words those). Contracts it cannot plan at all (``rustplan``: a pattern inside
a container, numbers a double cannot hold, past 64 fields or nullable paths) return None
from ``RustCheck.of`` and keep the msgspec fast path. The differential test
(tests/unit/native/) holds the core to the Python rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Final, NamedTuple, cast

from stream_validator import _native
from stream_validator.contracts.model import SchemaContract
from stream_validator.contracts.pattern import compile_pattern
from stream_validator.verify.pylines import PyScannedLines, read_lines
from stream_validator.verify.recordchecks import Bounds
from stream_validator.verify.report import QuarantinedRecord, Violation, ViolationKind
from stream_validator.verify.rustplan import UnplannableContract, plan_spec

if TYPE_CHECKING:
    from stream_validator.verify.batch import BatchAccumulator

__all__ = [
    "CHUNK",
    "LEARNING_CHUNK",
    "LINES_CHUNK",
    "LinesAdded",
    "RustCheck",
    "add_lines",
    "add_payloads",
    "lines_supported",
    "native_enabled",
]

#: Payloads per native call: the GIL is released for one chunk at a time. Each call costs
#: some Python (its chunk settled), about 60 instructions a record more at 256 a call.
CHUNK: Final = 1024
#: Payloads of ``add_payloads``' first native call, and of the call after one that met
#: pattern values the core had not learnt yet (``RustCheck.learn``): a value first seen
#: defers the chunk's records holding it to the Python rules, so these chunks stay small
#: while values are being learnt (a new feed's first batch).
LEARNING_CHUNK: Final = 256
#: Lines per native call of the file path (``add_lines``): bigger, as each call costs some
#: Python (its chunk settled, the state fed, the valid lines written), about 270
#: instructions a line at 256 lines a call, 70 at 1,024, about 25 at 4,096 (a 1 MiB
#: block of ticks is about 7,000 lines). The first call and the call after one that met
#: pattern values not learnt yet take ``LEARNING_CHUNK`` lines, as ``add_payloads``: a
#: value first seen defers the call's records holding it to Python (a fresh command's
#: first lines hold only values first seen).
LINES_CHUNK: Final = 4096
#: The violation kinds by the core's codes (native/src/verdict/mod.rs ``Kind``).
KINDS: Final = (
    ViolationKind.MISSING_FIELD,
    ViolationKind.NULL_VALUE,
    ViolationKind.TYPE_MISMATCH,
    ViolationKind.BELOW_MIN,
    ViolationKind.ABOVE_MAX,
    ViolationKind.UNKNOWN_FIELD,
    ViolationKind.NOT_ALLOWED,
    ViolationKind.TOO_SHORT,
    ViolationKind.TOO_LONG,
    ViolationKind.UNDECODABLE,
    ViolationKind.NOT_A_MAPPING,
    ViolationKind.OVERSIZED,
)
_VALID_UNKNOWN, _BAD, _DEFER, _BUILT, _PANIC = 0, 1, 2, 3, 4
#: The report types the core builds a bad record's objects of (native/src/verdict/built.rs).
_TYPES: Final = _native.ReportTypes(Violation, QuarantinedRecord, list(KINDS))
_NO_TALLY: Final[list[tuple[int, tuple[str | None, str], int]]] = []
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MICRO: Final = timedelta(microseconds=1)


def native_enabled() -> bool:
    """False when the environment sets ``SV_NATIVE=0`` (read by the core itself)."""
    return _native.native_enabled()


class RustCheck:
    """A contract compiled into the native plan, with its pattern matchers."""

    __slots__ = (
        "_patterns",
        "chunk",
        "field_index",
        "field_types",
        "lines_chunk",
        "max_payload_bytes",
        "plan",
        "rule_names",
    )

    def __init__(self, contract: SchemaContract, max_payload_bytes: int) -> None:
        try:
            self.plan = _native.VerdictPlan(plan_spec(contract))
        except (ValueError, OverflowError, TypeError, KeyError) as exc:
            raise UnplannableContract(str(exc)) from exc
        self._patterns = {
            i: compile_pattern(spec.pattern).match
            for i, spec in enumerate(contract.fields)
            if spec.pattern is not None
        }
        self.rule_names = tuple(rule.name for rule in contract.rules)
        self.field_index = {spec.name: i for i, spec in enumerate(contract.fields)}
        self.field_types = {spec.name: spec.expected_type for spec in contract.fields}
        self.chunk = CHUNK
        self.lines_chunk = LINES_CHUNK
        self.max_payload_bytes = max_payload_bytes

    @classmethod
    def of(cls, contract: SchemaContract, max_payload_bytes: int) -> RustCheck | None:
        """The native check of a contract, or None when the core cannot plan it."""
        try:
            return cls(contract, max_payload_bytes)
        except UnplannableContract:
            return None

    @staticmethod
    def windows(bounds: tuple[Bounds, ...]) -> list[tuple[int | None, int | None]]:
        """The skew windows at the time of validation, in microseconds since the epoch."""
        return [
            (
                None if lo is None else (lo - _EPOCH) // _MICRO,
                None if hi is None else (hi - _EPOCH) // _MICRO,
            )
            for _, lo, hi in bounds
        ]

    def state_rows(
        self, key: str, seq: str | None, time: str | None, quotes: Sequence[str]
    ) -> _native.StateRows | None:
        """A ``StateRows`` the scan fills with these fields of each payload (see
        ``DataSchemaContractVerifier.state_rows``), or None when one is not a field or a
        quote field is not a number (the scan reads only numbers and nulls as quotes)."""
        index = self.field_index
        names = [key, *(n for n in (seq, time) if n is not None), *quotes]
        if not set(names) <= index.keys() or any(
            self.field_types[q] not in (int, float) for q in quotes
        ):
            return None
        return _native.StateRows(
            index[key],
            -1 if seq is None else index[seq],
            -1 if time is None else index[time],
            [index[q] for q in quotes],
        )

    def learn(self, pending: list[tuple[int, str]]) -> None:
        """Ask Python's ``re`` about pattern values the core has not seen yet."""
        patterns = self._patterns
        self.plan.learn([(i, value, patterns[i](value) is not None) for i, value in pending])


def add_payloads(
    batch: BatchAccumulator,
    rust: RustCheck,
    windows: list[tuple[int | None, int | None]],
    payloads: Sequence[Any],
    decoded: list[Any] | None,
    state_rows: _native.StateRows | None = None,
) -> list[QuarantinedRecord]:
    """``BatchAccumulator.add_payloads`` through the core (``decoded`` gets None each;
    ``state_rows``, a ``StateRows``, the state's fields of each payload as the core read them)."""
    out: list[QuarantinedRecord] = []
    limit = rust.max_payload_bytes
    # The batch's own list of the payloads (the caller's may change while the GIL is
    # released), scanned in place a chunk at a time (``scan``'s start and stop); the
    # batch keeps its valid runs as parts of it (``KeptRecords``), no chunk sliced out.
    rows = list(payloads)
    learning = min(LEARNING_CHUNK, rust.chunk)
    start, step = 0, learning
    while start < len(rows):
        stop = min(start + step, len(rows))
        base = batch._total
        batch._total += stop - start
        mark = len(state_rows) if state_rows is not None else 0
        try:
            scanned = rust.plan.scan(
                rows, windows, limit, state_rows, types=_TYPES, base=base, start=start, stop=stop
            )
        except Exception as exc:  # defence in depth: the Python rules take the chunk
            batch._log_error("native core", exc)
            if state_rows is not None:  # and Python reads the state's fields
                state_rows.truncate(mark)
                state_rows.extend_absent(stop - start)
            scanned = ([(i, _DEFER) for i in range(stop - start)], [], [], 0, [])
        out += _settle(batch, rust, base, rows, scanned, start, stop)
        if decoded is not None:
            decoded.extend([None] * (stop - start))
        start, step = stop, learning if scanned[4] else rust.chunk
    return out


def _settle(
    batch: BatchAccumulator,
    rust: RustCheck,
    base: int,
    rows: Sequence[Any],
    scanned: tuple[Any, ...],
    start: int = 0,
    stop: int | None = None,
) -> list[QuarantinedRecord]:
    """Fold one native scan's tuple (events, nulls, flags, flagged, pending[, tally]) of the
    records ``rows[start:stop]`` (batch positions from ``base``; the events' positions
    count from ``start``) into ``batch``; the quarantined ones.

    A ``BUILT`` event brings the record's ``QuarantinedRecord`` made by the core, its
    violations counted in the tally (per (field, kind), in the order first seen, with the
    position first seen). The tally's keys enter the batch's counts before those of any
    record the Python rules judge after their first position, so the counts list their
    keys in the order a record-by-record count does (``summary()`` shows that order)."""
    events, nulls, flags, flagged, pending = scanned[:5]
    tally = scanned[5] if len(scanned) > 5 else _NO_TALLY
    out: list[QuarantinedRecord] = []
    if pending:
        rust.learn(pending)
    if any(nulls):
        batch._null_counts = [a + b for a, b in zip(batch._null_counts, nulls, strict=True)]
    if flagged:
        batch._flagged_records += flagged
        batch._flagged.update({n: c for n, c in zip(rust.rule_names, flags, strict=True) if c})
    kept = batch._quarantined if batch._keep else None
    size = (len(rows) if stop is None else stop) - start
    # The valid runs, (lo, hi) in rows' own positions, flat: accepted together
    # (``_accept_runs``), before a record the Python rules judge (it may be accepted).
    runs: list[int] = []
    done = built = counted = 0
    for event in events:
        position, code = event[0], event[1]
        if code == _VALID_UNKNOWN:
            batch._note_unknown(event[2])
            continue
        if position > done:
            runs += (start + done, start + position)
        done = position + 1
        if code == _BUILT:
            out.append(event[2])
            if kept is not None:
                kept.append(event[2])
            built += 1
            continue
        if runs:
            batch._accept_runs(base - start, rows, runs)
            runs = []
        if counted < len(tally) and tally[counted][0] < position:
            counted = _count(batch, tally, counted, position)
        if code == _BAD:
            if event[3]:
                batch._note_unknown(event[3])
            violations = [Violation(f, KINDS[k], m) for f, k, m in event[2]]
            out.append(batch._quarantine(base + position, rows[start + position], violations))
            continue
        if code == _PANIC:
            violation = Violation(None, ViolationKind.VALIDATOR_ERROR, "PanicException")
            out.append(batch._quarantine(base + position, rows[start + position], [violation]))
            continue
        quarantined = batch._full_payload(base + position, rows[start + position])
        if quarantined is not None:
            out.append(quarantined)
    if done < size:
        runs += (start + done, start + size)
    if runs:
        batch._accept_runs(base - start, rows, runs)
    if built:
        batch._quarantined_count += built
        _count(batch, tally, counted, size)
    return out


def _count(
    batch: BatchAccumulator,
    tally: list[tuple[int, tuple[str | None, str], int]],
    start: int,
    before: int,
) -> int:
    """Add the tally's rows from ``start`` first seen before position ``before`` to the
    batch's violation counts; the index of the first row left."""
    counts = batch._violation_counts
    at = start
    while at < len(tally) and tally[at][0] < before:
        _, key, n = tally[at]
        counts[key] += n
        at += 1
    return at


def lines_supported(batch: BatchAccumulator) -> bool:
    """Whether ``add_lines`` can take this batch: the core judges its contract and the
    batch keeps counts only (a kept record would need a bytes object per line)."""
    return batch._rust is not None and not batch._keep


def add_lines(
    batch: BatchAccumulator,
    data: bytes,
    start: int,
    end: int,
    *,
    tail: bool = False,
    cut_first: bool = False,
    take: int,
    state_rows: _native.StateRows | None = None,
    learning: bool = False,
    tracker: Any = None,
) -> LinesAdded:
    """Judge the JSON lines of ``data[start:end]`` in place, at most ``take`` records and
    at most ``lines_chunk`` (``LEARNING_CHUNK`` with ``learning``: the first call, or the
    one after a call whose ``learning`` is true; see ``_native.scan_lines`` for how lines
    are read), into ``batch`` (``lines_supported``). If the core raises, the lines are read
    in Python (``pylines``) and the Python rules judge them, as ``add_payloads`` does.

    ``tracker`` (the native tracker whose fields ``state_rows`` reads, on partition 0):
    the scan feeds it the records it can as it judges them, the first ``fed`` of the
    call (``LinesAdded.fed``, with their ``events``); ``state_rows`` holds the rows of the
    records from there on, for ``observe_rows(..., first=fed)``."""
    rust = batch._rust
    assert rust is not None and not batch._keep
    # A chunk at a time, as add_payloads: a pattern value first seen in a chunk defers its
    # records to Python until learnt after it, so chunks bound what one new value costs.
    take = min(take, LEARNING_CHUNK if learning else rust.lines_chunk, rust.lines_chunk)
    mark = len(state_rows) if state_rows is not None else 0
    base = batch._total
    records: _native.ScannedLines | PyScannedLines
    direct = tracker if state_rows is not None else None
    failed = False
    try:
        after, lines, blanks, records, scanned = _native.scan_lines(
            rust.plan,
            data,
            start,
            end,
            tail,
            cut_first,
            take,
            batch._rust_windows,
            rust.max_payload_bytes,
            state_rows,
            _TYPES,
            base,
            direct,
            0,
        )
    except Exception as exc:  # defence in depth, as add_payloads: Python reads the lines
        batch._log_error("native core", exc)  # and its rules judge them
        after, lines, blanks, records = read_lines(
            data,
            start,
            end,
            tail=tail,
            cut_first=cut_first,
            take=take,
            max_bytes=rust.max_payload_bytes,
        )
        scanned = ([(i, _DEFER) for i in range(len(records))], [], [], 0, [])
        failed = True
    # What the scan fed stays fed, even if it raised after: rows are for the rest.
    fed, events = direct.take_scanned() if direct is not None else (0, ())
    if failed and state_rows is not None:  # Python reads the state's fields of the rest
        state_rows.truncate(mark)
        state_rows.extend_absent(len(records) - fed)
    batch._total += len(records)
    # Indexed like the payloads list; never sliced, as the batch keeps no records.
    quarantined = _settle(batch, rust, base, cast(Sequence[Any], records), scanned)
    return LinesAdded(
        after,
        lines,
        blanks,
        records,
        {q.index - base: q for q in quarantined},
        bool(scanned[4]),
        fed,
        events,
    )


class LinesAdded(NamedTuple):
    """What ``add_lines`` read: the position after the last line, how many lines (blank
    ones included) and blank lines, the records (``_native.ScannedLines``: ``len``, the
    bytes of record ``i`` by ``[i]``, its line by ``line(i)``, ``join``), the
    quarantined ones by record position, and whether the scan met pattern values the core
    had not learnt yet (learnt now: the next call takes ``LEARNING_CHUNK`` lines)."""

    after: int
    lines: int
    blanks: int
    records: _native.ScannedLines | PyScannedLines
    quarantined: dict[int, QuarantinedRecord]
    learning: bool
    #: With a tracker: the records fed from the scan (the first ``fed``) and their events.
    fed: int = 0
    events: tuple[Any, ...] = ()
