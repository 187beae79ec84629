"""allowed, pattern, min_length, max_length: where they apply and that they agree, in Python
and in contract files."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from stream_validator import ContractError, FieldSpec, SchemaContract, load_contract
from stream_validator.contracts import contract_from_mapping
from stream_validator.contracts.check import contract_problems
from stream_validator.errors import ContractFileError


def problems_of(spec: FieldSpec) -> list[str]:
    return contract_problems(SchemaContract("c", [spec]))


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        (
            FieldSpec("f", float, allowed=(1.5,)),
            "field 'f': allowed applies to str and int fields only",
        ),
        (
            FieldSpec("b", bool, allowed=(True,)),
            "field 'b': allowed applies to str and int fields only",
        ),
        (FieldSpec("s", str, allowed=()), "field 's': allowed must be a non-empty list of strings"),
        (
            FieldSpec("s", str, allowed=("a", 1)),  # type: ignore[arg-type]
            "field 's': allowed[1] must be one of the field's strings, got 1",
        ),
        (
            FieldSpec("i", int, allowed=(1, True)),
            "field 'i': allowed[1] must be one of the field's ints, got True",
        ),
        (FieldSpec("s", str, allowed=("a", "a")), "field 's': allowed[1]: 'a' is listed twice"),
        (
            FieldSpec("i", int, allowed=(0, 5), min_value=1),
            "field 'i': allowed[0]: 0 is below min_value 1, so it can never pass",
        ),
        (
            FieldSpec("s", str, allowed=("AB", "ab"), pattern="[A-Z]+"),
            "field 's': allowed[1]: 'ab' does not match the pattern, so it can never pass",
        ),
        (
            FieldSpec("s", str, allowed=("abc",), max_length=2),
            "field 's': allowed[0]: 'abc' is longer than max_length 2, so it can never pass",
        ),
        (FieldSpec("i", int, pattern="1"), "field 'i': pattern applies to str fields only"),
        (
            FieldSpec("d", datetime, min_length=1),
            "field 'd': min_length applies to str fields only",
        ),
        (FieldSpec("s", str, max_length=-1), "field 's': max_length must be an int >= 0, got -1"),
        (
            FieldSpec("s", str, min_length=1.5),  # type: ignore[arg-type]
            "field 's': min_length must be an int >= 0, got 1.5",
        ),
        (
            FieldSpec("s", str, min_length=3, max_length=2),
            "min_length 3 is greater than max_length 2",
        ),
        (
            FieldSpec("s", str, pattern="^a"),
            "field 's': pattern '^a': anchor '^': a pattern always matches the whole value,"
            " drop it at position 0",
        ),
    ],
)
def test_a_malformed_value_check_is_named(spec: FieldSpec, problem: str) -> None:
    """Each misuse of allowed, pattern or the lengths is a problem naming the field."""
    assert problem in "; ".join(problems_of(spec))


def test_a_list_of_allowed_values_is_stored_as_a_tuple() -> None:
    """FieldSpec stays immutable (and hashable) when allowed is given as a list."""
    spec = FieldSpec("side", str, allowed=["buy", "sell"])  # type: ignore[arg-type]
    assert spec.allowed == ("buy", "sell")
    assert hash(spec) == hash(FieldSpec("side", str, allowed=("buy", "sell")))


def test_the_verifier_refuses_a_bad_pattern() -> None:
    """A pattern outside the subset is a ContractError at construction, naming the field."""
    from stream_validator import DataSchemaContractVerifier

    with pytest.raises(ContractError, match="field 'x': pattern '\\(\\?=a\\)'"):
        DataSchemaContractVerifier(SchemaContract("c", [FieldSpec("x", str, pattern="(?=a)")]))


def test_a_contract_file_reads_the_value_checks(tmp_path: Path) -> None:
    """allowed, pattern, min_length and max_length are read from a file as written."""
    path = tmp_path / "orders.yaml"
    path.write_text(
        "name: orders\nfields:\n"
        "  - {name: side, type: str, allowed: [buy, sell]}\n"
        "  - {name: order_type, type: int, allowed: [1, 2]}\n"
        "  - name: exchange\n    type: str\n    pattern: '[A-Z0-9]{4}'\n"
        "  - {name: order_id, type: str, min_length: 1, max_length: 36}\n"
    )
    side, order_type, exchange, order_id = load_contract(path).fields
    assert side.allowed == ("buy", "sell") and order_type.allowed == (1, 2)
    assert exchange.pattern == "[A-Z0-9]{4}"
    assert (order_id.min_length, order_id.max_length) == (1, 36)


def test_a_file_error_names_the_field_and_the_pattern_problem() -> None:
    """A bad pattern in a file is reported with the field and the position in the pattern."""
    document = {"name": "c", "fields": [{"name": "venue", "type": "str", "pattern": "(a|b)+"}]}
    with pytest.raises(ContractFileError) as info:
        contract_from_mapping(document, source="c.yaml")
    assert str(info.value) == (
        "c.yaml: field 'venue': pattern '(a|b)+': a repeated group may not hold '|' or a"
        " varying quantifier (exponential backtracking in Python's engine) at position 5"
    )


def test_a_yaml_boolean_in_allowed_is_a_type_error() -> None:
    """YAML reads an unquoted yes as true: the error names the item and the type found."""
    document = {"name": "c", "fields": [{"name": "ok", "type": "str", "allowed": ["y", True]}]}
    with pytest.raises(ContractFileError, match=r"fields\[0\]\.allowed\[1\] \(field 'ok'\)"):
        contract_from_mapping(document)
