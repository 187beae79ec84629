"""Contract file errors name the file, the path (``fields[2].min_value``) and expected vs got."""

from __future__ import annotations

import os
from pathlib import Path
from typing import get_args

import pytest

from stream_validator.contracts import (
    SUPPORTED_TYPES,
    contract_from_mapping,
    load_contract,
)
from stream_validator.contracts.loader import TypeLabel
from stream_validator.errors import ContractFileError
from stream_validator.yamlfile import MAX_FILE_BYTES

HEAD = "name: quotes\nfields:\n  - {name: a, type: int}\n  - {name: b, type: float}\n"


def problems(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ContractFileError) as info:
        load_contract(path)
    assert str(info.value).startswith(f"{path}: ")
    listed = info.value.problems
    lines = info.value.detail.splitlines()
    assert [line.strip() for line in lines[len(lines) > 1 :]] == listed  # one per line
    return listed


def test_a_bound_of_the_wrong_type_names_index_field_and_types(tmp_path: Path) -> None:
    """fields[2].min_value (field 'c'): expected a number or null, got a string."""
    text = HEAD + "  - {name: c, type: float, min_value: low}\n"
    assert problems(tmp_path, text) == [
        "fields[2].min_value (field 'c'): expected int | float | null, got str"
    ]


def test_a_quoted_number_gets_the_hint_to_drop_the_quotes(tmp_path: Path) -> None:
    """A bound written as '1.0e-9' in quotes is text; the error shows it and says why."""
    text = HEAD + "  - {name: c, type: float, max_value: '1.0e-9'}\n"
    assert problems(tmp_path, text) == [
        "fields[2].max_value (field 'c'): expected int | float | null, got str '1.0e-9'"
        " (a number in quotes is text: write it without the quotes)"
    ]


@pytest.mark.parametrize(
    ("written", "value"),
    [("1.0e10", 1e10), ("1.0e+10", 1e10), ("1e-9", 1e-9), ("1E5", 1e5), ("-2.5e3", -2500.0)],
)
def test_every_exponent_form_is_a_float(tmp_path: Path, written: str, value: float) -> None:
    """1.0e10 (no sign) and 1e-9 (no dot), text in YAML 1.1, are floats as in YAML 1.2/JSON."""
    path = tmp_path / "c.yaml"
    path.write_text(HEAD + f"  - {{name: c, type: float, max_value: {written}}}\n")
    assert load_contract(path).fields[2].max_value == value


def test_unknown_keys_at_depth_are_listed(tmp_path: Path) -> None:
    """Every unknown key of one field is named, with the keys a field allows."""
    text = HEAD + "  - {name: c, type: int, nulable: true, minimum: 0}\n"
    assert problems(tmp_path, text) == [
        "fields[2] (field 'c'): unknown key(s) minimum, nulable (allowed: action,"
        " allow_non_finite, allowed, description, fields, items, max_age_s, max_future_s,"
        " max_items, max_length, max_value, min_items, min_length, min_value, name, nullable,"
        " pattern, require_timezone, type)"
    ]


def test_each_field_and_the_top_level_report_their_problem(tmp_path: Path) -> None:
    """A wrong top-level type and two bad fields are three problems, in file order."""
    text = (
        "name: quotes\nversion: true\nfields:\n  - 3\n  - {name: a, type: int}\n"
        "  - {name: b, type: decimal}\n"
    )
    assert problems(tmp_path, text) == [
        "version: expected int | float | str, got bool",
        "fields[0]: expected mapping, got int",
        "fields[2].type (field 'b'): expected one of array, bool, datetime, float, int, object,"
        " str, got 'decimal'",
    ]


def test_a_field_without_a_name_is_named_by_its_index(tmp_path: Path) -> None:
    """A missing required key names the item it is missing from."""
    assert problems(tmp_path, HEAD + "  - {type: int}\n") == [
        "fields[2]: missing required key 'name'"
    ]


def test_contract_from_mapping_names_the_path_too() -> None:
    """A parsed document gets the same path-naming errors, under its source name."""
    with pytest.raises(ContractFileError) as info:
        contract_from_mapping(
            {"name": "x", "fields": [{"name": "a", "type": "int", "nullable": 1}]}
        )
    assert str(info.value) == "<contract>: fields[0].nullable (field 'a'): expected bool, got int"


def test_the_type_names_of_the_file_are_the_supported_types() -> None:
    """The decoder's literal type names and SUPPORTED_TYPES cannot drift apart."""
    assert set(get_args(TypeLabel)) == set(SUPPORTED_TYPES)


