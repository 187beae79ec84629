"""diff_contracts: each kind of change, classified by what it does to records that passed
the old contract."""

from __future__ import annotations

from typing import Any

import pytest

from stream_validator.contracts import contract_from_mapping
from stream_validator.lifecycle.change import Effect
from stream_validator.lifecycle.diff import diff_contracts

T, L, N = Effect.TIGHTENING, Effect.LOOSENING, Effect.NEUTRAL
BASE: dict[str, Any] = {
    "name": "tick",
    "version": "1",
    "fields": [
        {"name": "symbol", "type": "str"},
        {"name": "price", "type": "float", "min_value": 1.0, "max_value": 100.0},
        {"name": "size", "type": "int"},
        {"name": "bid", "type": "float", "nullable": True},
        {"name": "ts", "type": "datetime"},
        {"name": "side", "type": "str", "allowed": ["buy", "sell"]},
        {"name": "venue", "type": "str", "pattern": "[A-Z]{4}", "min_length": 4},
        {
            "name": "levels",
            "type": "array",
            "max_items": 10,
            "items": {"type": "object", "fields": [{"name": "px", "type": "float"}]},
        },
    ],
    "rules": [{"name": "positive", "check": "price > 0"}],
}


def _changed(edit: Any, base: dict[str, Any] | None = None) -> list[tuple[str, str, Effect]]:
    """The (subject, change, effect) of BASE -> BASE edited by ``edit(document)``."""
    old_doc = base or BASE
    new_doc: dict[str, Any] = {
        **old_doc,
        "fields": [dict(f) for f in old_doc["fields"]],
        "rules": [dict(r) for r in old_doc.get("rules", [])],
    }
    edit(new_doc)
    old, new = contract_from_mapping(old_doc), contract_from_mapping(new_doc)
    return [(c.subject, c.what, c.effect) for c in diff_contracts(old, new)]


def _field(doc: dict[str, Any], name: str) -> dict[str, Any]:
    field: dict[str, Any] = next(f for f in doc["fields"] if f["name"] == name)
    return field


def test_identical_contracts_have_no_change() -> None:
    """The same contract: nothing listed."""
    assert _changed(lambda d: None) == []


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda d: d["fields"].append({"name": "x", "type": "int"}), ("x", "field_added", T)),
        (
            lambda d: d["fields"].append({"name": "x", "type": "int", "nullable": True}),
            ("x", "field_added", T),
        ),
        (lambda d: d["fields"].pop(2), ("size", "field_removed", L)),
        (lambda d: _field(d, "price").update(type="int"), ("price", "type_changed", T)),
        (lambda d: _field(d, "size").update(type="float"), ("size", "type_widened", L)),
        (lambda d: _field(d, "ts").update(type="str"), ("ts", "type_widened", L)),
        (lambda d: _field(d, "symbol").update(type="datetime"), ("symbol", "type_changed", T)),
        (lambda d: _field(d, "bid").update(nullable=False), ("bid", "nullable_to_required", T)),
        (lambda d: _field(d, "size").update(nullable=True), ("size", "required_to_nullable", L)),
        (lambda d: _field(d, "price").update(min_value=2.0), ("price", "min_value_raised", T)),
        (lambda d: _field(d, "price").update(min_value=0.5), ("price", "min_value_lowered", L)),
        (lambda d: _field(d, "price").update(max_value=50.0), ("price", "max_value_lowered", T)),
        (lambda d: _field(d, "price").pop("max_value"), ("price", "max_value_removed", L)),
        (lambda d: _field(d, "size").update(min_value=0), ("size", "min_value_added", T)),
        (
            lambda d: _field(d, "ts").update(require_timezone=True),
            ("ts", "require_timezone_on", T),
        ),
        (
            lambda d: _field(d, "price").update(allow_non_finite=True),
            ("price", "allow_non_finite_on", L),
        ),
        (lambda d: _field(d, "ts").update(max_age_s=60), ("ts", "max_age_s_added", T)),
        (lambda d: _field(d, "side").update(allowed=["buy"]), ("side", "allowed_narrowed", T)),
        (
            lambda d: _field(d, "side").update(allowed=["buy", "sell", "short"]),
            ("side", "allowed_widened", L),
        ),
        (lambda d: _field(d, "side").pop("allowed"), ("side", "allowed_removed", L)),
        (lambda d: _field(d, "symbol").update(allowed=["A"]), ("symbol", "allowed_added", T)),
        (
            lambda d: _field(d, "venue").update(pattern="[A-Z]{3,4}"),
            ("venue", "pattern_changed", T),
        ),
        (lambda d: _field(d, "venue").pop("pattern"), ("venue", "pattern_removed", L)),
        (lambda d: _field(d, "symbol").update(pattern="[A-Z]+"), ("symbol", "pattern_added", T)),
        (lambda d: _field(d, "venue").update(min_length=5), ("venue", "min_length_raised", T)),
        (lambda d: _field(d, "venue").update(max_length=8), ("venue", "max_length_added", T)),
        (lambda d: _field(d, "levels").update(max_items=5), ("levels", "max_items_lowered", T)),
        (
            lambda d: _field(d, "levels").pop("max_items"),
            ("levels", "max_items_raised", L),  # the default, 10,000
        ),
        (lambda d: _field(d, "levels").update(min_items=1), ("levels", "min_items_added", T)),
        (lambda d: _field(d, "price").update(action="flag"), ("price", "action_flag", L)),
        (
            lambda d: d.update(max_allowed_null_pct=0.5),
            ("max_allowed_null_pct", "null_ceiling_lowered", T),
        ),
        (
            lambda d: d.update(max_allowed_null_pct=5.0),
            ("max_allowed_null_pct", "null_ceiling_raised", L),
        ),
        (
            lambda d: d.update(forbid_unknown_fields=True),
            ("forbid_unknown_fields", "unknown_fields_forbidden", T),
        ),
        (lambda d: d.update(description="x"), ("description", "description_changed", N)),
        (lambda d: d.update(version="2"), ("version", "version_changed", N)),
    ],
)
def test_each_change_kind_is_classified(edit: Any, expected: tuple[str, str, Effect]) -> None:
    """One edit, one change, with its effect."""
    assert _changed(edit) == [expected]


