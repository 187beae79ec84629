"""The pattern subset: what is accepted, what is refused at load, and what a pattern means."""

from __future__ import annotations

import re

import pytest

from stream_validator.contracts.pattern import compile_pattern, full_match_regex, pattern_problem

ACCEPTED = [
    "[A-Z0-9]{4}",
    r"[A-Z]{2}\d{1,3}(?:-[a-z.]{2})?",
    r"\w+",
    r"[^\s,]+",
    "buy|sell",
    "(ab)?c*?",
    r"\.\+\*\?\(\)\|\[\]\{\}\^\$\-\/\\",
    r"\x41\u00e9\t",
    "a{0,1000}",
    "[a-]",
]


@pytest.mark.parametrize("pattern", ACCEPTED)
def test_the_subset_is_accepted(pattern: str) -> None:
    """Literals, classes, groups, alternation, bounded and lazy quantifiers, the escapes."""
    assert pattern_problem(pattern) is None


@pytest.mark.parametrize(
    ("pattern", "needle"),
    [
        ("", "must not be empty"),
        ("x" * 1001, "at most 1000 characters"),
        ("^abc", "anchor '^'"),
        ("abc$", "anchor '$'"),
        (r"\Aabc", r"unsupported escape '\A'"),
        (r"a\b", r"unsupported escape '\b'"),
        (r"(a)\1", r"unsupported escape '\1'"),
        ("(?=a)a", "only (...) and (?:...) groups"),
        ("(?<!a)b", "only (...) and (?:...) groups"),
        ("(?P<n>a)", "only (...) and (?:...) groups"),
        ("(?>a)", "only (...) and (?:...) groups"),
        ("(?i)a", "only (...) and (?:...) groups"),
        ("(?#c)a", "only (...) and (?:...) groups"),
        ("a*+", "a quantifier cannot follow a quantifier"),
        ("a{2}+", "a quantifier cannot follow a quantifier"),
        ("a{", "a literal '{' must be written"),
        ("a{,3}", "a literal '{' must be written"),
        ("a{1001}", "repetition count 1001 is above 1000"),
        ("[[:alpha:]]", "no nested or POSIX classes"),
        ("[a&&b]", "set operation"),
        ("[a--b]", "set operation"),
        ("[]a]", r"write ']' inside a class"),
        (r"\N{DIGIT ONE}", r"unsupported escape '\N'"),
        (r"\p{L}", r"unsupported escape '\p'"),
        (r"\x4", "takes exactly 2 hex digits"),
        (r"\ud800", "surrogate"),
        ("(a+)+", "a repeated group may not hold"),
        ("(a|ab)*", "a repeated group may not hold"),
        ("(a{1,2}){2,5}", "a repeated group may not hold"),
        ("*a", "nothing to repeat"),
        ("(a", "missing ), unterminated subpattern at position 0"),
        ("a)", "unbalanced parenthesis"),
        ("[z-a]", "bad character range z-a at position 1"),
        ("abc\\", "lone backslash"),
    ],
)
def test_constructs_outside_the_subset_are_refused(pattern: str, needle: str) -> None:
    """Each refused construct gets a problem naming it (and its position)."""
    problem = pattern_problem(pattern)
    assert problem is not None and needle in problem


def test_a_fixed_repeat_inside_a_repeated_group_is_accepted() -> None:
    """Only a varying quantifier under a repeated group is refused: ([A-Z]{2}-)* is fine."""
    assert pattern_problem("([A-Z]{2}-)*") is None
    assert pattern_problem("(a+)?") is None


@pytest.mark.parametrize(
    ("pattern", "value", "matches"),
    [
        ("ab", "ab", True),
        ("ab", "abab", False),
        ("ab", "ab\n", False),
        ("ab", "xab", False),
        ("a|bc", "bc", True),
        ("a|bc", "abc", False),
        (r"\d+", "123", True),
        (r"\d+", "\u0661\u0662", False),
        (r"\w+", "caf\u00e9", False),
        (r"\s", "\u00a0", False),
        (r"\D", "\u0661", True),
        (".", "\n", False),
        (".", "\U0001f600", True),
    ],
)
def test_a_pattern_matches_the_whole_value_with_ascii_shorthands(
    pattern: str, value: str, matches: bool
) -> None:
    """Full-match semantics; \\d \\w \\s are ASCII; '.' is any character but a newline."""
    assert (compile_pattern(pattern).match(value) is not None) is matches
    # msgspec searches: the full-match source makes search agree.
    assert (re.search(full_match_regex(pattern), value) is not None) is matches
