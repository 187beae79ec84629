"""FlipCounter: sampled records that change verdict, put down to the changes that did it."""

from __future__ import annotations

from typing import Any

from stream_validator.contracts import contract_from_mapping
from stream_validator.lifecycle.diff import diff_contracts
from stream_validator.lifecycle.flips import FlipCounter, Flips
from tests.unit.lifecycle.drafting import lines_of

OLD: dict[str, Any] = {
    "name": "t",
    "version": "1",
    "max_allowed_null_pct": 50.0,
    "fields": [
        {"name": "price", "type": "float", "max_value": 100.0},
        {"name": "bid", "type": "float", "nullable": True},
        {"name": "size", "type": "int", "min_value": 0},
    ],
}


def _flips(new_doc: dict[str, Any], records: list[Any]) -> tuple[Flips, list[str]]:
    old, new = contract_from_mapping(OLD), contract_from_mapping(new_doc)
    changes = diff_contracts(old, new)
    counter = FlipCounter(old, new, changes, 1 << 20)
    lines = lines_of(records)
    counter.add(lines, list(range(1, len(lines) + 1)))  # type: ignore[arg-type]
    by_what = [f"{c.what}={counter.flips.by_change.get(i, 0)}" for i, c in enumerate(changes)]
    return counter.flips, by_what


def test_tightening_changes_count_the_records_they_newly_quarantine() -> None:
    """max_value lowered and nullable -> required: each counts its own records; a record
    caught by both counts for both; the newly quarantined total counts it once."""
    new = {
        **OLD,
        "fields": [
            {"name": "price", "type": "float", "max_value": 50.0},
            {"name": "bid", "type": "float"},
            OLD["fields"][2],
        ],
    }
    records = [
        {"price": 60.0, "bid": 1.0, "size": 1},  # price only
        {"price": 10.0, "bid": None, "size": 1},  # bid only
        {"price": 70.0, "bid": None, "size": 1},  # both
        {"price": 10.0, "bid": 1.0, "size": 1},  # passes both
        {"price": 10.0, "bid": 1.0, "size": -1},  # fails both
    ]
    flips, by_what = _flips(new, records)
    assert by_what == ["max_value_lowered=2", "nullable_to_required=2"]
    assert (flips.newly_quarantined, flips.newly_passing, flips.unattributed) == (3, 0, 0)
    assert flips.examples == {0: [1, 3], 1: [2, 3]}


def test_loosening_changes_count_the_records_they_let_pass() -> None:
    """min_value removed: the records below it now pass, put down to that change."""
    new = {**OLD, "fields": [*OLD["fields"][:2], {"name": "size", "type": "int"}]}
    flips, by_what = _flips(new, [{"price": 1.0, "bid": 1.0, "size": -5}] * 3)
    assert by_what == ["min_value_removed=3"]
    assert (flips.newly_quarantined, flips.newly_passing) == (0, 3)


def test_unknown_fields_forbidden_counts_the_records_carrying_them() -> None:
    """forbid_unknown_fields on: records with undeclared keys flip, put down to it."""
    flips, by_what = _flips(
        {**OLD, "forbid_unknown_fields": True},
        [{"price": 1.0, "bid": 1.0, "size": 1, "x": 1}, {"price": 1.0, "bid": 1.0, "size": 1}],
    )
    assert by_what == ["unknown_fields_forbidden=1"]
    assert flips.newly_quarantined == 1


def test_null_rates_are_held_against_both_ceilings() -> None:
    """A lowered ceiling the sample's null rate breaches is reported for the new contract."""
    flips, _ = _flips(
        {**OLD, "max_allowed_null_pct": 10.0},
        [{"price": 1.0, "bid": None, "size": 1}, {"price": 1.0, "bid": 1.0, "size": 1}],
    )
    new = contract_from_mapping({**OLD, "max_allowed_null_pct": 10.0})
    assert flips.null_breaches(contract_from_mapping(OLD), new=False) == {}
    assert flips.null_breaches(new, new=True) == {"bid": 50.0}
