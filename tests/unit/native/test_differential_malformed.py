"""The Rust core judges payloads that are not one JSON object exactly as the Python rules.

Undecodable bytes (invalid UTF-8, lone surrogates, nesting past orjson's limit, trailing
garbage, truncation, broken numbers, literals and escapes) carry orjson's own error text and
position; arrays and scalars at the top level are ``not_a_mapping``. The reference is the
verifier with ``fast_path=False`` (the Python rules alone, orjson as the decoder).
SV_DIFF_EXAMPLES sets the hypothesis examples per test, as in test_differential.
"""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from stream_validator.verify import batch as batch_module
from tests.unit.native.test_differential import SETTINGS, TICK_GOOD, TICK_PAIR
from tests.unit.verify.test_native_differential import summary

GOOD = ("{" + ",".join(f'"{k}":{v}' for k, v in TICK_GOOD.items()) + "}").encode()

#: Bytes and tokens that break a document in the ways orjson words differently.
BREAKERS = [
    *(bytes([b]) for b in b'[]{},:"\\ \n\t\r\x0c\x00\x01\x7f+-.0eExtfn'),
    b"\\u", b"\\ud800", b"\\udbff", b"\\udc00", b"\\ud800\\u", b"\\ud800\\udc00",
    b"\\ud800\\u0041", b"\\ud800\\n", b"\\u12", b"\\u12g4", b"\\x", b"\\n",
    b"\xed\xa0\x80", b"\xed\xb0\x80", b"\xff", b"\xfe", b"\xc3", b"\xc3\xa9", b"\xe2\x82",
    b"\xf0\x9f\x98\x80", b"\xc0\xaf", b"tru", b"true", b"nul", b"fals", b"NaN", b"Infinity",
    b"-Infinity", b"01", b"-01", b"1.", b"1e", b"1e+", b"1e999", b"-1e400", b"9" * 400,
    b"1.5.5", b"0x",
]  # fmt: skip


def json_values() -> st.SearchStrategy[object]:
    """JSON values, containers included, for the top level of a payload."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=80),
    )
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
        ),
        max_leaves=8,
    )


@st.composite
def top_level(draw: st.DrawFn) -> bytes:
    """A JSON value that is not an object, often with whitespace around it."""
    value = draw(json_values().filter(lambda v: not isinstance(v, dict)))
    if isinstance(value, float) and math.isfinite(value) and draw(st.booleans()):
        text = repr(value)  # Python's exponent form (1e+16)
    else:
        text = json.dumps(value, ensure_ascii=draw(st.booleans()))
    pad = draw(st.sampled_from(["", " ", "\n", " \t\r\n"]))
    return (pad + text + draw(st.sampled_from(["", " ", "\n"]))).encode()


@st.composite
def deep(draw: st.DrawFn) -> bytes:
    """Nesting around orjson's depth limit (1,024), closed, unclosed or broken inside."""
    depth = draw(st.sampled_from([1, 2, 500, 998, 1000, 1001, 1023, 1024, 1025, 1026, 1100, 2000]))
    opener, closer = draw(
        st.sampled_from([(b"[", b"]"), (b'{"a":', b"}"), (b'[{"a":', b"}]"), (b"[ ", b" ]")])
    )
    inner = draw(st.sampled_from([b"1", b"", b"x", b"[]", GOOD]))
    closed = draw(st.sampled_from([depth, depth - 1, 0]))
    return opener * depth + inner + closer * closed


@st.composite
def broken(draw: st.DrawFn) -> bytes:
    """A tick with bytes inserted, cut short, or garbage after it."""
    raw = GOOD
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(raw)))
        how = draw(st.sampled_from(["insert", "cut", "drop", "append"]))
        if how == "insert":
            raw = raw[:at] + draw(st.sampled_from(BREAKERS)) + raw[at:]
        elif how == "cut":
            raw = raw[:at]
        elif how == "drop":
            raw = raw[:at] + raw[at + draw(st.integers(1, 3)) :]
        else:
            raw += draw(st.sampled_from([*BREAKERS, b" x", b"\n\n  x", b"{}", b"  "]))
    return raw


