"""Object and array fields in FieldSpec and contract files: what is accepted, what is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream_validator import FieldSpec, RuleSpec, SchemaContract
from stream_validator.contracts.check import contract_problems
from stream_validator.contracts.loader import load_contract
from stream_validator.contracts.model import (
    DEFAULT_MAX_ITEMS,
    MAX_NESTING_DEPTH,
    field_paths,
    nullable_paths,
    rule_field_types,
)
from stream_validator.errors import ContractFileError, RuleError

LEVEL = FieldSpec(
    "level",
    dict,
    fields=[FieldSpec("price", float, min_value=0), FieldSpec("size", float, is_nullable=True)],
)
BOOK = FieldSpec("book", dict, fields=[FieldSpec("bid", float), FieldSpec("ask", float)])
LEVELS = FieldSpec("levels", list, items=LEVEL, max_items=50)


def problems_of(*fields: FieldSpec, rules: tuple[RuleSpec, ...] = ()) -> list[str]:
    return contract_problems(SchemaContract("c", fields, rules=rules))


def test_object_and_array_fields_are_accepted() -> None:
    """An object with fields and an array of objects make a well-formed contract."""
    assert problems_of(FieldSpec("sym", str), BOOK, LEVELS) == []


def test_fields_given_as_a_list_are_stored_as_a_tuple() -> None:
    """An object's fields are immutable after construction, like the contract's."""
    assert isinstance(BOOK.fields, tuple)


def test_metric_paths_never_hold_an_index() -> None:
    """Paths name object fields with a dot and array items with '[]'."""
    paths = [path for path, _ in field_paths([BOOK, LEVELS])]
    assert paths == [
        "book",
        "book.bid",
        "book.ask",
        "levels",
        "levels[]",
        "levels[].price",
        "levels[].size",
    ]


def test_nullable_paths_list_top_level_fields_first() -> None:
    """The null slots: top-level nullable fields, then nested ones by path."""
    contract = SchemaContract("c", [LEVELS, FieldSpec("x", int, is_nullable=True)])
    assert nullable_paths(contract) == ["x", "levels[].size"]


def test_rules_may_read_object_paths_but_not_array_items() -> None:
    """rule_field_types holds book.bid and no path through an array."""
    types = rule_field_types(SchemaContract("c", [BOOK, LEVELS]))
    assert types["book.bid"] is float
    assert not any("[" in path or path.startswith("levels.") for path in types)


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        (FieldSpec("book", dict), "an object field needs fields"),
        (FieldSpec("levels", list), "an array field needs items"),
        (FieldSpec("x", float, fields=[FieldSpec("a", int)]), "fields applies to object"),
        (FieldSpec("x", float, items=FieldSpec("a", int)), "items applies to array"),
        (FieldSpec("x", str, max_items=3), "max_items applies to array"),
        (
            FieldSpec("levels", list, items=FieldSpec("i", int), min_items=5, max_items=2),
            "min_items 5 is greater than max_items 2",
        ),
        (
            FieldSpec("levels", list, items=FieldSpec("i", int), min_items=DEFAULT_MAX_ITEMS + 1),
            f"greater than max_items {DEFAULT_MAX_ITEMS}",
        ),
        (
            FieldSpec("levels", list, items=FieldSpec("i", int), max_items=10**7),
            "max_items must be an int from 0 to 1000000",
        ),
        (FieldSpec("book", dict, fields=[FieldSpec("a.b", int)]), "cannot hold '.'"),
        (
            FieldSpec("book", dict, fields=[FieldSpec("a", int), FieldSpec("a", str)]),
            "field 'book': duplicate field name 'a'",
        ),
        (
            FieldSpec("book", dict, fields=[FieldSpec("p", float, max_value="x")]),  # type: ignore[arg-type]
            "field 'book.p': max_value must be a number",
        ),
        (
            FieldSpec("levels", list, items=FieldSpec("i", str, min_value=1)),
            "field 'levels[]': min_value is only allowed on numeric",
        ),
    ],
)
def test_malformed_nested_fields_are_refused(spec: FieldSpec, needle: str) -> None:
    """Each misuse of fields/items/min_items/max_items is named with the field's path."""
    assert any(needle in problem for problem in problems_of(spec)), problems_of(spec)


