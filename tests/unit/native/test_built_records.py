"""The core builds a bad record's ``QuarantinedRecord`` and ``Violation``s through the
public types themselves (native/src/verdict/built.rs): the same objects the Python rules
build, field for field."""

from __future__ import annotations

import dataclasses
import gc
from pathlib import Path

import pytest

from stream_validator import (
    DataSchemaContractVerifier,
    QuarantinedRecord,
    Violation,
    _native,
    load_contract,
)
from stream_validator.verify.report import ViolationKind
from stream_validator.verify.rustcore import KINDS

TICK = Path(__file__).resolve().parents[3] / "config" / "contracts" / "tick.yaml"
GOOD = (
    b'{"symbol":"AAPL","exchange":"XNAS","event_ts":"2026-11-30T14:00:00.123000+00:00",'
    b'"seq":17,"price":101.25,"size":300,"bid":101.24,"ask":101.26,"bid_sz":5,"ask_sz":7}'
)
BAD = [
    GOOD.replace(b'"price":101.25', b'"price":-1.0'),
    GOOD.replace(b'"size":300', b'"size":null,"extra":1'),
    GOOD[:40],
    None,
    b"[1]",
]


def test_built_records_equal_the_python_rules_ones() -> None:
    """Same type, fields, kinds (ViolationKind), equality, hash and repr as the reference's."""
    contract = load_contract(TICK)
    native = DataSchemaContractVerifier(contract, native=True)
    assert native._rust is not None
    reference = DataSchemaContractVerifier(contract, fast_path=False)
    native.validate_payloads([GOOD])  # the core learns the exchange pattern first
    got = native.validate_payloads(BAD).quarantined_records
    want = reference.validate_payloads(BAD).quarantined_records
    assert got == want
    assert [repr(q) for q in got] == [repr(q) for q in want]
    for q in got:
        assert type(q) is QuarantinedRecord
        assert type(q.violations) is list
        for v in q.violations:
            assert type(v) is Violation
            assert type(v.kind) is ViolationKind
            assert v.rule is None
            assert hash(v) == hash(Violation(v.field, v.kind, v.message))
    # Frozen, holding only texts, None and a ViolationKind: no cycle can run through one,
    # so the core leaves it out of the cyclic collector's generations (built.rs).
    assert not any(gc.is_tracked(v) for q in got for v in q.violations)
    referents = {type(r) for q in got for v in q.violations for r in gc.get_referents(v)}
    assert referents <= {str, ViolationKind, type(None), type}  # type: the class itself
    with pytest.raises(dataclasses.FrozenInstanceError):
        got[0].violations[0].message = "changed"  # type: ignore[misc]


def test_report_types_are_the_dataclass_fields() -> None:
    """The slots the core sets are exactly the dataclasses' fields, in order."""
    assert [f.name for f in dataclasses.fields(Violation)] == ["field", "kind", "message", "rule"]
    assert [f.name for f in dataclasses.fields(QuarantinedRecord)] == [
        "index",
        "raw_payload",
        "violations",
    ]


def test_report_types_refuse_a_class_without_those_slots() -> None:
    """A class whose fields are not slots is refused with a TypeError, not misbuilt."""

    @dataclasses.dataclass
    class Plain:
        field: str | None = None
        kind: str = ""
        message: str = ""
        rule: str | None = None

    with pytest.raises(TypeError):
        _native.ReportTypes(Plain, QuarantinedRecord, list(KINDS))


def test_scan_lines_builds_the_records_scan_builds_of_the_same_lines() -> None:
    """``scan_lines`` with report types: the events, tally and ``QuarantinedRecord``s that
    ``VerdictPlan.scan`` gives for the same lines as payloads (raw: the line's bytes),
    an oversized line's ``oversized`` violation included, with the same batch positions."""
    from stream_validator.verify.rustcore import _TYPES

    native = DataSchemaContractVerifier(load_contract(TICK), native=True)
    rust = native._rust
    assert rust is not None
    native.validate_payloads([GOOD])  # the exchange pattern learnt
    limit = 300
    payloads = [GOOD, *(b for b in BAD if b is not None), b"{" + b" " * limit + b"}", GOOD]
    block = b"".join(p + b"\r\n" for p in payloads[:3]) + b" \n" + b"\n".join(payloads[3:])
    windows = native.start_batch()._rust_windows
    after, lines, blanks, records, got = _native.scan_lines(
        rust.plan, block, 0, len(block), False, False, 100, windows, limit, None, _TYPES, 7
    )
    want = rust.plan.scan(payloads, windows, limit, None, types=_TYPES, base=7)
    assert (after, lines, blanks, len(records)) == (len(block), len(payloads) + 1, 1, len(payloads))
    assert got == want
    built = [e[2] for e in got[0] if e[1] == 3]
    assert [q.index for q in built] == [7 + i for i in range(1, len(payloads) - 1)]
    assert [type(q.raw_payload) for q in built] == [bytes] * len(built)
    assert built[-1].violations[0].kind is ViolationKind.OVERSIZED
