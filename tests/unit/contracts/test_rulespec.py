"""The ``rules`` list of a contract file: RuleSpecs, their actions and the load errors."""

from __future__ import annotations

import pytest

from stream_validator.contracts.expr import RuleError, compile_rule
from stream_validator.contracts.rulespec import RuleAction, RuleSpec, parse_rules
from stream_validator.errors import RuleListError
from stream_validator.yamlfile import parse_yaml

TYPES: dict[str, type] = {"bid": float, "ask": float, "bid_sz": int, "symbol": str}


def problems_of(raw: object) -> list[str]:
    """The problems parse_rules reports for ``raw``."""
    with pytest.raises(RuleListError) as info:
        parse_rules(raw, TYPES)
    return info.value.problems


def test_yaml_rules_become_rule_specs() -> None:
    """The proposed YAML form gives one RuleSpec per entry, in order."""
    document = parse_yaml(
        """
rules:
  - name: crossed_book
    check: "bid <= ask"
  - name: spread_band
    check: "ask - bid <= 0.05 * ask"
    action: flag
    description: spread above 5 % of the ask
"""
    )
    assert isinstance(document, dict)
    crossed, band = parse_rules(document["rules"], TYPES)
    assert (crossed.name, crossed.action, crossed.fields) == (
        "crossed_book",
        RuleAction.QUARANTINE,
        frozenset({"bid", "ask"}),
    )
    assert (band.action, band.description) == (RuleAction.FLAG, "spread above 5 % of the ask")


def test_no_rules_key_gives_no_rules() -> None:
    """A contract without 'rules' has none."""
    assert parse_rules(None, TYPES) == ()


def test_rules_must_be_a_list() -> None:
    """A mapping in place of the list is one clear problem."""
    assert problems_of({"name": "x"}) == [
        "'rules' must be a list of mappings with 'name' and 'check'"
    ]


def test_bad_check_is_named_by_index_and_rule() -> None:
    """A check error names rules[i] (name).check and keeps the column."""
    (problem,) = problems_of([{"name": "crossed_book", "check": "bidd <= ask"}])
    assert problem == "rules[0] (crossed_book).check: unknown field 'bidd' at column 1"


def test_syntax_error_in_check_is_named_too() -> None:
    """A parse error is reported under the same rules[i].check name."""
    (problem,) = problems_of([{"name": "x", "check": "bid =< ask"}])
    assert problem.startswith("rules[0] (x).check: unexpected character '=' (use '==')")


def test_every_problem_of_every_rule_is_listed() -> None:
    """Problems in two rules are reported together, not first-only."""
    problems = problems_of(
        [{"name": "a", "check": "symbol > 0"}, {"name": "b", "check": "bid < ask", "actoin": "x"}]
    )
    assert [p.split(":")[0] for p in problems] == ["rules[0] (a).check", "rules[1] (b)"]


def test_unknown_key_is_rejected() -> None:
    """A typo such as 'actoin' cannot silently fall back to the default action."""
    (problem,) = problems_of([{"name": "a", "check": "bid < ask", "actoin": "flag"}])
    assert "unknown key(s) actoin" in problem


def test_unknown_action_is_rejected() -> None:
    """Only quarantine and flag are actions."""
    (problem,) = problems_of([{"name": "a", "check": "bid < ask", "action": "drop"}])
    assert "'action' must be quarantine or flag, got 'drop'" in problem


@pytest.mark.parametrize("action", [["flag"], {"flag": True}, 1, None])
def test_an_action_that_is_not_a_string_is_named(action: object) -> None:
    """``action: [flag]`` (a YAML list) is a load error naming it, not a TypeError."""
    (problem,) = problems_of([{"name": "a", "check": "bid < ask", "action": action}])
    assert f"'action' must be quarantine or flag, got {action!r}" in problem


def test_duplicate_rule_name_is_rejected() -> None:
    """Two rules cannot share a name: the name is the rule's label on violations."""
    (problem,) = problems_of(
        [{"name": "a", "check": "bid < ask"}, {"name": "a", "check": "bid_sz >= 0"}]
    )
    assert problem == "rules[1]: name 'a' is already used by rules[0]"