MALFORMED = st.one_of(
    broken(),
    top_level(),
    deep(),
    st.binary(max_size=12),
    st.text(max_size=12).map(lambda t: t.encode("utf-8", "surrogatepass")),
)


@SETTINGS
@given(st.lists(st.one_of(MALFORMED, st.just(GOOD), st.none()), min_size=1, max_size=8))
# Found by this test: a lone low surrogate escape at the very end (orjson: end of data).
@example([b'{"symbol":"AAPL\\udc00'])
@example([b'["\\udc00\\udc0', b'["\\udc00\\u12', b'["\\udc00\\udc00"]'])
def test_core_and_python_rules_agree_on_malformed_payloads(batch: list[bytes | None]) -> None:
    """Invalid UTF-8, lone surrogates, deep nesting, trailing garbage, truncation, arrays and
    scalars at the top level: the core's report is the reference's, texts and order included."""
    native, reference = TICK_PAIR
    expected = summary(reference.validate_payloads(batch))  # type: ignore[attr-defined]
    assert summary(native.validate_payloads(batch)) == expected  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "payload",
    [
        GOOD.replace(b'"price":', b'"price":NaN,"x":', 1),  # the bench's corruptions
        b"\xff\xfe" + GOOD[:10],
        GOOD[: len(GOOD) // 2],
        b'["AAPL",101.25]',
        GOOD + b"x",
        GOOD.replace(b'"AAPL"', b'"\\ud800"'),
        GOOD.replace(b"AAPL", b"AA\xed\xa0\x80PL"),
        b"",
        b" \n",
        b'"AAPL"',
        b"101.25",
        b"null",
        None,
        GOOD + b" " * 600,
    ],
)
def test_core_settles_malformed_payloads_itself(
    monkeypatch: pytest.MonkeyPatch, payload: bytes | None
) -> None:
    """Undecodable, non-object, tombstone and oversized payloads never reach the Python
    rules: the core words their violation."""
    calls: list[int] = []
    full = batch_module.BatchAccumulator._full_payload

    def counted(self: batch_module.BatchAccumulator, index: int, raw: object) -> object:
        calls.append(index)
        return full(self, index, raw)  # type: ignore[arg-type]

    native, reference = TICK_PAIR
    # The pattern values of GOOD learnt first (until then the core leaves a record holding
    # a value it has not met to the Python rules), whichever test ran before this one.
    native.validate_payloads([GOOD])  # type: ignore[attr-defined]
    monkeypatch.setattr(batch_module.BatchAccumulator, "_full_payload", counted)
    batch = [GOOD, payload, GOOD]
    report = native.validate_payloads(batch)  # type: ignore[attr-defined]
    assert calls == []
    assert report.quarantined_count == 1
    assert summary(report) == summary(reference.validate_payloads(batch))  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "payload",
    [
        GOOD.replace(b'{"symbol"', b'{{symbol"', 1),
        GOOD.replace(b'{"symbol"', b'{[symbol"', 1),
        GOOD.replace(b',"seq"', b',xseq"', 1),
    ],
)
def test_a_key_without_its_opening_quote_is_undecodable(payload: bytes) -> None:
    """A key missing its opening quote is not JSON, even where the core expected that key
    next (its patterns already learnt): quarantined as undecodable, as by the reference."""
    native, reference = TICK_PAIR
    native.validate_payloads([GOOD])  # type: ignore[attr-defined]  # learns the patterns
    report = native.validate_payloads([payload])  # type: ignore[attr-defined]
    assert report.valid_indices == []
    assert [str(v.kind) for v in report.quarantined_records[0].violations] == ["undecodable"]
    expected = summary(reference.validate_payloads([payload]))  # type: ignore[attr-defined]
    assert summary(report) == expected
