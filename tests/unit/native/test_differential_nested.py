"""The Rust verdict core and the Python rules agree on object and array fields and on rules
with ``or``/``not``/``in``/strings/``when`` (on top-level fields and on nested paths).

Compared as in test_differential (the reference is the verifier with ``fast_path=False``):
verdicts, violations in order, null counts and rates, unknown fields (nested drift
included), flagged rules and fields. SV_DIFF_EXAMPLES sets the examples per test.
"""

from __future__ import annotations

import json
import random
from datetime import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream_validator import DataSchemaContractVerifier, FieldSpec, RuleSpec, SchemaContract
from stream_validator.verify import batch as batch_module
from tests.unit.native.test_differential import SETTINGS, native_pair
from tests.unit.verify.test_native_differential import (
    LEAVES,
    LEVEL_LEAVES,
    NESTED_FIELDS,
    NESTED_RULES,
    NOW,
    STRING_CONTRACTS,
    corrupt,
    leaf_value,
    payloads,
    record,
    summary,
    value,
)

# Every rule construct on top-level fields (the msgspec differential's EXTENDED_RULES).
EXTENDED_PAIRS = [native_pair(STRING_CONTRACTS[2], chunk) for chunk in (3, 256)]
# Objects, arrays of objects, nullable leaves at both depths, rules on nested paths (when,
# or, not, in, strings), a flagged array, and an array of scalars.
TAGS = FieldSpec("tags", list, max_items=3, items=FieldSpec("tag", str, max_length=4))
NESTED_CONTRACTS = [
    SchemaContract("n", NESTED_FIELDS, rules=NESTED_RULES, max_allowed_null_pct=30.0),
    SchemaContract(
        "n",
        [*NESTED_FIELDS, TAGS],
        rules=[*NESTED_RULES, RuleSpec.of("top_sym", "sym != 'B' or book.ask >= 1", "flag")],
        forbid_unknown_fields=True,
        max_allowed_null_pct=30.0,
    ),
    SchemaContract(
        "n",
        [
            FieldSpec("sym", str),
            FieldSpec("book", dict, is_nullable=True, fields=LEAVES),
            FieldSpec(
                "levels",
                list,
                min_items=1,
                max_items=3,
                action="flag",
                items=FieldSpec("level", dict, fields=LEVEL_LEAVES),
            ),
            TAGS,
        ],
        rules=NESTED_RULES[:2],
        max_allowed_null_pct=30.0,
    ),
]
NESTED_PAIRS = [native_pair(c, chunk) for c in NESTED_CONTRACTS for chunk in (3, 256)]


ODD_KEYS = ["extra", "b\\u0069d", "", "px"]


# Values that pass their field checks and make the rules go either way (a clean record
# is what the core settles itself); ``noise`` is the share of leaf_value's (often wrong).
CLEAN = {
    "bid": lambda rng: rng.choice(["null", "0.5", "1.0", "2.5", "40.0", "0"]),
    "ask": lambda rng: rng.choice(["0", "1.5", "2.5", "49.0", "60.5", "1e6"]),
    "live": lambda rng: rng.choice(["null", "true", "false"]),
    "at": lambda rng: rng.choice(
        ["null", '"2026-01-01T00:00:00Z"', '"2026-01-01T00:00:00.500+01:00"']
    ),
    "side": lambda rng: rng.choice(['"buy"', '"sell"']),
    "px": lambda rng: rng.choice(["0.0", "1.25", "3", "9.5"]),
    "sz": lambda rng: rng.choice(["null", "0", "3"]),
}


def leaf(rng: random.Random, name: str, noise: float) -> str | None:
    """A leaf's value as JSON text (None: left out)."""
    if rng.random() >= noise:
        return str(CLEAN[name](rng))
    got = leaf_value(rng, name)
    if got is None:
        return None
    kind, raw = got
    return str(raw) if kind == "raw" else json.dumps(raw)


def obj(rng: random.Random, names: list[str], noise: float) -> str:
    """An object of the given leaves: mostly right; sometimes a key left out, repeated,
    escaped or undeclared, in another order, with spaces."""
    items = []
    for name in names:
        text = leaf(rng, name, noise)
        if text is not None:
            items.append(f'"{name}":{text}')
    roll = rng.random() / max(noise, 0.01) * 0.2
    if roll < 0.05:
        items.append(rng.choice(items or ['"x":1']))  # a repeated key
    elif roll < 0.1:
        key = rng.choice(ODD_KEYS)
        items.append(f'"{key}":{value(rng)}')
    if rng.random() < 0.2:
        rng.shuffle(items)
    space = rng.choice(["", "", " ", "\n"])
    return "{" + space + ("," + space).join(items) + space + "}"


