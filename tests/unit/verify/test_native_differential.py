"""The native fast path and the full rules give the same report on any payloads.

SV_DIFF_EXAMPLES sets the number of hypothesis examples (10,000 by default; more by hand).
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import re
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream_validator import DataSchemaContractVerifier, FieldSpec, RuleSpec, SchemaContract
from stream_validator.verify.native import PROBE
from stream_validator.verify.report import MAX_NAMED_VIOLATIONS

EXAMPLES = int(os.environ.get("SV_DIFF_EXAMPLES", "10000"))

FIELDS = [
    FieldSpec("sym", str),
    FieldSpec("ts", datetime),
    FieldSpec("seq", int, min_value=0),
    FieldSpec("px", float, min_value=0.0, max_value=1e6),
    FieldSpec("qty", int, is_nullable=True, min_value=-5, max_value=2**63 + 10),
    FieldSpec("bid", float, is_nullable=True, min_value=-1.5),
    FieldSpec("live", bool, is_nullable=True),
    FieldSpec("at", datetime, is_nullable=True),
    FieldSpec("size_z", float, is_nullable=True, allow_non_finite=True, max_value=0),
]
NAMES = [spec.name for spec in FIELDS]
NOW = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)
AGE_S, FUTURE_S = 50 * 365 * 86400, 10 * 365 * 86400
# The same fields with timestamp checks, and rules of every shape: flag and quarantine,
# division (by zero too), chains, 'and', unary minus, a non-finite field.
TIMED = [
    FieldSpec("ts", datetime, require_timezone=True, max_future_s=FUTURE_S)
    if spec.name == "ts"
    else FieldSpec("at", datetime, is_nullable=True, max_age_s=AGE_S, max_future_s=FUTURE_S)
    if spec.name == "at"
    else spec
    for spec in FIELDS
]
RULES = [
    RuleSpec.of("crossed", "bid <= px"),
    RuleSpec.of("locked", "bid != px", "flag"),
    RuleSpec.of("band", "px - bid <= 0.05 * px", "flag"),
    RuleSpec.of("per_seq", "px / seq <= 1000000"),
    RuleSpec.of("chain", "size_z <= bid <= px + 1", "flag"),
    RuleSpec.of("both", "-qty <= seq * 2 and qty / (px - bid) >= -5"),
]
CONTRACTS = [
    SchemaContract("diff", FIELDS, max_allowed_null_pct=20.0),
    SchemaContract("diff", FIELDS, max_allowed_null_pct=20.0, forbid_unknown_fields=True),
    SchemaContract("diff", TIMED, max_allowed_null_pct=20.0, rules=RULES),
    SchemaContract(
        "diff", TIMED, max_allowed_null_pct=20.0, forbid_unknown_fields=True, rules=RULES[::-1]
    ),
]


def verifier_pair(contract: SchemaContract, chunk: int) -> tuple[object, object]:
    # native=False: this file holds the msgspec fast path to the rules (tests/unit/native
    # holds the Rust core to them).
    fast = DataSchemaContractVerifier(contract, max_payload_bytes=600, native=False)
    assert fast._native is not None  # the contract must be one the fast path handles
    fast._native.chunk = chunk
    full = DataSchemaContractVerifier(contract, max_payload_bytes=600, fast_path=False)
    return fast, full


PAIRS = [verifier_pair(c, chunk) for c in CONTRACTS for chunk in (3, 256)]

# The value checks of str and int fields: allowed (str, int within bounds, astral and
# combining characters), a pattern with \d (ASCII only) and an optional group, lengths in
# code points, a nullable str with lengths.
STRING_FIELDS = [
    FieldSpec("side", str, allowed=("buy", "sell", "b\u00e9", "\U0001f600")),
    FieldSpec("venue", str, pattern=r"[A-Z]{2}\d{1,3}(?:-[a-z.]{2})?", min_length=3, max_length=8),
    FieldSpec("kind", int, allowed=(-5, 0, 7, 2**62), min_value=-5),
    FieldSpec("note", str, is_nullable=True, min_length=1, max_length=3),
]
STRING_NAMES = [spec.name for spec in STRING_FIELDS]
TYPES = {spec.name: spec.expected_type for spec in FIELDS + STRING_FIELDS}
# Rules with every construct beyond a conjunction of comparisons: or, not, in / not in
# (numbers, strings, a computed operand, negative items), string constants with escapes,
# str fields compared with each other, and when/check.
EXTENDED_RULES = [
    RuleSpec.of("or_zero", "bid <= px or bid == 0", field_types=TYPES),
    RuleSpec.of("limit_px", "px > 500000", "flag", TYPES, when="side == 'buy'"),
    RuleSpec.of("sides", "side in ['buy', 'b\u00e9'] or venue != 'XN1'", "flag", TYPES),
    RuleSpec.of("kinds", "kind not in [0, -5] or note == 'a'", "flag", TYPES),
    RuleSpec.of("not_in", "not (qty in [1, 2, 3]) or seq > 5", field_types=TYPES),
    RuleSpec.of("computed", "not side == venue and kind / seq not in [0, 7]", "flag", TYPES),
    RuleSpec.of("scaled", "qty * 2 in [-10, 4, 0.0] or not bid > 0.97 * px", "flag", TYPES),
    RuleSpec.of(
        "quoted",
        r"""note not in ['x\'y', "abc", 'a\\'] or not (kind > 0 or qty < 0)""",
        "flag",
        TYPES,
    ),
    RuleSpec.of("nested", "not (not side != 'sell' and (bid < 0 or size_z < -1e8))", "flag", TYPES),
    RuleSpec.of(
        "when_in",
        "bid > 0 and bid <= px",
        when="venue in ['XN1', 'AB123-cd'] and kind == 7",
        field_types=TYPES,
    ),
]
STRING_CONTRACTS = [
    SchemaContract("diff", FIELDS + STRING_FIELDS, max_allowed_null_pct=20.0),
    SchemaContract(
        "diff",
        TIMED + STRING_FIELDS,
        max_allowed_null_pct=20.0,
        forbid_unknown_fields=True,
        rules=RULES,
    ),
    SchemaContract(
        "diff", TIMED + STRING_FIELDS, max_allowed_null_pct=20.0, rules=RULES + EXTENDED_RULES
    ),
]
STRING_PAIRS = [verifier_pair(c, chunk) for c in STRING_CONTRACTS for chunk in (3, 256)]
# Fields with action flag (a record whose only violations are theirs is valid): a bound,
# a nullable int, a datetime with a skew window, a str with an enum, one with a pattern.
FLAGGED = {"px", "qty", "at", "side", "venue"}


def flagged(specs: list[FieldSpec]) -> list[FieldSpec]:
    return [replace(s, action="flag") if s.name in FLAGGED else s for s in specs]


FLAG_CONTRACTS = [
    SchemaContract("diff", flagged(FIELDS), max_allowed_null_pct=20.0),
    SchemaContract(
        "diff",
        flagged(TIMED + STRING_FIELDS),
        max_allowed_null_pct=20.0,
        forbid_unknown_fields=True,
        rules=RULES,
    ),
]
FLAG_PAIRS = [verifier_pair(c, chunk) for c in FLAG_CONTRACTS for chunk in (3, 256)]
SIDES = ["buy", "sell", "b\u00e9", "\U0001f600", "Buy", "buy ", "", "hold", "be\u0301", "sell\x00"]
VENUES = ["XN1", "AB123-cd", "AB12-c.", "ab1", "AB", "AB1234", "AB\u0661\u0662", "AB1\n", "XY9-Zz"]
KINDS = ["-5", "0", "7", str(2**62), "-6", "1", "8", "7.0", "true", str(2**62 + 1), '"7"']
NOTES = ["a", "abc", "abcd", "", "\U0001f600" * 3, "\U0001f600" * 4, "\u00e9" * 3, "\u00e9" * 4]

# Generation uses a hypothesis-seeded Random: drawing every byte through strategies made
# an example cost ~35 ms, and the test has to run 10,000 of them in CI.
ISO_FORMS = [
    "%Y-%m-%dT%H:%M:%S",
    "%Y-%m-%dT%H:%M:%S.%f",
    "%Y-%m-%d %H:%M:%S",
    "%Y-%m-%dT%H:%M",
    "%Y-%m-%d",
    "%Y%m%dT%H%M%S",
    "%Y-%m-%dT%H:%M:%S%z",
    "%Y-%m-%dT%H:%M:%S.%f%z",
]
SUFFIXES = ["", "Z", "z", "+00:00", "-05:30", "+0530", "+05", "+24:00", "t", ".1234567Z", " "]
EDGE_NUMBERS = [
    "0",
    "-0.0",
    "0.0",
    "1e6",
    "1000000.0000000001",
    "-1.5",
    "-1.5000000000000002",
    "-5",
    "-6",
    str(2**63 - 1),
    str(2**63),
    str(2**63 + 10),
    str(2**63 + 11),
    str(2**64 - 1),
    str(2**64),
    str(2**70),
    str(-(2**63)),
    str(-(2**63) - 1),
    "1e308",
    "5e-324",
    "9007199254740993",
    "NaN",
    "Infinity",
    "-Infinity",
    "1e400",
    "-1e400",
    "1E2",
    "1.0",
    "-0",
    "0.0e0",
    "true",
    "false",
    "null",
    "[]",
    "{}",
    '""',
    "[" * 1000 + "]" * 1000,
]
TEXTS = ["", "A", "é", "a,b", 'q"', "x\\", "]\n,[", "\u0000", "null", "\U0001f600"]
KEYS = [*NAMES, "extra", "pr\\u0069ce", "", "s\\u0079m"]


def timestamp(rng: random.Random) -> str:
    moment = datetime(1, 1, 1) + timedelta(seconds=rng.uniform(0, 3.15e11))
    if rng.random() < 0.3:  # near now or a skew bound, to the sub-microsecond
        bound = rng.choice([0, -AGE_S, FUTURE_S])
        near = NOW + timedelta(seconds=bound + rng.uniform(-3, 3))
        text = near.isoformat(timespec="microseconds")[:-6] + str(rng.randrange(10))
        return text + rng.choice(["Z", "+00:00", "", "+01:00", "-00:30"])
    if rng.random() < 0.3:
        moment = moment.replace(tzinfo=timezone(timedelta(minutes=rng.randint(-1439, 1439))))
    try:
        text = moment.strftime(rng.choice(ISO_FORMS))
    except ValueError:
        text = "0001-01-01T00:00:00"
    text += rng.choice(SUFFIXES) if rng.random() < 0.5 else ""
    if rng.random() < 0.2:
        text = text.replace("T", rng.choice(["t", " ", "x"]))
    return text


def string(rng: random.Random, text: str) -> str:
    if rng.random() < 0.2:
        return '"' + "".join(f"\\u{ord(c):04x}" if ord(c) < 0x10000 else c for c in text) + '"'
    return json.dumps(text, ensure_ascii=False)


def value(rng: random.Random, depth: int = 0) -> str:
    """Any JSON-ish value as text, often a wrong one for the field."""
    kind = rng.randrange(10)
    if kind == 0:
        return rng.choice(EDGE_NUMBERS)
    if kind == 1:
        return json.dumps(rng.choice([rng.randint(-(2**65), 2**65), rng.randint(-10, 10)]))
    if kind == 2:
        return repr(rng.choice([rng.uniform(-2e6, 2e6), rng.uniform(-2, 2), -0.0]))
    if kind == 3:
        return string(rng, timestamp(rng))
    if kind == 4:
        return string(rng, rng.choice(TEXTS))
    if kind == 5 and depth < 2:
        return "{" + ",".join(members(rng, depth + 1)) + "}"
    if kind == 6 and depth < 2:
        return "[" + ",".join(value(rng, depth + 1) for _ in range(rng.randrange(3))) + "]"
    return rng.choice(["true", "false", "null", "0", "1.5"])


def members(rng: random.Random, depth: int = 0) -> list[str]:
    out = []
    for _ in range(rng.randrange(4)):
        space = rng.choice(["", " ", "\n\t"])
        out.append(f'"{rng.choice(KEYS)}"{space}:{space}{value(rng, depth)}')
    return out


def text_near(rng: random.Random, texts: list[str]) -> str:
    """One of ``texts`` (the first two, which pass, most often), sometimes with a character
    added where a check may notice it."""
    text = rng.choice(texts[:2] if rng.random() < 0.7 else texts)
    if rng.random() < 0.1:
        at = rng.randint(0, len(text))
        text = text[:at] + rng.choice("A1a-.\n \u00e9\U0001f600\u0661") + text[at:]
    return text


def record(rng: random.Random, strings: bool = False) -> bytes:
    """A JSON object near the contract: most fields right, some wrong, some repeated;
    ``strings``: with the STRING_FIELDS too."""
    good = {
        "sym": lambda: string(rng, rng.choice(TEXTS)),
        "ts": lambda: string(rng, timestamp(rng)),
        "seq": lambda: str(rng.randint(0, 10**6)),
        "px": lambda: rng.choice([repr(rng.uniform(0, 1e6)), str(rng.randint(0, 10**6))]),
        "qty": lambda: rng.choice(["null", str(rng.randint(-5, 100))]),
        "bid": lambda: rng.choice(["null", repr(rng.uniform(-1.5, 1e9))]),
        "live": lambda: rng.choice(["null", "true", "false"]),
        "at": lambda: rng.choice(["null", string(rng, timestamp(rng))]),
        "size_z": lambda: rng.choice(["null", repr(rng.uniform(-1e9, 0)), "0", "-0.0"]),
    }
    if strings:
        good["side"] = lambda: string(rng, text_near(rng, SIDES))
        good["venue"] = lambda: string(rng, text_near(rng, VENUES))
        good["kind"] = lambda: rng.choice(KINDS[:4] if rng.random() < 0.7 else KINDS)
        good["note"] = lambda: rng.choice(["null", string(rng, text_near(rng, NOTES))])
    names = list(good)
    pairs = {name: make() for name, make in good.items()}
    if rng.random() < 0.7:  # a book near the price, so that the rules mostly hold
        px = float(pairs["px"])
        pairs["bid"] = repr(px * rng.choice([1.0, rng.uniform(0.94, 1.0), rng.uniform(1, 1.1)]))
        pairs["seq"] = rng.choice([pairs["seq"], "0", "1"])
    for _ in range(rng.choice([0, 0, 1, 2])):
        pairs[rng.choice(names)] = value(rng)
    if rng.random() < 0.1:
        del pairs[rng.choice(names)]
    items = [f'"{k}":{v}' for k, v in pairs.items()]
    if rng.random() < 0.3:
        items += members(rng)  # unknown, repeated or escaped keys
    rng.shuffle(items)
    space = rng.choice(["", "", " ", "\n", "\r\n\t"])
    return ("{" + space + ("," + space).join(items) + space + "}").encode()


def corrupt(rng: random.Random, batch: list[bytes | None]) -> None:
    """Corruptions, several of them built to shift element boundaries of a joined decode."""
    i = rng.randrange(len(batch))
    raw = batch[i] or b"{}"
    cut = rng.randint(0, len(raw))
    kind = rng.randrange(9)
    if kind == 0:  # two records in one payload
        batch[i] = raw + b"," + raw
    elif kind == 1:  # one record split over two payloads
        batch[i : i + 1] = [raw[:cut], raw[cut:]]
    elif kind == 2:  # the framing's own bytes inside a payload
        batch[i] = raw[:cut] + rng.choice([b"]\n,[", b"],[", b"]]", b"[[", b"\n"]) + raw[cut:]
    elif kind == 3:
        batch[i] = raw[:cut]
    elif kind == 4:
        batch[i] = raw[:cut] + rng.randbytes(rng.randint(1, 3)) + raw[cut:]
    elif kind == 5:
        batch[i] = None
    elif kind == 6:
        batch[i] = raw + b" " * 600  # oversized
    elif kind == 7:
        batch[i] = b" \t" + raw + b"\n"
    else:
        batch[i] = b'"' + raw.replace(b'"', b'\\"') + b'"'


@st.composite
def payloads(draw: st.DrawFn, strings: bool = False) -> list[bytes | None]:
    rng = random.Random(draw(st.integers(0, 2**64)))
    if rng.random() < 0.125:
        # Longer than the fast path's probe (the first PROBE rows of a chunk), and often
        # mostly bad there, as in a vendor incident: the rest then goes to the full rules.
        batch = [record(rng, strings) for _ in range(rng.randint(PROBE + 1, PROBE + 40))]
        share = rng.choice([0.5, 0.75, 0.9, 1.0])
        for i in range(PROBE):
            if rng.random() < share:
                raw = batch[i] or b"{}"
                batch[i] = raw[: rng.randrange(len(raw))]  # cut short: never decodes
        return batch
    batch = [record(rng, strings) for _ in range(rng.randint(1, 12))]
    for _ in range(rng.choice([0, 0, 1, 1, 2, 3])):
        corrupt(rng, batch)
    return batch


def summary(report: object) -> dict[str, object]:
    return {
        "valid": report.valid_indices,  # type: ignore[attr-defined]
        "quarantined": [
            (q.index, q.raw_payload, q.violations)
            for q in report.quarantined_records  # type: ignore[attr-defined]
        ],
        "null_counts": report.null_counts,  # type: ignore[attr-defined]
        "null_rates": report.null_rates,  # type: ignore[attr-defined]
        "breaches": report.null_breach_fields,  # type: ignore[attr-defined]
        "unknown": report.observed_unknown_fields,  # type: ignore[attr-defined]
        "counts": report.violation_counts,  # type: ignore[attr-defined]
        # the order summary() lists them in
        "counts_order": list(report.violation_counts),  # type: ignore[attr-defined]
        "records": list(report.valid_records),  # type: ignore[attr-defined]
        "flagged": report.flagged_counts,  # type: ignore[attr-defined]
        "flagged_fields": report.flagged_field_counts,  # type: ignore[attr-defined]
        "flagged_records": report.flagged_records,  # type: ignore[attr-defined]
        "rule_counts": report.rule_violation_counts,  # type: ignore[attr-defined]
    }


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    st.one_of(
        st.tuples(st.sampled_from(PAIRS), payloads()),
        st.tuples(st.sampled_from(STRING_PAIRS), payloads(strings=True)),
        st.tuples(st.sampled_from(FLAG_PAIRS[:2]), payloads()),
        st.tuples(st.sampled_from(FLAG_PAIRS[2:]), payloads(strings=True)),
    ),
    st.sampled_from([None, NOW]),
)
def test_fast_path_and_full_rules_agree(
    pair_and_batch: tuple[tuple[object, object], list[bytes | None]], now: datetime | None
) -> None:
    """Same valid/quarantined split, violations, null counts/rates, unknown fields and
    flagged rules and fields, with and without a time of validation (and with allowed,
    pattern and length checks)."""
    (fast, full), batch = pair_and_batch
    expected = summary(full.validate_payloads(batch, now=now))  # type: ignore[attr-defined]
    assert summary(fast.validate_payloads(batch, now=now)) == expected  # type: ignore[attr-defined]


GOOD = (
    b'{"sym":"A","ts":"2026-11-30T14:00:00+00:00","seq":1,"px":2.5,"qty":null,'
    b'"bid":null,"live":true,"at":null,"size_z":-1.0}'
)


def cut_after(payload: bytes, marker: bytes) -> list[bytes]:
    """The payload in two, cut inside a literal or an escape right after ``marker``: the
    decoder reads on past the end of the first part (``f`` + ``alse`` reads 4 bytes on)."""
    cut = payload.index(marker) + len(marker)
    return [payload[:cut], payload[cut:]]


# No null: the fast path settles runs of these without decoding them again.
FULL = (
    b'{"sym":"A","ts":"2026-11-30T14:00:00+00:00","seq":1,"px":2.5,"qty":3,'
    b'"bid":1.5,"live":true,"at":"2026-11-30T14:00:01+00:00","size_z":-1.0}'
)
FALSE = FULL.replace(b'"live":true', b'"live":false')
SURROGATE = FULL.replace(b'"sym":"A"', b'"sym":"\\ud83d\\ude00"')


@pytest.mark.parametrize(
    "batch",
    [
        [GOOD + b"," + GOOD, GOOD[:40], GOOD[40:]],
        [GOOD[:40] + b"]\n,[" + GOOD[40:], GOOD],
        [GOOD + b"]\n,[" + GOOD, GOOD[:-1], b"}"],
        [GOOD.replace(b'"A"', b'"A]\\n,["'), GOOD.replace(b'"seq":1', b'"seq":1,"seq":-1')],
        [GOOD.replace(b"+00:00", b"z"), GOOD.replace(b"+00:00", b"Z"), GOOD.replace(b"T", b"t")],
        [GOOD, GOOD.replace(b"+00:00", b"\\u007a"), GOOD.replace(b'"sym"', b'"s\\u0079m"')],
        [GOOD.replace(b',"size_z":-1.0', b""), GOOD, GOOD.replace(b"+00:00", b"z"), GOOD],
        [GOOD, GOOD.replace(b'"A"', b'"A]"'), GOOD, GOOD.replace(b'"seq":1', b'"seq":-1'), GOOD],
        [GOOD, GOOD + b"],[" + GOOD, GOOD, b"[1]", GOOD, GOOD[:-1], GOOD],
        [GOOD, GOOD.replace(b'"seq":1', b'"seq":-1'), GOOD, b"{", GOOD, b"\xff" + GOOD, GOOD],
        [FULL, *cut_after(FULL, b'"live":t'), FULL, *cut_after(FALSE, b'"live":f'), FULL],
        [GOOD + b"],[" + GOOD, b"[1]", GOOD, GOOD + b"],[" + GOOD, b"{", GOOD],
        [GOOD, GOOD + b"] ,\n[" + GOOD + b"],[" + GOOD, GOOD, b"7", b"[]", GOOD, b'"x"', GOOD],
        [FULL, *cut_after(GOOD, b'"qty":n'), FULL, *cut_after(SURROGATE, b"\\ud83d"), FULL],
    ],
    ids=[
        "glued-then-split",
        "separator-inside",
        "unbalanced",
        "string-and-dup",
        "lowercase-z",
        "escaped-z-and-key",
        "missing-z-key-hides-a-z",
        "bracket-before-failure",
        "extra-arrays-then-failures",
        "failures-resumed-in-place",
        "literal-split-over-two-payloads",
        "glued-before-an-element-and-a-byte-failure",
        "two-extra-elements-then-failures",
        "null-and-escape-split-over-two-payloads",
    ],
)
def test_adversarial_boundaries_agree(batch: list[bytes], caplog: pytest.LogCaptureFixture) -> None:
    """Payloads built to shift element boundaries of a joined decode get the rules' verdict,
    from the fast path itself (not from its fallback on an error)."""
    for fast, full in PAIRS + FLAG_PAIRS[:2]:
        got = summary(fast.validate_payloads(batch))  # type: ignore[attr-defined]
        assert got == summary(full.validate_payloads(batch))  # type: ignore[attr-defined]
    assert not caplog.records


def test_fast_path_takes_clean_records() -> None:
    """A clean record is accepted without the rules (the point of the fast path)."""
    fast, _ = PAIRS[0]
    native = fast._native  # type: ignore[attr-defined]
    nulls = [0, 0, 0, 0, 0]
    assert native.screen([GOOD, GOOD], nulls) == []
    assert nulls == [2, 2, 0, 2, 0]


def test_fast_path_error_falls_back_to_the_rules(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """If the fast path raises, the chunk goes to the full rules: same report, one log line."""
    from stream_validator.verify.native import NativeCheck

    def explode(self: NativeCheck, part: object, nulls: list[int]) -> list[int]:
        nulls[0] += 99  # partial work must not leak into the report
        raise RuntimeError("fast path bug")

    fast, full = PAIRS[0]
    batch = [GOOD, GOOD.replace(b'"seq":1', b'"seq":-1'), GOOD]
    expected = summary(full.validate_payloads(batch))  # type: ignore[attr-defined]
    monkeypatch.setattr(NativeCheck, "screen", explode)
    assert summary(fast.validate_payloads(batch)) == expected  # type: ignore[attr-defined]
    assert [r.levelname for r in caplog.records] == ["ERROR"]


# --- nested contracts ------------------------------------------------------------------
# A nested contract takes no native fast path: the reference rules walk its objects and
# arrays. Two differentials hold it: the verifier with the fast path on gives the report
# of the one with it off, and the nested contract gives the verdicts the native fast path
# gives the same data flattened (book.bid -> book_bid, levels[1].px -> levels_1_px).
LEAVES = [
    FieldSpec("bid", float, is_nullable=True, min_value=0.0),
    FieldSpec("ask", float, max_value=1e6),
    FieldSpec("live", bool, is_nullable=True),
    FieldSpec("at", datetime, is_nullable=True, require_timezone=True),
    FieldSpec("side", str, allowed=("buy", "sell")),
]
LEVEL_LEAVES = [FieldSpec("px", float, min_value=0.0), FieldSpec("sz", int, is_nullable=True)]
NESTED_FIELDS = [
    FieldSpec("sym", str),
    FieldSpec("book", dict, fields=LEAVES),
    FieldSpec(
        "levels",
        list,
        min_items=2,
        max_items=2,
        items=FieldSpec("level", dict, fields=LEVEL_LEAVES),
    ),
]
FLAT_FIELDS = [
    FieldSpec("sym", str),
    *(dataclasses.replace(spec, name=f"book_{spec.name}") for spec in LEAVES),
    *(
        dataclasses.replace(spec, name=f"levels_{i}_{spec.name}")
        for i in range(2)
        for spec in LEVEL_LEAVES
    ),
]
NESTED_RULES = [
    RuleSpec.of("crossed", "book.bid <= book.ask"),
    RuleSpec.of("wide", "book.ask - book.bid <= 10", "flag"),
    RuleSpec.of("buy_bid", "book.bid >= 1 or book.ask > 50", when="book.side == 'buy'"),
    RuleSpec.of("sided", "not (book.ask == 0) and book.side in ['buy', 'sell']", "flag"),
]
FLAT_RULES = [
    RuleSpec.of("crossed", "book_bid <= book_ask"),
    RuleSpec.of("wide", "book_ask - book_bid <= 10", "flag"),
    RuleSpec.of("buy_bid", "book_bid >= 1 or book_ask > 50", when="book_side == 'buy'"),
    RuleSpec.of("sided", "not (book_ask == 0) and book_side in ['buy', 'sell']", "flag"),
]


# Flattened names are longer: a size limit both sides of a pair pass alike.
BIG = 100_000


def nested_pairs(
    forbid: bool,
) -> tuple[DataSchemaContractVerifier, DataSchemaContractVerifier, DataSchemaContractVerifier]:
    nested = SchemaContract(
        "n",
        NESTED_FIELDS,
        rules=NESTED_RULES,
        forbid_unknown_fields=forbid,
        max_allowed_null_pct=30.0,
    )
    flat = SchemaContract(
        "n", FLAT_FIELDS, rules=FLAT_RULES, forbid_unknown_fields=forbid, max_allowed_null_pct=30.0
    )
    fast = DataSchemaContractVerifier(nested, max_payload_bytes=BIG)
    assert fast._native is None  # nested: the reference rules decide every record
    native = DataSchemaContractVerifier(flat, max_payload_bytes=BIG)
    assert native._native is not None
    return fast, DataSchemaContractVerifier(nested, max_payload_bytes=BIG, fast_path=False), native


NESTED_PAIRS = [nested_pairs(False), nested_pairs(True)]


def leaf_value(rng: random.Random, name: str) -> object:
    """A leaf's value (None: left out): mostly right, sometimes anything."""
    if rng.random() < 0.2:
        return None if rng.random() < 0.3 else ("raw", value(rng))
    good = {
        "bid": lambda: rng.choice([None, rng.uniform(-1, 50)]),
        "ask": lambda: rng.uniform(0, 60),
        "live": lambda: rng.choice([None, True, False]),
        "at": lambda: rng.choice([None, "2026-01-01T00:00:00Z", "2026-01-01T00:00:00"]),
        "side": lambda: rng.choice(["buy", "sell", "hold"]),
        "px": lambda: rng.uniform(-1, 10),
        "sz": lambda: rng.choice([None, rng.randint(-3, 3)]),
    }
    return ("json", good[name]())


