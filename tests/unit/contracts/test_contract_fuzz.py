"""Any contract document (hypothesis): a contract the verifier can run, or ContractFileError.

Contract files are written by hand and edited under pressure during a vendor incident. A
document of any shape (known keys with values of any type, rules with any expression text,
any ``state`` section) must give either a contract or a ``ContractFileError`` naming the
problems, never another exception; and a contract the loader accepts must build a verifier
that validates payloads without raising. SV_FUZZ_EXAMPLES sets the examples (1,000 by
default; more by hand).
"""

from __future__ import annotations

from datetime import UTC, datetime
from functools import partial
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from stream_validator import DataSchemaContractVerifier
from stream_validator.contracts.loader import contract_from_mapping
from stream_validator.errors import ContractFileError
from tests.support.fuzz import corrupt, fuzz_settings, junk

SETTINGS = fuzz_settings(1000)

NAMES = ["price", "bid", "ask", "seq", "symbol", "ts", "size"]
TYPES = ["float", "int", "str", "bool", "datetime"]

anything = junk()
numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(),
    st.sampled_from([0, 1, -1, 1e-9, 1e308, 2**63, -(2**63) - 1]),
)


bounds = st.tuples(numbers, numbers).map(sorted)  # mostly in order (NaN aside)
seconds = st.integers(min_value=0, max_value=10**6) | st.floats(min_value=0, max_value=1e9)
# The options each type takes: a clean document loads more often than not.
OPTIONS: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "float": {"allow_non_finite": st.booleans(), "bounds": bounds},
    "int": {"bounds": bounds},
    "str": {},
    "bool": {},
    "datetime": {
        "require_timezone": st.booleans(),
        "max_future_s": seconds,
        "max_age_s": seconds,
    },
}


def _field(label: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"type": st.just(label)}, optional={"nullable": st.booleans(), **OPTIONS[label]}
    ).map(_spread_bounds)


def _spread_bounds(spec: dict[str, Any]) -> dict[str, Any]:
    low_high = spec.pop("bounds", None)
    if low_high is not None:
        spec["min_value"], spec["max_value"] = low_high
    return spec


# Fields named after NAMES in order (unique names).
field_lists = st.lists(st.sampled_from(TYPES).flatmap(_field), min_size=1, max_size=len(NAMES)).map(
    lambda specs: [{"name": n, **spec} for n, spec in zip(NAMES, specs, strict=False)]
)
operand = st.sampled_from(NAMES) | st.sampled_from(
    ["0", "1.5", "-2", "1e400", "true", "null", "'x'", '"A"', "'it\\'s'", "''", "'\\q'"]
)
literal_lists = st.lists(
    st.sampled_from(["1", "-2.5", "'buy'", '"sell"', "''", "1e400", "x"]), max_size=4
).map(lambda items: "[" + ", ".join(items) + "]")
comparisons = st.builds(
    lambda a, op, b: f"{a} {op} {b}",
    operand,
    st.sampled_from(["<", "==", "!=", ">="]),
    operand,
) | st.builds(
    lambda a, word, items: f"{a} {word} {items}",
    operand,
    st.sampled_from(["in", "not in"]),
    literal_lists,
)
# or / and / not over comparisons and 'in' tests, parenthesised or not.
logic = st.recursive(
    comparisons,
    lambda inner: st.builds(
        lambda a, word, b, wrap: f"not ({a} {word} {b})" if wrap else f"{a} {word} not {b}",
        inner,
        st.sampled_from(["and", "or"]),
        inner,
        st.booleans(),
    ),
    max_leaves=4,
)
expressions = st.one_of(
    logic,
    st.builds(
        lambda a, op, b: f"{a} {op} {b}",
        operand,
        st.sampled_from(["<", "<=", "==", "!=", ">", ">=", "+", "-", "*", "/", "and", "or"]),
        operand,
    ),
    st.builds(lambda a, b, c: f"({a} - {b}) / {c} <= 0.05 and {a} > 0", operand, operand, operand),
    # Chains of one operator about as long as a rule may be (1,000 characters), past it
    # too: the code generated from them nests deeply.
    st.builds(
        lambda a, width, op, b: op.join([a] * (width // (len(a) + len(op)))) + f" <= {b}",
        operand,
        st.integers(min_value=600, max_value=1010),
        st.sampled_from(["+", " - ", "*", "/"]),
        operand,
    ),
    st.text(max_size=30),
)
rules = st.fixed_dictionaries(
    {"name": st.from_regex(r"[a-z][a-z0-9_]{0,9}", fullmatch=True), "check": expressions},
    optional={
        "when": expressions | st.sampled_from(["", 5, None]),
        "action": st.sampled_from(["quarantine", "flag"]),
        "description": st.text(max_size=10),
    },
)
actions = st.sampled_from(["flag", "quarantine"])
state = st.fixed_dictionaries(
    {"key": st.sampled_from(NAMES)},
    optional={
        "max_symbols": st.integers(min_value=1, max_value=10**6),
        "sequence": st.fixed_dictionaries(
            {"field": st.sampled_from(NAMES)},
            optional={
                "window": st.integers(min_value=0, max_value=100),
                "resync_after": st.none() | st.integers(min_value=1, max_value=10),
                "action": actions,
            },
        ),
        "event_time": st.fixed_dictionaries(
            {"field": st.sampled_from(NAMES)},
            optional={"max_regression_s": seconds, "action": actions},
        ),
        "frozen_quote": st.fixed_dictionaries(
            {"fields": st.lists(st.sampled_from(NAMES), min_size=1, max_size=3, unique=True)},
            optional={
                "max_updates": st.integers(min_value=1, max_value=100),
                "max_seconds": seconds,
            },
        ),
    },
)
clean = st.fixed_dictionaries(
    {"name": st.text(min_size=1, max_size=8), "fields": field_lists},
    optional={
        "version": st.sampled_from(["1", 2, 2.5]),
        "max_allowed_null_pct": st.floats(min_value=0, max_value=100) | numbers,
        "forbid_unknown_fields": st.booleans(),
        "rules": st.lists(rules, max_size=3),
        "state": state,
    },
)


documents = st.one_of(
    clean,
    st.builds(
        partial(corrupt, new_key_every=7),
        clean,
        st.lists(st.tuples(st.integers(0, 10**6), anything), max_size=2),
    ),
    anything,
)

PAYLOADS = [
    b'{"price":1.5,"bid":1.0,"ask":2.0,"seq":1,"symbol":"A","ts":"2026-12-02T00:00:00Z","size":3}',
    b'{"price":null,"bid":"x","seq":2,"symbol":"A","extra":1}',
    b"[]",
    b"garbage",
    b'{"price":1,"price":2}',
]


@SETTINGS
@given(document=documents)
def test_a_contract_document_loads_or_names_its_problems(document: Any) -> None:
    try:
        contract = contract_from_mapping(document, source="fuzz.yaml")
    except ContractFileError as exc:
        assert "fuzz.yaml" in str(exc)
        event("refused")
        return
    event("loaded")
    verifier = DataSchemaContractVerifier(contract)
    report = verifier.validate_payloads(PAYLOADS, now=datetime(2026, 12, 2, tzinfo=UTC))
    assert report.valid_count + report.quarantined_count == len(PAYLOADS)