@pytest.mark.parametrize("name", [None, "", "Crossed", "1st", "has space", "x" * 65])
def test_rule_name_must_be_a_short_identifier(name: object) -> None:
    """Names are lower-case identifiers up to 64 characters."""
    (problem,) = problems_of([{"name": name, "check": "bid < ask"}])
    assert "'name' is required" in problem


def test_missing_check_is_rejected() -> None:
    """A rule without a check is an error, not an always-true rule."""
    (problem,) = problems_of([{"name": "a"}])
    assert problem == "rules[0] (a): 'check' is required and must be a non-empty string"


def test_rule_entry_must_be_a_mapping() -> None:
    """A bare string in the list is rejected with its index."""
    assert problems_of(["bid <= ask"]) == [
        "rules[0]: each rule must be a mapping with 'name' and 'check'"
    ]


def test_rule_spec_of_parses_and_renders_canonically() -> None:
    """RuleSpec.of parses the check; canonical normalises spacing."""
    spec = RuleSpec.of("band", "ask-bid<=0.05*ask", "flag")
    assert (spec.canonical, spec.action, spec.fields) == (
        "ask - bid <= 0.05 * ask",
        RuleAction.FLAG,
        frozenset({"ask", "bid"}),
    )


def test_rule_spec_of_checks_fields_when_given_types() -> None:
    """RuleSpec.of with field types refuses a str field compared with a number."""
    with pytest.raises(RuleError, match="str field 'symbol' at column 1 is compared with a number"):
        RuleSpec.of("x", "symbol > 0", field_types=TYPES)


ORDER_TYPES: dict[str, type] = {"order_type": str, "price": float, "qty": int}


def test_when_rule_is_not_condition_or_check() -> None:
    """``when`` / ``check`` becomes one rule over the fields of both; canonical is the check."""
    (spec,) = parse_rules(
        [{"name": "limit_price", "when": "order_type == 'limit'", "check": "price > 0"}],
        ORDER_TYPES,
    )
    assert spec.fields == {"order_type", "price"}
    assert spec.text_fields == {"order_type"}
    assert (spec.when, spec.canonical) == ("order_type == 'limit'", "price > 0")


@pytest.mark.parametrize(
    ("record", "holds"),
    [
        ({"order_type": "limit", "price": 1.0}, True),
        ({"order_type": "limit", "price": 0.0}, False),
        ({"order_type": "market", "price": 0.0}, True),
        ({"order_type": None, "price": 0.0}, True),
        ({"price": 0.0}, True),
        ({"order_type": 7, "price": 0.0}, True),
    ],
)
def test_when_rule_applies_only_where_the_condition_surely_holds(
    record: dict[str, object], holds: bool
) -> None:
    """A null, missing or mistyped field in ``when`` makes the condition false: no check."""
    spec = RuleSpec.of("r", "price > 0", field_types=ORDER_TYPES, when="order_type == 'limit'")
    assert compile_rule(spec.expr, spec.text_fields)(record) is holds


def test_when_problems_name_the_rule_and_the_column() -> None:
    """A bad ``when`` is reported as rules[i] (name).when with its column, beside the check's."""
    assert problems_of([{"name": "r", "when": "symbol == 1", "check": "bid == 'x'"}]) == [
        "rules[0] (r).when: str field 'symbol' at column 1 is compared with a number at column"
        " 11; compare a str field with a string ('limit') and a number field with a number",
        "rules[0] (r).check: numeric field 'bid' at column 1 is compared with a string at"
        " column 8; compare a str field with a string ('limit') and a number field with a number",
    ]


@pytest.mark.parametrize("when", ["", 5, "  "])
def test_when_must_be_a_condition_text(when: object) -> None:
    """An empty or non-string ``when`` is refused, not read as 'always'."""
    assert problems_of([{"name": "r", "when": when, "check": "bid > 0"}]) == [
        "rules[0] (r): 'when' must be a non-empty string (a condition)"
    ]
