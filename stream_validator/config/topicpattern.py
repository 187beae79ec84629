"""Topic names and ``source_pattern`` regexes: one matching rule for subscription and routing.

A pattern always matches the WHOLE topic name. Routing uses Python's ``re.fullmatch``;
the subscription hands librdkafka ``^(pattern)$``, which librdkafka evaluates with POSIX
extended regexes (glibc ``regcomp``). The two engines read some syntax differently
(``\\d``, ``(?:...)``, a backslash inside ``[...]``), so a pattern is limited to the part
they read alike:

* topic characters ``A-Z a-z 0-9 _ -`` and ``\\.`` (a literal dot), any character ``.``;
* classes ``[...]`` / ``[^...]`` of topic characters, ``.`` and ranges (no backslash);
* groups ``( )``, alternation ``|``, quantifiers ``* + ?`` and ``{m}``, ``{m,}``, ``{m,n}``;
* an optional leading ``^`` and trailing ``$`` (implied anyway).

Two pattern routes must provably never match one topic: their fixed prefixes (the
literal text every match starts with) must not be prefixes of one another.
"""

from __future__ import annotations

import re

from stream_validator.errors import PatternError

TOPIC_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_LEGAL_TOPIC = re.compile(r"[A-Za-z0-9._-]{1,249}")
_INTERVAL = re.compile(r"\{\d+(,\d*)?\}")
_QUANTIFIERS = "*+?{"


def is_legal_topic(name: str) -> bool:
    """A name Kafka accepts as a topic (1-249 of ``A-Za-z0-9._-``)."""
    return _LEGAL_TOPIC.fullmatch(name) is not None


def core(pattern: str) -> str:
    """The pattern without its optional ``^``/``$`` anchors."""
    if pattern.startswith("^"):
        pattern = pattern[1:]
    if pattern.endswith("$") and not pattern.endswith("\\$"):
        pattern = pattern[:-1]
    return pattern


def subscription(pattern: str) -> str:
    """The librdkafka subscription entry that matches exactly what ``full_match`` does."""
    return f"^({core(pattern)})$"


def full_match(pattern: str, topic: str) -> bool:
    """True when the pattern matches the whole topic name."""
    return re.fullmatch(core(pattern), topic) is not None


def check_pattern(pattern: str) -> None:
    """PatternError naming the first construct outside the portable syntax (or a bad regex)."""
    body = core(pattern)
    if not body:
        raise PatternError("is empty")
    for _ in _tokens(body):
        pass
    try:
        re.compile(body)
    except re.error as exc:
        raise PatternError(f"is not a regex: {exc}") from None


def fixed_prefix(pattern: str) -> str:
    """The literal text every topic the pattern matches starts with (may be empty)."""
    body = core(pattern)
    tokens = list(_tokens(body))
    if _has_top_level_alternation(tokens):
        return ""
    prefix: list[str] = []
    for index, token in enumerate(tokens):
        literal = token[1] if token == "\\." else token
        if len(literal) != 1 or literal not in TOPIC_CHARS or token == ".":
            break
        following = tokens[index + 1][0] if index + 1 < len(tokens) else ""
        if following in "*?{" and following:
            break  # the character may be absent
        prefix.append(literal)
        if following == "+":
            break
    return "".join(prefix)


def may_overlap(first: str, second: str) -> bool:
    """False only when no topic can match both patterns (their fixed prefixes diverge)."""
    a, b = fixed_prefix(first), fixed_prefix(second)
    return a.startswith(b) or b.startswith(a)


def clash(
    first: tuple[tuple[str, ...], str | None], second: tuple[tuple[str, ...], str | None]
) -> str | None:
    """What two routes' sources (topics, pattern) could both match, or None when disjoint."""
    for (topics, _), (other_topics, other_pattern) in ((first, second), (second, first)):
        for topic in topics:
            if topic in other_topics or (
                other_pattern is not None and full_match(other_pattern, topic)
            ):
                return f"topic {topic!r}"
    a, b = first[1], second[1]
    if a is not None and b is not None and may_overlap(a, b):
        return (
            f"one topic (patterns {a!r} and {b!r}: give them fixed prefixes"
            " that are not prefixes of one another)"
        )
    return None


def _has_top_level_alternation(tokens: list[str]) -> bool:
    depth = 0
    for token in tokens:
        if token == "(":
            depth += 1
        elif token == ")":
            depth -= 1
        elif token == "|" and depth == 0:
            return True
    return False


def _tokens(body: str) -> list[str]:
    """The pattern split into tokens; PatternError on anything outside the portable syntax."""
    tokens: list[str] = []
    i = 0
    while i < len(body):
        char = body[i]
        if char == "\\":
            if body[i + 1 : i + 2] != ".":
                raise PatternError(
                    f"uses {body[i : i + 2]!r} at position {i}: the only escape allowed is"
                    " '\\.' (librdkafka's POSIX regexes read other escapes differently)"
                )
            tokens.append("\\.")
            i += 2
        elif char == "[":
            end = body.find("]", i + 1)
            inner = body[i + 1 : end] if end > i + 1 else ""
            members = inner[1:] if inner.startswith("^") else inner
            if not members or not set(members) <= TOPIC_CHARS:
                raise PatternError(
                    f"has the class starting at position {i} with characters other than"
                    " A-Z a-z 0-9 . _ - (or no closing ']')"
                )
            tokens.append(body[i : end + 1])
            i = end + 1
        elif char == "{":
            interval = _INTERVAL.match(body, i)
            if interval is None:
                raise PatternError(f"has '{{' at position {i} that is not {{m}}, {{m,}} or {{m,n}}")
            tokens.append(interval.group())
            i = interval.end()
        elif char == "?" and tokens and tokens[-1] == "(":
            raise PatternError(f"uses '(?' at position {i - 1}: extension groups are Python-only")
        elif char in TOPIC_CHARS or char in "()|*+?":
            tokens.append(char)
            i += 1
        else:
            raise PatternError(f"uses {char!r} at position {i}, which is not allowed here")
    return tokens