def nested_record(rng: random.Random) -> tuple[bytes, bytes]:
    """The same record nested and flattened, as payloads."""

    def obj(names: list[str], prefix: str) -> tuple[list[str], list[str]]:
        nested, flat = [], []
        for name in names:
            got = leaf_value(rng, name)
            if got is None:
                continue
            kind, raw = got
            text = raw if kind == "raw" else json.dumps(raw)
            nested.append(f'"{name}":{text}')
            flat.append(f'"{prefix}{name}":{text}')
        if rng.random() < 0.15:
            nested.append('"extra":1')
            flat.append(f'"{prefix}extra":1')
        return nested, flat

    sym = json.dumps(rng.choice(["A", "B"]))
    book_n, book_f = obj([s.name for s in LEAVES], "book_")
    levels_n, flat = [], [f'"sym":{sym}', *book_f]
    for i in range(2):
        level_n, level_f = obj([s.name for s in LEVEL_LEAVES], f"levels_{i}_")
        levels_n.append("{" + ",".join(level_n) + "}")
        flat += level_f
    nested = f'{{"sym":{sym},"book":{{{",".join(book_n)}}},"levels":[{",".join(levels_n)}]}}'
    return nested.encode(), ("{" + ",".join(flat) + "}").encode()


def flat_name(path: str | None) -> str | None:
    if path is None:
        return None
    return re.sub(r"\[(\d+)\]", r"_\1", path).replace(".", "_")