def test_nesting_deeper_than_the_limit_is_refused() -> None:
    """Objects and arrays nest at most MAX_NESTING_DEPTH deep."""
    spec = FieldSpec("leaf", int)
    for _ in range(MAX_NESTING_DEPTH):
        spec = FieldSpec("a", list, items=spec)
    assert any(f"nest at most {MAX_NESTING_DEPTH}" in p for p in problems_of(spec))
    assert problems_of(spec.items) == []  # type: ignore[arg-type]


def test_skew_windows_are_refused_below_the_top_level() -> None:
    """max_future_s/max_age_s apply to top-level datetime fields only."""
    from datetime import datetime

    inner = FieldSpec("ts", datetime, max_age_s=5)
    assert any(
        "top-level fields only" in p for p in problems_of(FieldSpec("o", dict, fields=[inner]))
    )


def test_a_path_declared_twice_is_refused() -> None:
    """A top-level name spelling a nested path ('book.bid') would make paths ambiguous."""
    assert any("declared twice" in p for p in problems_of(BOOK, FieldSpec("book.bid", float)))


def test_rule_reads_an_object_field_by_path() -> None:
    """A rule 'book.bid <= book.ask' fits a contract with the object book."""
    rule = RuleSpec.of("crossed", "book.bid <= book.ask")
    assert problems_of(BOOK, rules=(rule,)) == []
    assert rule.fields == {"book.bid", "book.ask"}


def test_rule_indexing_an_array_says_what_to_write() -> None:
    """'levels[0].price' is refused with the advice to use the items spec."""
    with pytest.raises(RuleError, match="rules cannot index arrays; check each item"):
        RuleSpec.of("r", "levels[0].price > 0")


def test_rule_path_through_an_array_says_it_is_an_array() -> None:
    """'levels.price' names 'levels' as an array."""
    problems = problems_of(LEVELS, rules=(RuleSpec.of("r", "levels.price > 0"),))
    assert any("('levels' is an array)" in p for p in problems), problems


def test_rule_on_an_object_field_says_it_is_an_object() -> None:
    """A rule comparing 'book' itself is refused: rules read int, float and str fields."""
    problems = problems_of(BOOK, rules=(RuleSpec.of("r", "book > 0"),))
    assert any("is an object; rules read int, float and str" in p for p in problems), problems


NESTED_YAML = """\
name: ob
fields:
  - {name: sym, type: str}
  - name: book
    type: object
    fields:
      - {name: bid, type: float, nullable: true, min_value: 0}
      - {name: ask, type: float}
  - name: levels
    type: array
    min_items: 1
    max_items: 20
    items:
      type: object
      fields:
        - {name: price, type: float, min_value: 0}
        - {name: tags, type: array, items: {type: str, allowed: [a, b]}}
rules:
  - {name: crossed, check: "book.bid <= book.ask"}
"""


def test_contract_file_declares_objects_and_arrays(tmp_path: Path) -> None:
    """type: object with fields and type: array with items load into nested FieldSpecs."""
    path = tmp_path / "c.yaml"
    path.write_text(NESTED_YAML)
    contract = load_contract(path)
    levels = contract.fields[2]
    assert (levels.expected_type, levels.min_items, levels.max_items) == (list, 1, 20)
    assert levels.items is not None and levels.items.fields is not None
    tags = levels.items.fields[1]
    assert tags.items is not None and tags.items.allowed == ("a", "b")
    assert [r.name for r in contract.rules] == ["crossed"]