def nested_payload(rng: random.Random, noise: float = 0.2) -> bytes:
    """A record for NESTED_CONTRACTS: a book, levels and tags, mostly right."""
    wrong = noise / 2
    tags = ["a", "abcd", "\u00e9"] + (["abcde", 1] if noise else [])
    pairs = {
        "sym": json.dumps(rng.choice(["A", "B", "A", "\u00e9"])),
        "book": obj(rng, [s.name for s in LEAVES], noise),
        "levels": "["
        + ",".join(
            obj(rng, [s.name for s in LEVEL_LEAVES], noise) if rng.random() >= wrong else value(rng)
            for _ in range(2 if rng.random() >= noise else rng.choice([0, 1, 3, 4]))
        )
        + "]",
        "tags": json.dumps(
            [rng.choice(tags) for _ in range(rng.randrange(4))], ensure_ascii=rng.random() < 0.3
        ),
    }
    if rng.random() < wrong:
        pairs[rng.choice(list(pairs))] = rng.choice(["null", value(rng)])
    if rng.random() < wrong / 2:
        del pairs[rng.choice(list(pairs))]
    items = [f'"{k}":{v}' for k, v in pairs.items()]
    if rng.random() < wrong:
        items.append(f'"{rng.choice(["extra", "book.bid", "book.side", "sym"])}":{value(rng)}')
    if rng.random() < 0.2:
        rng.shuffle(items)
    return ("{" + ",".join(items) + "}").encode()


@st.composite
def nested_payloads(draw: st.DrawFn) -> list[bytes | None]:
    rng = random.Random(draw(st.integers(0, 2**64)))
    noise = rng.choice([0.0, 0.02, 0.2])
    batch: list[bytes | None] = [nested_payload(rng, noise) for _ in range(rng.randint(1, 12))]
    for _ in range(rng.choice([0, 0, 0, 1, 2])):
        corrupt(rng, batch)
    return batch


# Values that pass the checks of STRING_CONTRACTS[2]'s fields and send its rules (or, not,
# in, strings, when) either way (escapes and odd values come from ``record``, one field in
# ten records).
RULED = {
    "sym": ['"A"', '"é"'],
    "ts": ['"2026-11-30T10:00:00+00:00"', '"2026-11-30T10:00:00.25Z"'],
    "seq": ["0", "1", "5", "6", "2", "9007199254740993"],
    "px": ["0.0", "1.0", "2", "500001.0", "0.97"],
    "qty": ["null", "1", "2", "3", "-5", "9223372036854775807"],
    "bid": ["null", "0", "0.0", "1.0", "0.9409", "2.5", "-1.5"],
    "live": ["null", "true"],
    "at": ["null", '"2026-11-30T10:00:00Z"'],
    "size_z": ["null", "-1e9", "0", "-0.5"],
    "side": ['"buy"', '"sell"', '"bé"', '"😀"'],
    "venue": ['"XN1"', '"AB123-cd"', '"XY9"'],
    "kind": ["-5", "0", "7", "0", "7", "4611686018427387904"],
    "note": ["null", '"a"', '"abc"', '"x\'y"'],
}


@st.composite
def ruled_payloads(draw: st.DrawFn) -> list[bytes | None]:
    """Mostly clean records for the extended rules, some with a field from ``record``."""
    rng = random.Random(draw(st.integers(0, 2**64)))
    batch: list[bytes | None] = []
    for _ in range(rng.randint(1, 12)):
        pairs = {name: rng.choice(values) for name, values in RULED.items()}
        if rng.random() < 0.1:
            raw = json.loads(record(rng, strings=True))
            name = rng.choice(list(raw))
            if name in pairs:
                pairs[name] = json.dumps(raw[name])
        items = [f'"{k}":{v}' for k, v in pairs.items()]
        if rng.random() < 0.2:
            rng.shuffle(items)
        batch.append(("{" + ",".join(items) + "}").encode())
    return batch


