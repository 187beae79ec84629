"""source_pattern: one full-match rule for the subscription (librdkafka) and routing (Python)."""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

import pytest

from stream_validator.config.topicpattern import (
    check_pattern,
    fixed_prefix,
    full_match,
    may_overlap,
    subscription,
)
from stream_validator.errors import PatternError

PATTERNS = [
    r"^md\.books\.raw\..+$",
    r"md\.ticks\..*",
    r"ticks|books",
    r"md\.(ticks|bars)\.v[0-9]{1,2}",
    r"a[^.]*b?",
    r"x_-y+",
]
TOPICS = [
    "md.books.raw.xnas",
    "md.books.raw.",
    "xmd.books.raw.a",
    "md.ticks.",
    "md.ticks.a.b",
    "ticks",
    "ticks.books",
    "books",
    "md.bars.v12",
    "md.bars.v123",
    "abb",
    "a.b",
    "x_-yyy",
    "x_-",
]
REG_EXTENDED, REG_NOSUB = 1, 8  # glibc <regex.h>


def posix_match(pattern: str, topic: str) -> bool:
    """librdkafka's test: regcomp(REG_EXTENDED | REG_NOSUB) then regexec, with glibc."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    compiled = ctypes.create_string_buffer(1024)  # larger than any regex_t
    assert libc.regcomp(compiled, pattern.encode(), REG_EXTENDED | REG_NOSUB) == 0
    try:
        return bool(libc.regexec(compiled, topic.encode(), 0, None, 0) == 0)
    finally:
        libc.regfree(compiled)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc regcomp, as librdkafka")
@pytest.mark.parametrize("pattern", PATTERNS)
def test_subscription_matches_exactly_what_routing_matches(pattern: str) -> None:
    """For every topic, librdkafka's regex on the subscription agrees with the full match."""
    check_pattern(pattern)
    for topic in TOPICS:
        assert posix_match(subscription(pattern), topic) == full_match(pattern, topic), topic


@pytest.mark.parametrize(
    ("pattern", "needle"),
    [
        (r"md\.\d+", "only escape allowed"),
        (r"(?:md)\..*", "extension groups"),
        (r"md[\.]x", "class starting at position 2"),
        (r"md x", "' ' at position 2"),
        (r"md{", "not {m}"),
        (r"md\.(", "not a regex"),
        ("^$", "is empty"),
    ],
)
def test_non_portable_patterns_are_refused(pattern: str, needle: str) -> None:
    """Syntax the two regex engines read differently is refused, saying where."""
    with pytest.raises(PatternError, match=needle.replace("{", r"\{").replace("(", r"\(")):
        check_pattern(pattern)


@pytest.mark.parametrize(
    ("pattern", "prefix"),
    [
        (r"^md\.books\.raw\..+$", "md.books.raw."),
        (r"ab*c", "a"),
        (r"ab+c", "ab"),
        (r"ab?", "a"),
        (r"ab{0,2}", "a"),
        (r"abc|abd", ""),
        (r"ab(c|d)", "ab"),
        (r".x", ""),
        (r"[a-z]x", ""),
    ],
)
def test_fixed_prefix_is_what_every_match_starts_with(pattern: str, prefix: str) -> None:
    """The fixed prefix stops before anything optional, repeated or variable."""
    assert fixed_prefix(pattern) == prefix


def test_overlap_rule() -> None:
    """Patterns overlap unless one fixed prefix diverges from the other."""
    assert not may_overlap(r"md\.books\..*", r"md\.ticks\..*")
    assert may_overlap(r"md\..*", r"md\.ticks\..*")
    assert may_overlap(r"x|md\.books\..*", r"md\.ticks\..*")


@pytest.mark.parametrize(
    ("pattern", "needle"),
    [
        (r"md\.books\.raw\.([a-z]{1,300}){1,300}", "{1,300} at position 22: a repetition count"),
        (r"([a-z]{1,1000}){1,1000}", "{1,1000} at position 6: a repetition count"),
        (r"[a-z]{1,32768}", "at most 255"),
        (r"[a-z]{256}", "at most 255"),
        (r"[a-z]{256,}", "at most 255"),
        (r"([a-z]{1,16}){1,17}", "expands to 289 positions, more than 256"),
        (r"(((a{1,7}){1,7}){1,7})", "expands to 400 positions"),
        (r"md\.books\.raw\.[a-z0-9_-]{1,244}", "expands to 257 positions"),
        (r"([a-z]?){1,255}", "{1,255} at position 8 a part that can match the empty string"),
        (r"(a*b*){2}", "can match the empty string"),
        (r"(a|){1,3}", "can match the empty string"),
        (r"(a{0,3}){2,}", "can match the empty string"),
        ("(" * 9 + "a" + ")" * 9, "nests groups more than 8 deep (at position 8)"),
        ("(" * 5000 + "a" + ")" * 5000, "more than 8 deep"),  # was a RecursionError
    ],
)
def test_patterns_past_the_regex_engines_bounds_are_refused(pattern: str, needle: str) -> None:
    """Counts over 255, expansions over 256 positions, repeated empty parts and deep nesting."""
    with pytest.raises(PatternError) as info:
        check_pattern(pattern)
    assert needle in str(info.value)


@pytest.mark.parametrize(
    "pattern",
    [
        r"md\.books\.raw\.[a-z]{1,243}",  # 256 positions
        r"[a-z]{255}",
        r"[a-z]{1,255}",
        r"([a-z]{1,15}){1,15}",
        r"(((a{1,5}){1,5}){1,5})",
        "(" * 8 + "a" + ")" * 8,
        r"(a*)*",  # not counted: glibc builds one loop
        r"([a-z]+\.?){1,50}",
        r"md\.(ticks|bars)\.v[0-9]{0,2}",
    ],
)
def test_patterns_within_the_bounds_are_accepted(pattern: str) -> None:
    """Each bound is inclusive: 255, 256 positions, 8 groups deep."""
    check_pattern(pattern)
