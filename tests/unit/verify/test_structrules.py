"""The fast path's rule check in the Struct's __post_init__: never looser than compile_rule."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_validator import FieldSpec, RuleSpec, SchemaContract
from stream_validator.contracts.expr import compile_rule
from stream_validator.verify.structrules import (
    RuleDeclined,
    compile_post_init,
    compile_sure_holds,
)

FIELDS = [FieldSpec(name, float, is_nullable=True) for name in ("a", "b", "c")]
CHECKS = [
    "a <= b",
    "a != b",
    "b - a <= 0.05 * b",
    "a / b < c",
    "a <= b <= c",
    "-a * 1e300 - b * 1e300 != c and a >= 0",
    "(a + b) / (c - a) == 2",
]
VALUES = st.one_of(
    st.none(),
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, 0.0, -0.0, 1, 2, 1e308, -1e308, 5e-324]),
    st.floats(allow_nan=False, allow_infinity=False),
)


def struct_of(a: object, b: object, c: object) -> SimpleNamespace:
    return SimpleNamespace(f0=a, f1=b, f2=c)


@pytest.mark.parametrize("check", CHECKS)
@settings(max_examples=300, deadline=None)
@given(a=VALUES, b=VALUES, c=VALUES)
def test_post_init_passes_only_what_the_rule_passes(
    check: str, a: object, b: object, c: object
) -> None:
    """A record __post_init__ lets through is one compile_rule says holds."""
    contract = SchemaContract("c", FIELDS, rules=[RuleSpec.of("r", check)])
    post_init = compile_post_init(contract)
    assert post_init is not None
    try:
        post_init(struct_of(a, b, c))
    except RuleDeclined:
        return
    assert compile_rule(contract.rules[0].expr)({"a": a, "b": b, "c": c})


def test_post_init_declines_a_broken_rule_and_passes_a_kept_one() -> None:
    """A crossed book is declined, a normal one passes (the check does decide)."""
    contract = SchemaContract("c", FIELDS, rules=[RuleSpec.of("r", "a <= b")])
    post_init = compile_post_init(contract)
    assert post_init is not None
    post_init(struct_of(1.0, 2.0, None))
    with pytest.raises(RuleDeclined):
        post_init(struct_of(3.0, 2.0, None))


def test_post_init_lets_a_null_make_its_links_hold() -> None:
    """A null makes the links reading it hold, as under compile_rule (an empty side of the
    book stays on the fast path); the links without a null still decide."""
    rules = [RuleSpec.of("r", "a <= b"), RuleSpec.of("s", "c > 0"), RuleSpec.of("t", "a != c")]
    post_init = compile_post_init(SchemaContract("c", FIELDS, rules=rules))
    assert post_init is not None
    post_init(struct_of(None, 2.0, 1.0))
    post_init(struct_of(3.0, None, 1.0))
    post_init(struct_of(None, None, None))
    with pytest.raises(RuleDeclined):
        post_init(struct_of(None, 2.0, -1.0))
    with pytest.raises(RuleDeclined):
        post_init(struct_of(1.0, None, 1.0))


def test_no_rules_no_post_init() -> None:
    """A contract without rules keeps the plain Struct."""
    assert compile_post_init(SchemaContract("c", FIELDS)) is None


MAPPING_VALUES = st.one_of(
    VALUES,
    st.sampled_from([True, False, "1", "a", float("nan"), float("inf"), -float("inf")]),
)


@pytest.mark.parametrize("check", CHECKS)
@settings(max_examples=300, deadline=None)
@given(values=st.dictionaries(st.sampled_from("abc"), MAPPING_VALUES))
def test_mapping_shortcut_passes_only_what_the_rule_passes(
    check: str, values: dict[str, object]
) -> None:
    """On a mapping (missing keys, bools, strings, NaN, infinities too) the shortcut lets
    through only a record compile_rule says holds."""
    contract = SchemaContract("c", FIELDS, rules=[RuleSpec.of("r", check)])
    sure = compile_sure_holds(contract)
    assert sure is not None
    try:
        sure(values)
    except RuleDeclined:
        return
    assert compile_rule(contract.rules[0].expr)(values)
