"""Contract consistency checks and contract files."""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path

import pytest

from stream_validator import (
    ContractFileError,
    DataSchemaContractVerifier,
    FieldSpec,
    SchemaContract,
    load_contract,
)

REPO = Path(__file__).resolve().parents[3]
CONTRACTS = sorted((REPO / "config" / "contracts").glob("*.yaml"))
TICK_YAML = REPO / "config" / "contracts" / "tick.yaml"


def verifier_for(fields: list[FieldSpec], **options: object) -> DataSchemaContractVerifier:
    return DataSchemaContractVerifier(SchemaContract("c", fields, **options))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fields", "options", "needle"),
    [
        ([], {}, "no fields"),
        ([FieldSpec("a", int), FieldSpec("a", float)], {}, "duplicate field name 'a'"),
        ([FieldSpec("a", int, min_value=5, max_value=1)], {}, "greater than max_value"),
        ([FieldSpec("a", int)], {"max_allowed_null_pct": -0.1}, "max_allowed_null_pct"),
        ([FieldSpec("a", int)], {"max_allowed_null_pct": 100.5}, "max_allowed_null_pct"),
        ([FieldSpec("a", int)], {"max_allowed_null_pct": math.nan}, "max_allowed_null_pct"),
        ([FieldSpec("a", int)], {"max_allowed_null_pct": True}, "max_allowed_null_pct"),
        ([FieldSpec("a", set)], {}, "unsupported expected_type"),
        ([FieldSpec("a", list)], {}, "an array field needs items"),
        ([FieldSpec("a", "float")], {}, "unsupported expected_type"),  # type: ignore[arg-type]
        ([FieldSpec("a", str, min_value=1)], {}, "only allowed on numeric"),
        ([FieldSpec("a", bool, max_value=1)], {}, "only allowed on numeric"),
        ([FieldSpec("a", datetime, min_value=0)], {}, "only allowed on numeric"),
        ([FieldSpec("a", float, min_value=math.nan)], {}, "must not be NaN"),
        ([FieldSpec("a", float, max_value=math.nan)], {}, "must not be NaN"),
        ([FieldSpec("a", float, min_value="1")], {}, "must be a number"),  # type: ignore[arg-type]
        ([FieldSpec("a", float, min_value=True)], {}, "must be a number"),
        ([FieldSpec("", float)], {}, "non-empty string"),
        ([FieldSpec("a", int, allow_non_finite=True)], {}, "float fields only"),
    ],
)
def test_malformed_contracts_raise_value_error(
    fields: list[FieldSpec], options: dict[str, object], needle: str
) -> None:
    """Each malformed contract fails at setup with a ValueError that says why."""
    with pytest.raises(ValueError, match="malformed contract") as info:
        verifier_for(fields, **options)
    assert needle in str(info.value)


@pytest.mark.parametrize("pct", [0, 0.0, 100, 100.0, 1.0])
def test_null_pct_edges_are_allowed(pct: float) -> None:
    """0 and 100 are valid ceilings."""
    verifier_for([FieldSpec("a", int, is_nullable=True)], max_allowed_null_pct=pct)


def test_equal_bounds_are_allowed() -> None:
    """min_value == max_value is a legal (if narrow) range."""
    verifier_for([FieldSpec("a", int, min_value=3, max_value=3)])


def test_fields_list_is_frozen_into_a_tuple() -> None:
    """A contract built from a list cannot be changed through that list afterwards."""
    fields = [FieldSpec("a", int)]
    contract = SchemaContract("c", fields)  # type: ignore[arg-type]
    fields.append(FieldSpec("b", int))
    assert contract.field_names == ("a",)


def test_verifier_rejects_bad_max_payload_bytes() -> None:
    """max_payload_bytes must be a positive int."""
    with pytest.raises(ValueError, match="max_payload_bytes"):
        DataSchemaContractVerifier(SchemaContract("c", (FieldSpec("a", int),)), max_payload_bytes=0)


@pytest.mark.parametrize("path", CONTRACTS, ids=lambda p: p.name)
def test_shipped_contracts_load(path: Path) -> None:
    """Every contract under config/contracts loads and builds a verifier."""
    contract = load_contract(path)
    assert contract.name == path.stem
    assert contract.fields
    DataSchemaContractVerifier(contract)


def test_three_market_data_contracts_ship() -> None:
    """tick, orderbook_snapshot and ohlcv_bar contracts exist."""
    assert {p.stem for p in CONTRACTS} >= {"tick", "orderbook_snapshot", "ohlcv_bar"}


def test_tick_contract_content() -> None:
    """The shipped tick contract rejects P <= 0 and V < 0 and allows null quotes."""
    contract = load_contract(REPO / "config" / "contracts" / "tick.yaml")
    specs = {spec.name: spec for spec in contract.fields}
    assert specs["price"].expected_type is float and specs["price"].min_value > 0  # type: ignore[operator]
    assert specs["size"].expected_type is int and specs["size"].min_value == 0
    assert specs["bid"].is_nullable and not specs["price"].is_nullable


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


