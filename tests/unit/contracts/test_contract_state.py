"""A contract file's ``state`` section becomes SchemaContract.state; errors name file and key."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from stream_validator.contracts import FieldSpec, SchemaContract, check_contract, load_contract
from stream_validator.contracts.rulespec import RuleAction
from stream_validator.contracts.statespec import SymbolStateSpec
from stream_validator.errors import ContractError, ContractFileError

REPO = Path(__file__).resolve().parents[3]
HEAD = """
name: quotes
fields:
  - {name: symbol, type: str}
  - {name: seq, type: int}
  - {name: ts, type: datetime}
  - {name: bid, type: float}
"""


def load(tmp_path: Path, text: str) -> SchemaContract:
    path = tmp_path / "quotes.yaml"
    path.write_text(HEAD + text)
    return load_contract(path)


def test_state_section_becomes_the_contracts_spec(tmp_path: Path) -> None:
    """Every key of the section reaches SymbolStateSpec."""
    contract = load(
        tmp_path,
        """
state:
  key: symbol
  max_symbols: 10
  sequence: {field: seq, window: 2, action: quarantine}
  event_time: {field: ts, max_regression_s: 0.5}
  frozen_quote: {fields: [bid], max_updates: 7}
""",
    )
    assert contract.state == SymbolStateSpec(
        key_field="symbol",
        sequence_field="seq",
        sequence_window=2,
        sequence_action=RuleAction.QUARANTINE,
        event_time_field="ts",
        max_time_regression_s=0.5,
        quote_fields=("bid",),
        frozen_max_updates=7,
        max_symbols=10,
    )


def test_no_state_section_keeps_no_state(tmp_path: Path) -> None:
    """A contract without ``state`` has state None."""
    assert load(tmp_path, "").state is None


@pytest.mark.parametrize(
    ("section", "needle"),
    [
        ("state: {key: bid}", "state.key: field 'bid' is float, expected str"),
        ("state: {key: symbol, sequence: {field: nope}}", "state.sequence.field must name a"),
        ("state: {key: symbol, colour: red}", "state: unknown key(s) colour"),
        ("state: [symbol]", "state must be a mapping"),
        (
            "state: {key: symbol, sequence: {field: seq, action: drop}}",
            "state.sequence.action must be flag or quarantine, got 'drop'",
        ),
        # A quote is held per symbol: a str field could make it hold a 1 MB payload each.
        (
            "state: {key: symbol, frozen_quote: {fields: [bid, symbol], max_updates: 3}}",
            "state.frozen_quote.fields[1]: field 'symbol' is str, expected int or float",
        ),
        (
            "state: {key: symbol, frozen_quote: {fields: [ts], max_updates: 3}}",
            "state.frozen_quote.fields[0]: field 'ts' is datetime, expected int or float",
        ),
    ],
)
def test_state_errors_name_file_and_key(tmp_path: Path, section: str, needle: str) -> None:
    """A bad state section is a ContractFileError naming the file and the state.* key."""
    with pytest.raises(ContractFileError) as info:
        load(tmp_path, section + "\n")
    assert "quotes.yaml" in str(info.value)
    assert needle in str(info.value)


def test_state_and_rule_problems_are_reported_together(tmp_path: Path) -> None:
    """A file with a bad rule and a bad state section lists both problems."""
    text = "rules: [{name: r, check: 'nope > 1'}]\nstate: {key: nope}\n"
    with pytest.raises(ContractFileError) as info:
        load(tmp_path, text)
    assert "rules[0] (r).check" in str(info.value)
    assert "state.key" in str(info.value)


def test_a_spec_built_in_code_is_checked_against_the_fields() -> None:
    """check_contract refuses a SymbolStateSpec naming an undeclared or ill-typed field."""
    contract = SchemaContract(
        "quotes",
        [FieldSpec("symbol", int), FieldSpec("seq", int), FieldSpec("venue", str)],
        state=SymbolStateSpec(
            key_field="symbol",
            sequence_field="gone",
            quote_fields=("seq", "venue"),
            frozen_max_updates=3,
        ),
    )
    with pytest.raises(ContractError) as info:
        check_contract(contract)
    assert "state.key: field 'symbol' is int, expected str" in str(info.value)
    assert "state.sequence.field must name a declared field, got 'gone'" in str(info.value)
    assert "state.frozen_quote.fields[1]: field 'venue' is str, expected int or float" in str(
        info.value
    )
    assert "fields[0]" not in str(info.value)


def test_shipped_tick_contract_keeps_state_on_seq_event_time_and_quote() -> None:
    """tick.yaml tracks seq (flag), event_ts and a frozen price/bid/ask per symbol."""
    state = load_contract(REPO / "config" / "contracts" / "tick.yaml").state
    assert state is not None
    assert (state.key_field, state.sequence_field, state.event_time_field) == (
        "symbol",
        "seq",
        "event_ts",
    )
    assert state.sequence_action is RuleAction.FLAG
    assert state.quote_fields == ("price", "bid", "ask")


def test_state_is_part_of_contract_equality() -> None:
    """Two contracts differing only in state are different contracts."""
    fields = [FieldSpec("symbol", str), FieldSpec("ts", datetime)]
    assert SchemaContract("c", fields) != SchemaContract(
        "c", fields, state=SymbolStateSpec(sequence_field=None)
    )
