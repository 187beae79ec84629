"""The Rust verdict core and the Python rules give the same report on any payloads.

The reference is the verifier with ``fast_path=False`` (the Python rules alone). Compared:
the valid/quarantined split, every violation in order (field, kind, text, rule, flagged),
null counts and rates, unknown fields, flagged rules and fields, rule violation counts.
SV_DIFF_EXAMPLES sets the number of hypothesis examples per test (2,000 by default, as
in CI; a long run, without the 300 s per-test timeout:
``SV_DIFF_EXAMPLES=200000 .venv/bin/pytest tests/unit/native -q --timeout=0``).
"""

from __future__ import annotations

import json
import os
import random
from datetime import datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream_validator import DataSchemaContractVerifier, SchemaContract, load_contract
from stream_validator.verify import batch as batch_module
from tests.unit.verify.test_native_differential import (
    CONTRACTS,
    EDGE_NUMBERS,
    FLAG_CONTRACTS,
    NOW,
    STRING_CONTRACTS,
    TEXTS,
    corrupt,
    payloads,
    summary,
    timestamp,
)

EXAMPLES = int(os.environ.get("SV_DIFF_EXAMPLES", "2000"))
TICK = Path(__file__).resolve().parents[3] / "config" / "contracts" / "tick.yaml"
TICK_CONTRACT = load_contract(TICK)
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def native_pair(contract: SchemaContract, chunk: int) -> tuple[object, object]:
    native = DataSchemaContractVerifier(contract, max_payload_bytes=600, native=True)
    assert native._rust is not None  # the core must plan the contract under test
    native._rust.chunk = chunk
    reference = DataSchemaContractVerifier(contract, max_payload_bytes=600, fast_path=False)
    return native, reference


# Every contract of the msgspec differential (the one with rules using or/not/in/strings/
# when, and the nested ones: test_differential_nested).
PAIRS = [native_pair(c, chunk) for c in CONTRACTS for chunk in (3, 256)]
STRING_PAIRS = [native_pair(c, chunk) for c in STRING_CONTRACTS[:2] for chunk in (3, 256)]
FLAG_PAIRS = [native_pair(c, 256) for c in FLAG_CONTRACTS]
TICK_PAIR = native_pair(TICK_CONTRACT, 256)


@SETTINGS
@given(
    st.one_of(
        st.tuples(st.sampled_from(PAIRS), payloads()),
        st.tuples(st.sampled_from(STRING_PAIRS), payloads(strings=True)),
        st.tuples(st.just(FLAG_PAIRS[0]), payloads()),
        st.tuples(st.just(FLAG_PAIRS[1]), payloads(strings=True)),
    ),
    st.sampled_from([None, NOW]),
)
def test_core_and_python_rules_agree(
    pair_and_batch: tuple[tuple[object, object], list[bytes | None]], now: datetime | None
) -> None:
    """Bounds, nulls, types, unknown and repeated keys, datetimes and skew windows, rules
    (flag and quarantine, division, chains), strings (allowed, pattern, lengths), flagged
    fields: the core's report is the reference's."""
    (native, reference), batch = pair_and_batch
    expected = summary(reference.validate_payloads(batch, now=now))  # type: ignore[attr-defined]
    assert summary(native.validate_payloads(batch, now=now)) == expected  # type: ignore[attr-defined]


TICK_GOOD = {
    "symbol": '"AAPL"',
    "exchange": '"XNAS"',
    "event_ts": '"2026-11-30T14:00:00.123000+00:00"',
    "seq": "17",
    "price": "101.25",
    "size": "300",
    "bid": "101.24",
    "ask": "101.26",
    "bid_sz": "5",
    "ask_sz": "7",
}
TICK_TEXTS = [*TEXTS, "XNAS", "xnas", "XNA", "XNASD", "ARCX", "A" * 70, "it's", 'a"b']


def tick_value(rng: random.Random, name: str) -> str:
    """A tick field's value: often its good one, else an edge number, text or datetime."""
    roll = rng.random()
    if roll < 0.55:
        return TICK_GOOD[name]
    if roll < 0.7:
        return rng.choice(EDGE_NUMBERS)
    if roll < 0.8:
        return json.dumps(rng.choice(TICK_TEXTS))
    if roll < 0.9:
        return json.dumps(timestamp(rng))
    number = rng.choice([rng.uniform(-1, 1e7 + 1), rng.uniform(100, 102), 1e-9, 1e7, 0.0])
    return rng.choice([repr(number), str(rng.randint(-(2**55), 2**55)), "null"])


@st.composite
def tick_payloads(draw: st.DrawFn) -> list[bytes | None]:
    rng = random.Random(draw(st.integers(0, 2**64)))
    batch: list[bytes | None] = []
    for _ in range(rng.randint(1, 12)):
        pairs = {name: tick_value(rng, name) for name in TICK_GOOD}
        if rng.random() < 0.5:  # a book near the price: the rules decide
            mid = rng.uniform(1, 200)
            pairs["bid"], pairs["ask"] = repr(mid), repr(mid * rng.uniform(0.9, 1.1))
        if rng.random() < 0.1:
            del pairs[rng.choice(list(pairs))]
        items = [f'"{k}":{v}' for k, v in pairs.items()]
        if rng.random() < 0.2:
            items.append(f'"{rng.choice(["extra", "ask_volume", "seq", "x" * 300])}":1')
        if rng.random() < 0.3:
            rng.shuffle(items)
        space = rng.choice(["", "", " ", "\n"])
        batch.append(("{" + space + ("," + space).join(items) + "}").encode())
    for _ in range(rng.choice([0, 0, 1, 2])):
        corrupt(rng, batch)
    return batch