def test_loader_maps_every_key(tmp_path: Path) -> None:
    """Every documented key reaches the SchemaContract/FieldSpec."""
    path = write(
        tmp_path,
        """
name: quotes
version: 3
description: test
max_allowed_null_pct: 2.5
forbid_unknown_fields: true
fields:
  - {name: px, type: float, nullable: true, min_value: 0.5, max_value: 9, allow_non_finite: true}
  - {name: at, type: datetime}
""",
    )
    contract = load_contract(path)
    assert contract == SchemaContract(
        "quotes",
        (FieldSpec("px", float, True, 0.5, 9, True), FieldSpec("at", datetime)),
        max_allowed_null_pct=2.5,
        forbid_unknown_fields=True,
        version="3",
    )


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (
            "name: x\nfields: [{name: a, type: float, nulable: true}]",
            "fields[0] (field 'a'): unknown key(s) nulable (allowed: action, allow_non_finite,",
        ),
        (
            "name: x\nfields: [{name: a, type: decimal}]",
            "fields[0].type (field 'a'): expected one of array, bool, datetime, float, int,"
            " object, str, got 'decimal'",
        ),
        ("name: x\nfields: [{name: a, type: float, min_value: '1e-9'}]", "without the quotes"),
        (
            "name: x\nfields: [{name: a, type: float, min_value: 3, max_value: 1}]",
            "field 'a': min_value 3",
        ),
        (
            "name: x\nfields: [{name: a, type: int}, {name: a, type: int}]",
            "duplicate field name 'a'",
        ),
        ("name: x\nfields: []", "fields: expected list of length >= 1, got []"),
        ("fields: [{name: a, type: int}]", "missing required key 'name'"),
        ("name: x\nfields: [{type: int}]", "fields[0]: missing required key 'name'"),
        (
            "name: x\nmax_allowed_null_pct: 101\nfields: [{name: a, type: int}]",
            "max_allowed_null_pct",
        ),
        (
            "name: x\nfields: [{name: a, type: int, nullable: maybe}]",
            "fields[0].nullable (field 'a'): expected bool, got str",
        ),
        (
            "name: x\ncolour: red\nfields: [{name: a, type: int}]",
            "unknown key(s) colour (allowed: description, fields,",
        ),
        ("- just\n- a list", "expected mapping, got list"),
        ("name: [unclosed", "not valid YAML"),
    ],
)
def test_loader_errors_name_file_and_field(tmp_path: Path, text: str, needle: str) -> None:
    """A malformed contract file raises ContractFileError naming the file and the field."""
    path = write(tmp_path, text)
    with pytest.raises(ContractFileError) as info:
        load_contract(path)
    assert str(path) in str(info.value)
    assert needle in str(info.value)


def test_loader_missing_file(tmp_path: Path) -> None:
    """A missing file is a ContractFileError, which is also a ValueError."""
    with pytest.raises(ValueError, match="cannot read file"):
        load_contract(tmp_path / "absent.yaml")


def test_duplicate_key_in_a_contract_file_is_refused(tmp_path: Path) -> None:
    """A second min_value (a weakened bound) is an error naming the key and both lines."""
    text = TICK_YAML.read_text().replace(
        "    min_value: 1.0e-9\n    max_value: 10000000.0\n  - name: size",
        "    min_value: 1.0e-9\n    max_value: 10000000.0\n    min_value: -1000.0\n  - name: size",
        1,
    )
    line = text.splitlines().index("    min_value: -1000.0") + 1
    with pytest.raises(ContractFileError) as info:
        load_contract(write(tmp_path, text))
    assert f"duplicate key 'min_value' at line {line} (first at line {line - 2})" in str(info.value)


def test_contract_file_error_lists_every_problem(tmp_path: Path) -> None:
    """All problems of one file are reported together, not only the first."""
    text = (
        "name: x\ncolour: red\nname: y\n"
        "fields: [{name: a, type: decimal}, {name: b, type: int, nullable: maybe}]\n"
    )
    with pytest.raises(ContractFileError) as info:
        load_contract(write(tmp_path, text))
    message = str(info.value)
    for needle in (
        "duplicate key 'name' at line 3",
        "unknown key(s) colour",
        "fields[0].type (field 'a'): expected one of",
        "fields[1].nullable (field 'b'): expected bool, got str",
    ):
        assert needle in message


def test_contract_syntax_error_gives_position_not_source(tmp_path: Path) -> None:
    """A YAML syntax error names line and column but never echoes the file's text."""
    path = write(tmp_path, "name: x\ndescription: *s3cr3t-ish\nfields: []\n")
    with pytest.raises(ContractFileError) as info:
        load_contract(path)
    assert "line 2, column 14" in str(info.value) and "s3cr3t" not in str(info.value)


@pytest.mark.parametrize(
    ("name", "version", "needle"),
    [
        ("tick\n", "1", "contract name must be printable"),
        ("x" * 101, "1", "contract name must be a string of 1-100 characters"),
        ("tick", "v\x00", "contract version must be printable"),
    ],
)
def test_contract_name_and_version_fit_labels(name: str, version: str, needle: str) -> None:
    """A name or version that cannot be a metric label is refused at setup, not at runtime."""
    with pytest.raises(ValueError, match=needle):
        DataSchemaContractVerifier(SchemaContract(name, [FieldSpec("a", int)], version=version))


def test_market_data_contracts_ship_their_rules() -> None:
    """The book and bar rules ship, and every datetime field requires an offset."""
    expected = {
        "tick": {"crossed_book": "quarantine", "locked_book": "flag", "spread_band": "flag"},
        "orderbook_snapshot": {
            "crossed_book": "quarantine",
            "locked_book": "flag",
            "bids_descending": "flag",
            "asks_ascending": "flag",
        },
        "ohlcv_bar": {
            "open_in_range": "quarantine",
            "close_in_range": "quarantine",
            "vwap_in_range": "flag",
        },
    }
    for name, rules in expected.items():
        contract = load_contract(REPO / "config" / "contracts" / f"{name}.yaml")
        assert {r.name: r.action.value for r in contract.rules} == rules
        datetimes = [s for s in contract.fields if s.expected_type is datetime]
        assert datetimes and all(s.require_timezone for s in datetimes)
