"""A field's ``action`` (quarantine | flag): in FieldSpec and in contract files."""

from __future__ import annotations

from datetime import datetime

import pytest

from stream_validator import FieldSpec, SchemaContract
from stream_validator.contracts.check import contract_problems
from stream_validator.contracts.loader import contract_from_mapping
from stream_validator.contracts.rulespec import RuleAction
from stream_validator.contracts.statespec import SymbolStateSpec
from stream_validator.errors import ContractFileError


def test_a_field_quarantines_by_default() -> None:
    """FieldSpec.action defaults to quarantine."""
    assert FieldSpec("px", float).action is RuleAction.QUARANTINE


def test_fieldspec_takes_the_action_as_text() -> None:
    """action="flag" is stored as RuleAction.FLAG."""
    assert FieldSpec("px", float, action="flag").action is RuleAction.FLAG  # type: ignore[arg-type]


def test_an_unknown_action_is_a_contract_problem() -> None:
    """A FieldSpec built with another action is refused by the contract check."""
    spec = FieldSpec("px", float, action="warn")  # type: ignore[arg-type]
    problems = contract_problems(SchemaContract("c", [spec]))
    assert problems == ["field 'px': action must be quarantine or flag, got 'warn'"]


def test_contract_file_reads_a_field_action() -> None:
    """A field's action: flag in a contract file gives FieldSpec.action FLAG."""
    contract = contract_from_mapping(
        {"name": "c", "fields": [{"name": "px", "type": "float", "action": "flag"}]}
    )
    assert contract.fields[0].action is RuleAction.FLAG


def test_contract_file_refuses_another_action() -> None:
    """action: warn is refused, naming the field and the accepted values."""
    with pytest.raises(ContractFileError, match=r"fields\[0\]\.action.*flag, quarantine"):
        contract_from_mapping(
            {"name": "c", "fields": [{"name": "px", "type": "float", "action": "warn"}]}
        )


@pytest.mark.parametrize("flagged", ["sym", "seq", "ts"])
def test_a_field_the_state_reads_cannot_be_flagged(flagged: str) -> None:
    """The per-symbol state's key, sequence and event-time fields must quarantine."""
    fields = [
        FieldSpec("sym", str, action="flag" if flagged == "sym" else "quarantine"),  # type: ignore[arg-type]
        FieldSpec("seq", int, action="flag" if flagged == "seq" else "quarantine"),  # type: ignore[arg-type]
        FieldSpec("ts", datetime, action="flag" if flagged == "ts" else "quarantine"),  # type: ignore[arg-type]
        FieldSpec("px", float, action="flag"),  # type: ignore[arg-type]
    ]
    state = SymbolStateSpec(key_field="sym", sequence_field="seq", event_time_field="ts")
    problems = contract_problems(SchemaContract("c", fields, state=state))
    assert problems == [
        f"field {flagged!r}: action flag is not allowed on a field the state section reads"
        " (the per-symbol state needs its checked value)"
    ]