@SETTINGS
@given(tick_payloads())
def test_core_and_python_rules_agree_on_ticks(batch: list[bytes | None]) -> None:
    """The shipped tick contract: edge numbers around its bounds, its pattern, its rules."""
    native, reference = TICK_PAIR
    expected = summary(reference.validate_payloads(batch))  # type: ignore[attr-defined]
    assert summary(native.validate_payloads(batch)) == expected  # type: ignore[attr-defined]


def test_core_settles_plain_records_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """Clean ticks and ticks with plain field violations never reach the Python rules."""
    calls: list[int] = []
    full = batch_module.BatchAccumulator._full_payload

    def counted(self: batch_module.BatchAccumulator, index: int, payload: object) -> object:
        calls.append(index)
        return full(self, index, payload)  # type: ignore[arg-type]

    monkeypatch.setattr(batch_module.BatchAccumulator, "_full_payload", counted)
    good = "{" + ",".join(f'"{k}":{v}' for k, v in TICK_GOOD.items()) + "}"
    bad = [
        good.replace('"price":101.25', '"price":-1.0'),
        good.replace('"size":300', '"size":true'),
        good.replace('"symbol":"AAPL"', '"symbol":null'),
        good.replace('"event_ts":"2026-11-30T14:00:00.123000+00:00"', '"event_ts":"yesterday"'),
        good.replace(',"bid_sz":5', ""),
        good.replace('"ask_sz":7', '"ask_volume":7'),
    ]
    native, reference = TICK_PAIR
    batch = [good.encode()] * 5 + [b.encode() for b in bad]
    report = native.validate_payloads(batch)  # type: ignore[attr-defined]
    assert calls == []
    assert report.valid_count == 5
    assert summary(report) == summary(reference.validate_payloads(batch))  # type: ignore[attr-defined]


def test_core_error_falls_back_to_the_rules(caplog: pytest.LogCaptureFixture) -> None:
    """If the core raises on a chunk, the Python rules take it: same report, one log line."""
    native, reference = TICK_PAIR
    good = ("{" + ",".join(f'"{k}":{v}' for k, v in TICK_GOOD.items()) + "}").encode()
    batch = [good, good.replace(b'"seq":17', b'"seq":-1'), good]
    expected = summary(reference.validate_payloads(batch))  # type: ignore[attr-defined]
    rust = native._rust  # type: ignore[attr-defined]
    plan = rust.plan

    class Exploding:
        def scan(self, *args: object) -> object:
            raise RuntimeError("core bug")

    rust.plan = Exploding()
    try:
        assert summary(native.validate_payloads(batch)) == expected  # type: ignore[attr-defined]
    finally:
        rust.plan = plan
    assert [r.levelname for r in caplog.records] == ["ERROR"]


# The plain-form reader checks a number against its field's range as it reads it, and the
# event time's minute is remembered from record to record: their edges, field by field.
PLAIN_NUMBERS = [
    *EDGE_NUMBERS,
    "1",
    "-1",
    "-0",
    "00",
    "01",
    "0.000000001",
    "0.0000000009999999999",
    "0.000000000999999999",
    "10000000",
    "10000000.0",
    "10000000.000000001",
    "10000000.00000001",
    "9999999.999999999",
    "9999999.99999999",
    "1000000000",
    "1000000001",
    "999999999.5",
    "123456789012345678",
    "-123456789012345678",
    "1234567890123456789",
    "9007199254740992",
    "9007199254740993.0",
    "101.25e0",
    "101.25E+1",
    "1E-9",
    "0.1234567890123456789",
    "101.",
    "-",
    "1.5.",
]
MINUTE_TIMES = [
    "2026-11-30T14:05:07.123000+00:00",
    "2026-11-30T14:05:59.999999-01:30",
    "2026-11-30T14:05:60.000000+00:00",
    "2026-11-30T14:05:5a.000000+00:00",
    "2026-11-30T14:05-07.000000+00:00",
    "2026-11-30T14:05:07",
    "2026-11-30T14:05:07Z",
    "2026-11-30T14:05:07.12Z",
    "2026-11-30T14:05:07.123+24:00",
    "2026-11-30T14:05:",
    "2026-11-30T14:05:07 ",
    "2026-11-30T14:06:00Z",
    "2024-02-30T14:05:07Z",
    "2024-02-29T23:59:59.5Z",
]


def plain_tick(**values: str) -> bytes:
    return (
        "{" + ",".join(f'"{k}":{values.get(k, v)}' for k, v in TICK_GOOD.items()) + "}"
    ).encode()


@pytest.mark.parametrize("name", ["seq", "price", "size", "bid", "ask", "bid_sz"])
def test_numbers_read_and_checked_in_one_pass_agree(name: str) -> None:
    """Every edge number in the compact form for each numeric tick field (ranges of float
    and int fields, ints past 2**53 and 2**63, exponents, -0, long fractions, bad forms)."""
    native, reference = TICK_PAIR
    batch: list[bytes | None] = [plain_tick(**{name: n}) for n in PLAIN_NUMBERS]
    expected = summary(reference.validate_payloads(batch))  # type: ignore[attr-defined]
    assert summary(native.validate_payloads(batch)) == expected  # type: ignore[attr-defined]


def test_times_sharing_a_minute_agree() -> None:
    """Event times read after one of the same minute (valid and odd seconds, offsets,
    fractions, a day that does not exist), in order and reversed, one chunk."""
    native, reference = TICK_PAIR
    times = [*MINUTE_TIMES, *reversed(MINUTE_TIMES), *MINUTE_TIMES[::2]]
    batch: list[bytes | None] = [plain_tick(event_ts=json.dumps(t)) for t in times]
    expected = summary(reference.validate_payloads(batch))  # type: ignore[attr-defined]
    assert summary(native.validate_payloads(batch)) == expected  # type: ignore[attr-defined]