@SETTINGS
@given(
    st.one_of(
        st.tuples(st.sampled_from(NESTED_PAIRS), nested_payloads()),
        st.tuples(st.sampled_from(EXTENDED_PAIRS), payloads(strings=True)),
        st.tuples(st.sampled_from(EXTENDED_PAIRS), ruled_payloads()),
    ),
    st.sampled_from([None, NOW]),
)
def test_core_and_python_rules_agree_on_nested_fields_and_rules(
    pair_and_batch: tuple[tuple[object, object], list[bytes | None]], now: datetime | None
) -> None:
    """Objects, arrays, nested nulls and drift, repeated and escaped nested keys, rules with
    or/not/in/strings/when on fields and on nested paths: the core's report is the
    reference's."""
    (native, reference), batch = pair_and_batch
    expected = summary(reference.validate_payloads(batch, now=now))  # type: ignore[attr-defined]
    assert summary(native.validate_payloads(batch, now=now)) == expected  # type: ignore[attr-defined]


CLEAN_BOOK = (
    b'{"sym":"A","book":{"bid":1.0,"ask":2.0,"live":null,"at":null,"side":"buy"},'
    b'"levels":[{"px":1.0,"sz":null},{"px":2.0,"sz":3}]}'
)


def test_core_settles_clean_nested_records_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    """A clean order book (nested nulls, rules on nested paths) and one with a top-level
    violation never reach the Python rules; a nested violation does, and is worded there."""
    calls: list[int] = []
    full = batch_module.BatchAccumulator._full_payload

    def counted(self: batch_module.BatchAccumulator, index: int, payload: object) -> object:
        calls.append(index)
        return full(self, index, payload)  # type: ignore[arg-type]

    monkeypatch.setattr(batch_module.BatchAccumulator, "_full_payload", counted)
    native, reference = NESTED_PAIRS[1]
    spaced = json.dumps(json.loads(CLEAN_BOOK)).encode()
    batch = [
        CLEAN_BOOK,
        spaced,
        CLEAN_BOOK.replace(b'"A"', b"1"),
        CLEAN_BOOK.replace(b"2.0,", b"-2.0,"),
    ]
    report = native.validate_payloads(batch)  # type: ignore[attr-defined]
    assert calls == [3]
    assert report.valid_indices == [0, 1]
    assert report.null_counts["levels[].sz"] == 2
    assert summary(report) == summary(reference.validate_payloads(batch))  # type: ignore[attr-defined]


RULED_CLEAN = (
    b'{"sym":"A","ts":"2026-11-30T10:00:00Z","seq":6,"px":1.0,"qty":null,"bid":0.5,'
    b'"live":true,"at":null,"size_z":-0.5,"side":"buy","venue":"XN1","kind":0,"note":"a"}'
)


def test_core_settles_records_under_or_in_when_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """Records the or/not/in/string/when rules pass, or flag, are settled natively; the
    one a quarantining rule fails (or_zero: bid <= px or bid == 0) is worded by Python."""
    calls: list[int] = []
    full = batch_module.BatchAccumulator._full_payload

    def counted(self: batch_module.BatchAccumulator, index: int, payload: object) -> object:
        calls.append(index)
        return full(self, index, payload)  # type: ignore[arg-type]

    native, reference = EXTENDED_PAIRS[1]
    native.validate_payloads([RULED_CLEAN])  # type: ignore[attr-defined]  # learns the pattern
    monkeypatch.setattr(batch_module.BatchAccumulator, "_full_payload", counted)
    flagged = RULED_CLEAN.replace(b'"px":1.0', b'"px":500001.0')  # limit_px, when side == buy
    crossed = RULED_CLEAN.replace(b'"bid":0.5', b'"bid":2.5')
    batch = [RULED_CLEAN, flagged, crossed]
    report = native.validate_payloads(batch)  # type: ignore[attr-defined]
    assert calls == [2]
    assert report.valid_indices == [0, 1]
    assert report.flagged_counts.get("limit_px") == 1
    assert summary(report) == summary(reference.validate_payloads(batch))  # type: ignore[attr-defined]


def test_pattern_inside_a_container_keeps_the_msgspec_path() -> None:
    """A pattern on a nested field is not planned natively: the contract keeps the
    Python side (msgspec or the rules)."""
    spec = FieldSpec("book", dict, fields=[FieldSpec("venue", str, pattern="[A-Z]{4}")])
    verifier = DataSchemaContractVerifier(SchemaContract("p", [spec]), native=True)
    assert verifier._rust is None
