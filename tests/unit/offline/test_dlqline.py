"""The core's DLQ entries of the file path (``ScannedLines.dlq_line``, native/src/dlqline.rs)
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
    st.one_of(st.characters(max_codepoint=0x7F), st.characters()), max_size=40
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


@settings(max_examples=400, deadline=None)
@given(RAW, st.lists(VIOLATION, min_size=1, max_size=4), st.integers(1, 2**63))
def test_the_core_writes_the_python_writers_bytes(
    raw: bytes, violations: list[Violation], first_line: int
) -> None:
    """Every entry the core writes is the reference's bytes; it writes every one whose
    line is UTF-8 (the others are base64, the writer's)."""
    q = QuarantinedRecord(0, raw, violations)
    got = scanned(raw).dlq_line(0, first_line, q)  # type: ignore[attr-defined]
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
    assert scanned(raw).dlq_line(0, 1, q) is None  # type: ignore[attr-defined]


def test_a_cut_first_line_and_a_call_without_types_are_left_to_the_writer() -> None:
    """The first line of a call that cut it (its true length is the writer's to say), and
    the lines of a call without report types: None."""
    raw = b'{"price":1,"size":2}'
    q = QuarantinedRecord(0, raw, [Violation(None, ViolationKind.OVERSIZED, "big")])
    assert scanned(raw, cut_first=True).dlq_line(0, 1, q) is None  # type: ignore[attr-defined]
    assert scanned(raw, types=None).dlq_line(0, 1, q) is None  # type: ignore[attr-defined]
    assert scanned(raw).dlq_line(0, 1, q) == dlq_line(1, q, raw)  # type: ignore[attr-defined]