def test_contract_file_names_a_nested_key_problem_by_its_path(tmp_path: Path) -> None:
    """A typo inside an item's field is reported at fields[2].items.fields[0]."""
    path = tmp_path / "c.yaml"
    path.write_text(NESTED_YAML.replace("{name: price, type: float", "{name: price, type: flot"))
    with pytest.raises(ContractFileError, match=r"fields\[2\]\.items\.fields\[0\]\.type"):
        load_contract(path)


def test_contract_file_items_take_no_name(tmp_path: Path) -> None:
    """items is a spec without a name: a name key is an unknown key there."""
    path = tmp_path / "c.yaml"
    path.write_text(
        NESTED_YAML.replace(
            "      type: object\n      fields:", "      name: x\n      type: object\n      fields:"
        )
    )
    with pytest.raises(ContractFileError, match=r"fields\[2\]\.items.*unknown key\(s\) name"):
        load_contract(path)


def test_contract_file_too_deep_is_refused(tmp_path: Path) -> None:
    """A file nesting arrays beyond the limit gets the depth problem, not a crash."""
    inner = "{type: int}"
    for _ in range(MAX_NESTING_DEPTH + 3):
        inner = f"{{type: array, items: {inner}}}"
    path = tmp_path / "c.yaml"
    path.write_text(f"name: d\nfields:\n  - {{name: a, type: array, items: {inner}}}\n")
    with pytest.raises(ContractFileError, match=f"nest at most {MAX_NESTING_DEPTH} deep"):
        load_contract(path)


def test_in_list_still_parses_next_to_the_array_refusal() -> None:
    """'[' after 'in' opens a list; after a field it is indexing and is refused."""
    assert RuleSpec.of("r", "book.bid in [1, 2] or book.ask not in [3]").fields == {
        "book.bid",
        "book.ask",
    }
    with pytest.raises(RuleError, match="rules cannot index arrays"):
        RuleSpec.of("r", "book.bid in [1] and levels [0] > 0")


def test_or_and_not_on_nested_paths_are_accepted() -> None:
    """'or' and 'not' are rules now, on nested paths too (no 'write two rules' refusal)."""
    rule = RuleSpec.of("r", "not (book.bid > book.ask) or book.bid == 0")
    assert problems_of(BOOK, rules=(rule,)) == []


def test_nested_str_fields_are_typed_by_path() -> None:
    """A nested str field compares with strings (text field) and never with a number."""
    side = FieldSpec("book", dict, fields=[FieldSpec("side", str), FieldSpec("bid", float)])
    types = rule_field_types(SchemaContract("c", [side]))
    rule = RuleSpec.of("r", "book.bid > 0", field_types=types, when="book.side == 'buy'")
    assert rule.text_fields == {"book.side"}
    with pytest.raises(RuleError, match=r"str field 'book\.side' at column 1 is compared with"):
        RuleSpec.of("r", "book.side == 1 or book.bid > 0", field_types=types)


def test_action_on_a_nested_field_is_refused() -> None:
    """Only a top-level field has an action (it covers every violation inside it)."""
    inner = FieldSpec("book", dict, fields=[FieldSpec("bid", float, action="flag")])
    assert any(
        "'book.bid': action applies to top-level fields only" in p for p in problems_of(inner)
    ), problems_of(inner)


def test_a_nested_when_rule_loads_from_a_file(tmp_path: Path) -> None:
    """A contract file with a when/check rule on object paths loads, its str path typed."""
    path = tmp_path / "c.yaml"
    path.write_text(
        "name: c\nfields:\n  - name: book\n    type: object\n    fields:\n"
        "      - {name: side, type: str}\n      - {name: bid, type: float}\n"
        "rules:\n  - name: buy_bid\n    when: \"book.side == 'buy'\"\n"
        '    check: "book.bid > 0 or book.bid == -1"\n'
    )
    (rule,) = load_contract(path).rules
    assert rule.text_fields == {"book.side"} and rule.fields == {"book.side", "book.bid"}
