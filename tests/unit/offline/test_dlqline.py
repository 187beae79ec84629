"""The core's DLQ entries of the file path (``ScannedLines.dlq_lines``, native/src/dlqline.rs)
are byte for byte the Python writer's (``dlq.jsonlines.dlq_line``, the reference), and the
core declines (None) every entry it cannot write so."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_validator import DataSchemaContractVerifier, _native, load_contract
from stream_validator.dlq.jsonlines import dlq_line
from stream_validator.verify.report import (
    FlaggedViolation,
    QuarantinedRecord,
    Violation,
    ViolationKind,
)
from stream_validator.verify.rustcore import _TYPES

TICK = Path(__file__).resolve().parents[3] / "config" / "contracts" / "tick.yaml"
RUST = DataSchemaContractVerifier(load_contract(TICK), native=True)._rust
assert RUST is not None

#: Texts with what JSON escapes: quotes, backslashes, every control character, non-ASCII.
TEXT = st.text(
    st.one_of(st.characters(max_codepoint=0x7F), st.characters(codec="utf-8")), max_size=40
)
VIOLATION = st.builds(Violation, st.none() | TEXT, st.sampled_from(list(ViolationKind)), TEXT)
#: A line's bytes as the reader gives them: no \n, not blank, no trailing \r.
RAW = st.one_of(TEXT.map(str.encode), st.binary(max_size=60)).filter(
    lambda b: b"\n" not in b and b.strip() != b"" and not b.endswith(b"\r")
)


def scanned(raw: bytes, *, cut_first: bool = False, types: object = _TYPES) -> object:
    """The ``ScannedLines`` of a block that is ``raw`` on its own line."""
    block = raw + b"\n"
    assert RUST is not None
    limit = len(raw) - 1 if cut_first else 1 << 20
    *_, records, _scan = _native.scan_lines(
        RUST.plan, block, 0, len(block), False, cut_first, 10, [], limit, None, types, 0
    )
    assert len(records) == 1
    return records


def entry(records: object, first_line: int, q: QuarantinedRecord) -> bytes | None:
    """The core's entry of the one record of ``records`` (a ``ScannedLines``)."""
    (got,) = records.dlq_lines(first_line, {0: q})  # type: ignore[attr-defined]
    assert got is None or type(got) is bytes
    return got


@settings(max_examples=400, deadline=None)
@given(RAW, st.lists(VIOLATION, min_size=1, max_size=4), st.integers(1, 2**63))
def test_the_core_writes_the_python_writers_bytes(
    raw: bytes, violations: list[Violation], first_line: int
) -> None:
    """Every entry the core writes is the reference's bytes; it writes every one whose
    line is UTF-8 (the others are base64, the writer's)."""
    q = QuarantinedRecord(0, raw, violations)
    got = entry(scanned(raw), first_line, q)
    want = dlq_line(first_line, q, raw)
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        assert got is None
    else:
        assert got == want


@pytest.mark.parametrize(
    "violation",
    [
        Violation("price", ViolationKind.RULE_VIOLATION, "broken", rule="crossed"),
        FlaggedViolation("price", ViolationKind.BELOW_MIN, "below"),
        Violation("price", "below_min", None),  # type: ignore[arg-type]
        Violation(1, ViolationKind.BELOW_MIN, "m"),  # type: ignore[arg-type]
        Violation("pri\udcffce", ViolationKind.BELOW_MIN, "m"),
    ],
)
def test_entries_the_core_cannot_word_are_left_to_the_writer(violation: Violation) -> None:
    """A rule's or a flagged violation (more keys), a message or field not text, a lone
    surrogate: None, the Python writer's."""
    raw = b'{"price":1}'
    q = QuarantinedRecord(0, raw, [Violation(None, ViolationKind.UNKNOWN_FIELD, "x"), violation])
    assert entry(scanned(raw), 1, q) is None


def test_a_cut_first_line_and_a_call_without_types_are_left_to_the_writer() -> None:
    """The first line of a call that cut it (its true length is the writer's to say), and
    the lines of a call without report types: None."""
    raw = b'{"price":1,"size":2}'
    q = QuarantinedRecord(0, raw, [Violation(None, ViolationKind.OVERSIZED, "big")])
    assert entry(scanned(raw, cut_first=True), 1, q) is None
    assert entry(scanned(raw, types=None), 1, q) is None
    assert entry(scanned(raw), 1, q) == dlq_line(1, q, raw)


def test_entries_come_in_the_order_of_the_quarantined_records_given() -> None:
    """``dlq_lines`` of several records: one entry per record in the mapping's order, each
    numbered from its own line, None just for those the writer must write."""
    good = b'{"price":1}'
    block = b"\n".join([good, b"  ", b'{"a":"\xff"}', good, b'{"b":2}']) + b"\n"
    assert RUST is not None
    *_, records, _scan = _native.scan_lines(
        RUST.plan, block, 0, len(block), False, False, 10, [], 1 << 20, None, _TYPES, 0
    )
    plain = [Violation("price", ViolationKind.BELOW_MIN, "below")]
    flagged = [FlaggedViolation("price", ViolationKind.BELOW_MIN, "below")]
    quarantined = {
        3: QuarantinedRecord(3, b'{"b":2}', plain),
        0: QuarantinedRecord(0, good, plain),
        1: QuarantinedRecord(1, b'{"a":"\xff"}', plain),  # not UTF-8: base64
        2: QuarantinedRecord(2, good, flagged),
    }
    got = records.dlq_lines(40, quarantined)
    assert got == [
        dlq_line(44, quarantined[3], b'{"b":2}'),
        dlq_line(40, quarantined[0], good),
        None,
        None,
    ]


def test_records_not_exactly_the_report_types_are_left_to_the_writer() -> None:
    """A subclass of ``QuarantinedRecord`` or a record whose violations are a tuple: None."""

    class Other(QuarantinedRecord):
        pass

    raw = b'{"price":1}'
    plain = [Violation("price", ViolationKind.BELOW_MIN, "below")]
    assert entry(scanned(raw), 1, Other(0, raw, plain)) is None
    assert entry(scanned(raw), 1, QuarantinedRecord(0, raw, tuple(plain))) is None  # type: ignore[arg-type]
