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

glibc's ``regcomp`` copies a part once per repetition it may take and librdkafka compiles
the pattern again for every topic of the cluster at each metadata refresh, so its cost is
bounded too (``([a-z]{1,300}){1,300}`` held 1 GB and 41 % of a core in an idle service,
``[a-z]{1,32768}`` is refused by glibc):

* every ``{m,n}`` count is at most ``MAX_REPEAT`` (255, POSIX ``RE_DUP_MAX``);
* the pattern expanded (each character, class, ``.`` and group one position, a ``{m,n}``
  part counted ``n`` times, ``{m,}`` ``m + 1`` times, nested counts multiplying) is at most
  ``MAX_POSITIONS`` (256; a topic name has at most 249 characters);
* a ``{m,n}`` never repeats a part that can match the empty string (``([a-z]?){1,255}``
  took glibc 1.2 s and 140 MB): glibc's cost grows with the cube of such copies;
* groups nest at most ``MAX_NESTING`` (8) deep (Python's parser recurses per level).

Two pattern routes must provably never match one topic: their fixed prefixes (the
literal text every match starts with) must not be prefixes of one another.
"""

from __future__ import annotations

import re
from typing import Final

from stream_validator.errors import PatternError

TOPIC_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")
_LEGAL_TOPIC = re.compile(r"[A-Za-z0-9._-]{1,249}")
_INTERVAL = re.compile(r"\{\d+(,\d*)?\}")
_QUANTIFIERS = "*+?{"
#: The largest ``{m,n}`` count (POSIX ``RE_DUP_MAX``; glibc allows 32767 at 16 GB and 51 s).
MAX_REPEAT: Final = 255
#: The most positions a pattern may expand to (see the module docstring).
MAX_POSITIONS: Final = 256
#: The deepest nesting of groups.
MAX_NESTING: Final = 8


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
    _check_cost(_tokens(body))
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


# A part of a pattern as the cost check sees it: (positions it expands to, matches empty).
_Part = tuple[int, bool]


def _check_cost(tokens: list[str]) -> None:
    """PatternError when glibc's regcomp would copy the pattern past the bounds above."""
    # One frame per open group: the alternatives closed so far and the current sequence.
    frames: list[tuple[list[_Part], list[_Part]]] = [([], [])]
    position = 0
    for token in tokens:
        alternatives, sequence = frames[-1]
        if token == "(":
            if len(frames) > MAX_NESTING:
                raise PatternError(
                    f"nests groups more than {MAX_NESTING} deep (at position {position})"
                )
            frames.append(([], []))
        elif token == ")" and len(frames) > 1:
            frames.pop()
            frames[-1][1].append(_group(alternatives, sequence))
        elif token == "|":
            alternatives.append(_sequence(sequence))
            sequence.clear()
        elif token[0] in _QUANTIFIERS and sequence:  # else: re.compile names the error
            sequence.append(_repeat(sequence.pop(), token, position))
        elif token != ")":
            sequence.append((1, False))
        position += len(token)
    while len(frames) > 1:  # an unclosed group: re.compile names the error
        alternatives, sequence = frames.pop()
        frames[-1][1].append(_group(alternatives, sequence))
    size = _group(*frames[0])[0] - 1  # the whole pattern is no group of its own
    if size > MAX_POSITIONS:
        raise PatternError(
            f"expands to {size:,} positions, more than {MAX_POSITIONS} (librdkafka's POSIX"
            " regex engine copies a part once per repetition, {m,n} n times, nested counts"
            " multiplying, and compiles it again for every topic at each metadata refresh)"
        )


def _sequence(parts: list[_Part]) -> _Part:
    return sum(size for size, _ in parts), all(empty for _, empty in parts)


def _group(alternatives: list[_Part], sequence: list[_Part]) -> _Part:
    options = [*alternatives, _sequence(sequence)]
    return 1 + sum(size for size, _ in options), any(empty for _, empty in options)


def _repeat(part: _Part, token: str, position: int) -> _Part:
    size, empty = part
    if token[0] != "{":
        return size, empty or token != "+"
    low, _, high = token[1:-1].partition(",")
    counts = [int(low)] + ([int(high)] if high else [])
    if max(counts) > MAX_REPEAT:
        raise PatternError(
            f"has {token[:20]} at position {position}: a repetition count may be at most"
            f" {MAX_REPEAT} (POSIX RE_DUP_MAX; a topic name has at most 249 characters)"
        )
    copies = int(high) if high else int(low) + (1 if "," in token else 0)
    if empty and copies > 1:
        raise PatternError(
            f"repeats with {token} at position {position} a part that can match the empty"
            " string, which librdkafka's POSIX regex engine takes seconds and hundreds of MB"
            " to compile: make the repeated part match at least one character"
        )
    return size * max(copies, 1), empty or int(low) == 0