def test_rules_are_read_with_the_contract_field_types(tmp_path: Path) -> None:
    """A rules list becomes RuleSpecs; action defaults to quarantine."""
    path = tmp_path / "c.yaml"
    path.write_text(
        HEAD
        + "rules:\n  - {name: order, check: 'a <= b'}\n"
        + "  - {name: band, check: 'b - a <= 0.05 * b', action: flag, description: wide}\n"
    )
    contract = load_contract(path)
    assert [(r.name, r.action.value, r.canonical) for r in contract.rules] == [
        ("order", "quarantine", "a <= b"),
        ("band", "flag", "b - a <= 0.05 * b"),
    ]
    assert contract.rules[1].description == "wide"


def test_rule_problems_name_the_file_and_the_rule_path(tmp_path: Path) -> None:
    """Every bad rule is listed with its rules[i] path, beside the field problems."""
    text = (
        HEAD
        + "  - {name: c, type: str, require_timezone: true}\n"
        + "rules:\n  - {name: r1, check: 'a <= c'}\n  - {name: r2, check: 'a =< b'}\n"
        + "  - {name: r3, check: 'a < b', action: drop}\n"
    )
    assert problems(tmp_path, text) == [
        "rules[0] (r1).check: numeric field 'a' at column 1 is compared with str field 'c' at"
        " column 6; compare a str field with a string ('limit') and a number field with a number",
        "rules[1] (r2).check: unexpected character '=' (use '==') at column 3",
        "rules[2] (r3): 'action' must be quarantine or flag, got 'drop'",
    ]


def test_timestamp_options_on_a_non_datetime_field_name_it(tmp_path: Path) -> None:
    """require_timezone on a str field is a consistency problem naming the field."""
    text = HEAD + "  - {name: c, type: str, require_timezone: true, max_age_s: -1}\n"
    assert problems(tmp_path, text) == [
        "field 'c': require_timezone applies to datetime fields only",
        "field 'c': max_age_s applies to datetime fields only",
    ]


def _refused(path: Path | str) -> str:
    with pytest.raises(ContractFileError) as info:
        load_contract(path)
    return info.value.detail


def test_a_path_that_is_not_a_regular_file_is_refused_at_once(tmp_path: Path) -> None:
    """A FIFO (whose open would wait for a writer), a device that never ends and a
    directory: each is a load error, without reading."""
    fifo = tmp_path / "contract.fifo"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero"), tmp_path):
        assert "not a regular file" in _refused(path)


def test_a_path_with_a_nul_byte_is_a_load_error() -> None:
    """A NUL byte in the path (possible in a YAML string) is named, not a ValueError."""
    assert "invalid path" in _refused("tick.yaml\x00")


def test_a_file_over_the_size_limit_is_refused(tmp_path: Path) -> None:
    """A valid contract followed by more than MAX_FILE_BYTES of comments: a wrong path
    (a log, say) is not read whole into memory."""
    path = tmp_path / "c.yaml"
    path.write_text(HEAD + "# padding\n" * (MAX_FILE_BYTES // 10 + 1))
    assert f"larger than {MAX_FILE_BYTES:,} bytes" in _refused(path)
    path.write_text(HEAD)
    assert load_contract(path).field_names == ("a", "b")


def test_every_problem_of_one_field_and_of_the_top_level_in_one_run(tmp_path: Path) -> None:
    """An unknown key, a wrong type and a bad enum of one field, beside the top level's unknown
    key and quoted number, are five problems of one run, each on its own line."""
    text = (
        "name: quotes\nnam: typo\nmax_allowed_null_pct: '5'\nfields:\n"
        "  - {name: a, type: flot, nulable: true, min_value: low}\n"
    )
    assert problems(tmp_path, text) == [
        "unknown key(s) nam (allowed: description, fields, forbid_unknown_fields,"
        " max_allowed_null_pct, name, rules, state, version)",
        "max_allowed_null_pct: expected int | float, got str '5'"
        " (a number in quotes is text: write it without the quotes)",
        "fields[0] (field 'a'): unknown key(s) nulable (allowed: action, allow_non_finite,"
        " allowed, description, fields, items, max_age_s, max_future_s, max_items, max_length,"
        " max_value, min_items, min_length, min_value, name, nullable, pattern,"
        " require_timezone, type)",
        "fields[0].type (field 'a'): expected one of array, bool, datetime, float, int, object,"
        " str, got 'flot'",
        "fields[0].min_value (field 'a'): expected int | float | null, got str",
    ]
