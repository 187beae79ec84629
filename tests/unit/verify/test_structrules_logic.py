"""The fast path's generated rule check with or, not, in and strings: never looser than
compile_rule, and no contract text in the generated source."""

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
    rule_source,
)
from tests.unit.verify.test_structrules import MAPPING_VALUES, VALUES

FIELDS = [
    FieldSpec("a", float, is_nullable=True),
    FieldSpec("b", float, is_nullable=True),
    FieldSpec("s", str, is_nullable=True),
    FieldSpec("t", str, is_nullable=True),
]
TYPES = {spec.name: spec.expected_type for spec in FIELDS}
CHECKS = [
    "a <= b or a == 0",
    "not (a > b)",
    "not (a > 0 and b > 0) or a != b",
    "a in [0, 1, -2.5]",
    "a - b not in [0, 1]",
    "a / b not in [2]",
    "s == 'buy' or s != t",
    "not s in ['x', 'y'] and (t == s or a < b)",
    "s not in ['x', ''] or not (a * 1e300 - b * 1e300 != 0)",
]
TEXTS = st.one_of(st.none(), st.sampled_from(["", "x", "y", "buy", "b\u00e9"]))


def struct_of(a: object, b: object, s: object, t: object) -> SimpleNamespace:
    return SimpleNamespace(f0=a, f1=b, f2=s, f3=t)


def contract_of(check: str, when: str = "") -> SchemaContract:
    rule = RuleSpec.of("r", check, field_types=TYPES, when=when)
    return SchemaContract("c", FIELDS, rules=[rule])


def holds(contract: SchemaContract, record: dict[str, object]) -> bool:
    rule = contract.rules[0]
    return compile_rule(rule.expr, rule.text_fields)(record)


@pytest.mark.parametrize("check", CHECKS)
@settings(max_examples=300, deadline=None)
@given(a=VALUES, b=VALUES, s=TEXTS, t=TEXTS)
def test_post_init_passes_only_what_the_rule_passes(
    check: str, a: object, b: object, s: object, t: object
) -> None:
    """A record __post_init__ lets through is one compile_rule says holds."""
    contract = contract_of(check)
    post_init = compile_post_init(contract)
    assert post_init is not None
    try:
        post_init(struct_of(a, b, s, t))
    except RuleDeclined:
        return
    assert holds(contract, {"a": a, "b": b, "s": s, "t": t})


@pytest.mark.parametrize("check", CHECKS)
@settings(max_examples=300, deadline=None)
@given(values=st.dictionaries(st.sampled_from("abst"), st.one_of(MAPPING_VALUES, TEXTS)))
def test_mapping_shortcut_passes_only_what_the_rule_passes(
    check: str, values: dict[str, object]
) -> None:
    """On a mapping with values of any type the shortcut lets through only what holds."""
    contract = contract_of(check)
    sure = compile_sure_holds(contract)
    assert sure is not None
    try:
        sure(values)
    except RuleDeclined:
        return
    assert holds(contract, values)


def test_post_init_decides_when_rules() -> None:
    """``when`` / ``check``: a limit order with a price passes, one without is declined, and
    a market order (or a null order type) passes whatever its price."""
    post_init = compile_post_init(contract_of("a > 0", when="s == 'limit'"))
    assert post_init is not None
    post_init(struct_of(1.0, None, "limit", None))
    post_init(struct_of(-1.0, None, "market", None))
    post_init(struct_of(-1.0, None, None, None))
    with pytest.raises(RuleDeclined):
        post_init(struct_of(-1.0, None, "limit", None))


HOSTILE = "'); import os; os.system('true'); ('"


def test_hostile_string_constant_is_data_not_code() -> None:
    """A string constant written to break out of generated code is only ever a value: it
    is not in the generated source, and the check compares records against it."""
    check = "s == " + "'" + HOSTILE.replace("'", "\\'") + "'"
    contract = contract_of(check)
    lines, ns = rule_source(contract, {spec.name: f"s.f{i}" for i, spec in enumerate(FIELDS)}, True)
    source = "\n".join(lines)
    assert "import" not in source
    assert "os" not in source.replace("pos", "")
    assert HOSTILE in ns.values()
    post_init = compile_post_init(contract)
    assert post_init is not None
    post_init(struct_of(None, None, HOSTILE, None))
    with pytest.raises(RuleDeclined):
        post_init(struct_of(None, None, "x", None))