def verdicts(report: object, rename: Callable[[str | None], str | None]) -> dict[str, object]:
    return {
        "valid": report.valid_indices,  # type: ignore[attr-defined]
        "quarantined": [
            (q.index, sorted((str(rename(v.field)), str(v.kind)) for v in q.violations))
            for q in report.quarantined_records  # type: ignore[attr-defined]
        ],
        # Per record, not per item: the flattened items' rates are not comparable.
        "null_rates": {
            rename(k): r
            for k, r in report.null_rates.items()  # type: ignore[attr-defined]
            if not k.startswith("levels")
        },
        "flagged": report.flagged_counts,  # type: ignore[attr-defined]
    }


@settings(max_examples=max(EXAMPLES // 10, 50), deadline=None)
@given(st.integers(0, 2**64), st.sampled_from(NESTED_PAIRS))
def test_nested_contracts_agree_with_the_fast_path_on_flattened_records(
    seed: int, verifiers: tuple[object, object, object]
) -> None:
    """A nested contract's verdicts equal the native fast path's on the flattened records,
    and its report is the same with the fast path on and off."""
    rng = random.Random(seed)
    fast, full, native = verifiers
    pairs = [nested_record(rng) for _ in range(rng.randint(1, 12))]
    nested = [n for n, _ in pairs]
    report = full.validate_payloads(nested)  # type: ignore[attr-defined]
    assert summary(fast.validate_payloads(nested)) == summary(report)  # type: ignore[attr-defined]
    flat = native.validate_payloads([f for _, f in pairs])  # type: ignore[attr-defined]
    assert verdicts(report, flat_name) == verdicts(flat, lambda name: name)


HUGE = [
    b'{"sym":"A","book":{},"levels":[' + b",".join([b'{"px":-1.0,"sz":1}'] * 30_000) + b"]}",
    b'{"sym":"A","book":{},"levels":[' + b",".join([b"[[[[[[[[[[1]]]]]]]]]]"] * 1000) + b"]}",
    b'{"sym":"A","book":' + b'{"x":' * 500 + b"1" + b"}" * 500 + b',"levels":[]}',
    b'{"sym":"A","book":{"bid":1.0,"ask":2.0,"live":null,"at":null,"side":"buy"},'
    b'"levels":[{"px":1.0,"sz":null},{"px":2.0,"sz":3}]}',
]


@pytest.mark.parametrize("forbid", [False, True])
def test_huge_and_deep_nested_payloads_agree(forbid: bool) -> None:
    """Huge arrays and deep nesting: the same report with the fast path on and off, the
    valid record passes, and violations stay capped per field."""
    contract = SchemaContract("n", NESTED_FIELDS, rules=NESTED_RULES, forbid_unknown_fields=forbid)
    fast = DataSchemaContractVerifier(contract, max_payload_bytes=10_000_000)
    full = DataSchemaContractVerifier(contract, max_payload_bytes=10_000_000, fast_path=False)
    report = full.validate_payloads(HUGE)
    assert summary(fast.validate_payloads(HUGE)) == summary(report)
    assert report.valid_indices == [3]
    assert all(
        len(q.violations) <= 3 * (MAX_NAMED_VIOLATIONS + 1) for q in report.quarantined_records
    )