def test_nested_changes_are_named_by_path() -> None:
    """A bound added to an array's item field and an item field added: by metric path."""

    def edit(d: dict[str, Any]) -> None:
        items = _field(d, "levels")["items"]
        d["fields"][-1] = {
            **_field(d, "levels"),
            "items": {
                **items,
                "fields": [
                    {"name": "px", "type": "float", "min_value": 0},
                    {"name": "sz", "type": "int"},
                ],
            },
        }

    assert _changed(edit) == [
        ("levels[].px", "min_value_added", T),
        ("levels[].sz", "field_added", T),
    ]


def test_a_field_removed_while_unknown_fields_are_forbidden_is_tightening() -> None:
    """Records carrying a removed field become unknown_field violations."""
    strict = {**BASE, "forbid_unknown_fields": True}
    assert _changed(lambda d: d["fields"].pop(2), strict) == [("size", "field_removed", T)]


def test_changes_to_a_flagged_field_are_neutral() -> None:
    """A field whose checks only flag: tightening its bound quarantines nothing."""
    flagged = {**BASE, "fields": [*BASE["fields"][:1], {**BASE["fields"][1], "action": "flag"}]}
    flagged["fields"] += BASE["fields"][2:]
    assert _changed(lambda d: _field(d, "price").update(min_value=5.0), flagged) == [
        ("price", "min_value_raised", N)
    ]
    assert _changed(lambda d: _field(d, "price").update(action="quarantine"), flagged) == [
        ("price", "action_quarantine", T)
    ]


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda d: d["rules"].append({"name": "r2", "check": "size >= 0"}),
            ("rule r2", "rule_added", T),
        ),
        (
            lambda d: d["rules"].append({"name": "r2", "check": "size >= 0", "action": "flag"}),
            ("rule r2", "rule_added", N),
        ),
        (lambda d: d["rules"].clear(), ("rule positive", "rule_removed", L)),
        (lambda d: d["rules"][0].update(action="flag"), ("rule positive", "rule_action_flag", L)),
        (
            lambda d: d["rules"][0].update(check="price > 1"),
            ("rule positive", "rule_check_changed", T),
        ),
        (lambda d: d["rules"][0].update(when="size > 0"), ("rule positive", "rule_when_added", L)),
        (
            lambda d: d["rules"][0].update(description="d"),
            ("rule positive", "rule_description_changed", N),
        ),
    ],
)
def test_rule_changes(edit: Any, expected: tuple[str, str, Effect]) -> None:
    """Rules by name: added, removed, action, check, when, description."""
    assert _changed(edit) == [expected]


def test_a_check_only_respaced_is_no_change() -> None:
    """Spacing and parentheses do not count: the canonical form is compared."""
    assert _changed(lambda d: d["rules"][0].update(check="(price)>0")) == []


def test_state_changes_matter_only_where_they_quarantine() -> None:
    """A state section with a quarantining sequence check: tightening; flag-only: neutral."""
    base = {**BASE, "fields": [*BASE["fields"], {"name": "seq", "type": "int"}]}
    quarantining = {"key": "symbol", "sequence": {"field": "seq", "action": "quarantine"}}
    flagging = {"key": "symbol", "sequence": {"field": "seq", "action": "flag"}}
    assert _changed(lambda d: d.update(state=quarantining), base) == [("state", "state_added", T)]
    assert _changed(lambda d: d.update(state=flagging), base) == [("state", "state_added", N)]
    with_state = {**base, "state": quarantining}
    assert _changed(
        lambda d: d.update(
            state={**quarantining, "sequence": {**quarantining["sequence"], "window": 5}}
        ),
        with_state,
    ) == [("state.sequence.window", "state_changed", L)]
