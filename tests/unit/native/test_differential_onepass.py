"""The one-pass reader (native/src/verdict/onepass.rs) against the Python rules.

A compact tick in declared order is read once with each value checked as it is read;
at the first value that is not plainly clean the core reads the record again with its
general readers. Each case below leaves the one pass at a different field or step (a
null, another type, text that is not ASCII or has an escape, a value out of range, a
pattern value not yet learnt, a datetime form, a rule that fails or cannot be read as
floats): the report must be the reference's, whichever reader settled the record.
"""

from __future__ import annotations

import json

import pytest

from stream_validator import DataSchemaContractVerifier
from tests.unit.native.test_differential import TICK_CONTRACT, TICK_GOOD, TICK_PAIR, plain_tick
from tests.unit.verify.test_native_differential import summary

# Per field, values that stop the one pass there (and some that do not).
HALFWAY = {
    "symbol": ['"A"', '""', "null", "1", '"SYMé"', '"SY\\u004d"', '"A\\"B"', '"' + "S" * 70 + '"'],
    "exchange": ['"ARCX"', '"xnas"', '"XNA"', '"XNASD"', "null", '"XNAÉ"', '"XN\\u0041S"'],
    "event_ts": [
        '"2026-11-30T14:00:00.999999+00:00"',
        '"2026-11-30T14:00:00.000001-00:00"',
        '"2026-11-30T14:00:00.123456+01:30"',
        '"2026-11-30T14:00:00.123456+00:0a"',
        '"2026-11-30T14:00:00.123456+00:00 "',
        '"2026-11-30T14:00:00.12345a+00:00"',
        '"2026-11-30T14:00:00.123456Z"',
        '"2026-11-30T14:00:00.123456"',
        '"2026-11-30T14:00:00"',
        '"yesterday"',
        "null",
        "17",
    ],
    "seq": ["-1", "0", "null", "true", '"17"', "1.0", "1e3", "9223372036854775808"],
    "price": ["0", "101", "-101.25", "null", "1e-10", "10000000.5", "false", '"101.25"'],
    "size": ["1000000001", "1.5", "null", "-0"],
    "bid": ["null", "101", "101.26", "101.27", "1", "-1.0", "true", '"x"'],
    "ask": ["null", "101.24", "101.2", "1000.0", "101", "0.0", "[1]", '{"a":1}'],
    "bid_sz": ["null", "-1", "5.0", "true"],
    "ask_sz": ["null", "-1", "7.5", '"7"'],
}


@pytest.mark.parametrize("name", list(HALFWAY))
def test_records_leaving_the_one_pass_halfway_agree(name: str) -> None:
    """Each odd value of a field, with the good tick around it, one chunk (clean records
    between them, so a record judged after a fallback starts from a clean state)."""
    native, reference = TICK_PAIR
    good = plain_tick()
    batch: list[bytes | None] = []
    for value in HALFWAY[name]:
        batch += [plain_tick(**{name: value}), good]
    expected = summary(reference.validate_payloads(batch))  # type: ignore[attr-defined]
    assert summary(native.validate_payloads(batch)) == expected  # type: ignore[attr-defined]


def test_rules_read_from_the_one_pass_agree() -> None:
    """The book's rules on the floats the one pass read: holding, flagged (locked, wide),
    quarantined (crossed), and with an int or a null side (the general rule reader)."""
    native, reference = TICK_PAIR
    books = [
        ("101.24", "101.26"),
        ("101.25", "101.25"),
        ("101.26", "101.24"),
        ("90.0", "101.0"),
        ("96.0", "101.0"),
        ("95.95", "101.0"),
        ("101", "101.5"),
        ("101.0", "101"),
        ("null", "101.0"),
        ("101.0", "null"),
        ("0.000000001", "10000000.0"),
    ]
    batch: list[bytes | None] = [plain_tick(bid=b, ask=a) for b, a in books]
    expected = summary(reference.validate_payloads(batch))  # type: ignore[attr-defined]
    assert summary(native.validate_payloads(batch)) == expected  # type: ignore[attr-defined]


def test_a_pattern_value_learnt_in_a_later_chunk_agrees() -> None:
    """A new exchange code leaves the one pass until its pattern verdict is learnt (the
    record is deferred to Python once), then is read in one pass: same report each time."""
    native = DataSchemaContractVerifier(TICK_CONTRACT, max_payload_bytes=600, native=True)
    reference = DataSchemaContractVerifier(TICK_CONTRACT, max_payload_bytes=600, fast_path=False)
    for code in ["BATS", "BATS", "bats", "bats"]:
        batch: list[bytes | None] = [plain_tick(exchange=json.dumps(code))] * 3
        expected = summary(reference.validate_payloads(batch))
        assert summary(native.validate_payloads(batch)) == expected


def test_the_good_tick_is_valid() -> None:
    """The cases above start from a tick both paths find valid (no assertion by accident)."""
    native, _ = TICK_PAIR
    report = native.validate_payloads([plain_tick()])  # type: ignore[attr-defined]
    assert report.valid_count == 1
    assert set(TICK_GOOD) == {f.name for f in TICK_CONTRACT.fields}
