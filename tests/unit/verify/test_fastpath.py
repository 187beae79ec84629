"""The compiled clean-record check is never looser than the full rules."""

from __future__ import annotations

import math
from datetime import date, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from stream_validator import FieldSpec, SchemaContract
from stream_validator.verify.fastpath import FAIL, compile_fast_check
from stream_validator.verify.rules import RecordInspector

CONTRACT = SchemaContract(
    "fast",
    [
        FieldSpec("f", float, min_value=-1.5, max_value=2.0),
        FieldSpec("fn", float, is_nullable=True, allow_non_finite=True, max_value=0),
        FieldSpec("i", int, min_value=0, max_value=10**20),
        FieldSpec("s", str, is_nullable=True),
        FieldSpec("b", bool),
        FieldSpec("t", datetime),
        FieldSpec("weird name'\"\n", float, is_nullable=True),
    ],
)
FAST = compile_fast_check(CONTRACT)
SLOW = RecordInspector(CONTRACT)
FORBIDDING = RecordInspector(SchemaContract("forbid", CONTRACT.fields, forbid_unknown_fields=True))

values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-3, 3),
    st.floats(),
    st.sampled_from([math.nan, math.inf, -math.inf, -0.0, -1.5, 2.0, 2.0000001, 10**20, 10**21]),
    st.text(max_size=5),
    st.sampled_from(["2026-01-01T00:00:00Z", "2026-02-30", "x"]),
    st.datetimes(),
    st.dates(),
    st.lists(st.integers(), max_size=2),
)
records = st.dictionaries(
    st.sampled_from(["f", "fn", "i", "s", "b", "t", "weird name'\"\n", "extra"]),
    values,
    max_size=8,
)


@settings(max_examples=1000, deadline=None)
@given(records)
def test_fast_accepts_only_what_the_rules_accept(record: dict[str, object]) -> None:
    """Whenever the fast check passes a record, the full rules find nothing and agree on nulls."""
    fast = FAST(record)
    if fast is FAIL:
        return
    violations, nulls, unknown = SLOW.inspect(record)
    assert violations is None and not unknown
    assert tuple(nulls or ()) == fast


@settings(max_examples=2000, deadline=None)
@given(records, st.booleans())
def test_compiled_inspect_is_the_rules(record: dict[str, object], forbid: bool) -> None:
    """The compiled inspect gives exactly what the rules give field by field."""
    inspector = FORBIDDING if forbid else SLOW
    assert inspector.inspect(record) == inspector.inspect_each_field(record)


def test_compiled_inspect_takes_names_as_data() -> None:
    """A field name that looks like code is a constant in the compiled function, not code."""
    name = "x'), print('injected'), ('"
    inspector = RecordInspector(SchemaContract("inj", [FieldSpec(name, int)]))
    assert inspector.inspect({name: 1}) == (None, None, None)
    (violation,) = inspector.inspect({name: "1"})[0] or []
    assert violation.field == name


def test_fast_passes_a_clean_record() -> None:
    """A clean record takes the fast path (it would be pointless otherwise)."""
    record = {
        "f": 1,
        "fn": None,
        "i": 3,
        "s": "x",
        "b": False,
        "t": "2026-01-01T00:00:00+00:00",
        "weird name'\"\n": 0.5,
    }
    assert FAST(record) == (0,)


def test_fast_declines_subclasses_and_dates() -> None:
    """Subclassed types and plain dates go to the full rules."""

    class MyStr(str):
        pass

    base = {
        "f": 1.0,
        "fn": 0.0,
        "i": 1,
        "s": MyStr("x"),
        "b": True,
        "t": datetime(2026, 1, 1),
        "weird name'\"\n": None,
    }
    assert FAST(base) is FAIL
    assert FAST({**base, "s": "x", "t": date(2026, 1, 1)}) is FAIL
    assert FAST({**base, "s": "x"}) == (2,)
