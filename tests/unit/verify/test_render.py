"""Violation messages render payload values bounded and without recursion."""

from __future__ import annotations

from stream_validator.verify.render import SHOW_LIMIT, show, show_name


def test_show_of_deeply_nested_list_names_type_and_size() -> None:
    """A list nested 100,000 deep renders as its type and length, without RecursionError."""
    deep: list[object] = []
    for _ in range(100_000):
        deep = [deep]
    assert show(deep) == "<list of 1 items>"


def test_show_caps_long_strings_and_huge_ints() -> None:
    """Long strings are cut to SHOW_LIMIT characters; huge ints render as their size."""
    assert len(show("x" * 10_000)) == SHOW_LIMIT
    assert show(7**9999) == f"<int of {(7**9999).bit_length()} bits>"


def test_show_never_calls_a_custom_repr() -> None:
    """Objects of other types render as their type name only."""

    class Loud:
        def __repr__(self) -> str:
            raise AssertionError("repr called")

    assert show(Loud()) == "<Loud>"


def test_show_name_quotes_and_caps() -> None:
    """Key names render like repr, capped."""
    assert show_name("price") == "'price'"
    assert len(show_name("k" * 500)) == SHOW_LIMIT
