"""The ``pattern`` of a str field: one regular-expression syntax, the same in every engine.

A pattern must match the *whole* value (``re.fullmatch``; no ``^``/``$`` needed or allowed).
The syntax is a subset that Python's ``re`` (the rules), msgspec's ``Meta(pattern=...)`` (the
fast path, Python's ``re`` again) and Rust's ``regex`` crate read alike:

* literal characters; ``.`` (any character but a newline); ``|``; groups ``(...)`` and
  ``(?:...)``;
* the quantifiers ``* + ?`` and ``{m}``, ``{m,}``, ``{m,n}`` (m, n at most ``MAX_REPEAT``),
  each optionally lazy (``*?``); a literal ``{`` is written ``\\{``;
* classes ``[...]``/``[^...]`` with ranges (``a-z``) and the escapes below; a ``[`` or
  ``]`` inside a class is escaped, and ``&&``, ``--``, ``~~``, ``||`` are not written there;
* escapes: ``\\d \\D \\w \\W \\s \\S``, ASCII only (``[0-9]``, ``[A-Za-z0-9_]``,
  ``[ \\t\\n\\r\\f\\v]`` and their complements), ``\\t \\n \\r \\f \\v``, ``\\xHH``,
  ``\\uHHHH`` (not a surrogate) and a backslash before one of ``ESCAPABLE``.

Refused at load, with the position: anchors (``^ $ \\A \\Z \\b``), backreferences,
lookaround, named or atomic groups, inline flags and comments (``(?...)`` other than
``(?:``), possessive quantifiers (``a*+``), other escapes. Python's engine backtracks, so
the classic exponential forms are refused too: a group repeated by ``*``, ``+``, ``{m,}``
or ``{m,n}`` (m < n) may hold neither ``|`` nor a quantifier other than ``{m}``.
"""

from __future__ import annotations

import re
from typing import Final

MAX_PATTERN_CHARS: Final = 1000
MAX_REPEAT: Final = 1000
#: Characters a backslash may precede to stand for themselves.
ESCAPABLE: Final = "\\.+*?()|[]{}^$-/"
_SHORTHANDS: Final = "dDwWsS"
_CONTROLS: Final = "tnrfv"
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_BOUNDS: Final = re.compile(r"\{(\d+)(,(\d*))?\}")
_SET_OPERATORS: Final = ("&&", "--", "~~", "||")


class PatternError(ValueError):
    """The pattern is outside the documented subset; the message names the position."""


def full_match_regex(pattern: str) -> str:
    """The Python ``re`` source that matches exactly what ``pattern`` means: ASCII
    shorthands, whole value (``search`` and ``fullmatch`` then agree, as msgspec searches)."""
    return "(?a)\\A(?:" + pattern + ")\\Z"


def compile_pattern(pattern: str) -> re.Pattern[str]:
    """The compiled full-match regex of a pattern ``pattern_problem`` accepted."""
    return re.compile(full_match_regex(pattern))


def pattern_problem(pattern: object) -> str | None:
    """Why ``pattern`` is not in the subset (None when it is)."""
    if not isinstance(pattern, str):
        return f"pattern must be a string, got {type(pattern).__name__}"
    if not pattern:
        return "pattern must not be empty (max_length: 0 admits only the empty string)"
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"pattern must be at most {MAX_PATTERN_CHARS} characters, got {len(pattern)}"
    try:
        _Scanner(pattern).scan()
        re.compile(pattern, re.ASCII)  # its own positions in an error
        re.compile(full_match_regex(pattern))
    except PatternError as exc:
        return str(exc)
    except re.error as exc:
        return f"invalid pattern: {exc.msg}" + (
            "" if exc.pos is None else f" at position {exc.pos}"
        )
    return None


class _Group:
    __slots__ = ("alternation", "varying")

    def __init__(self) -> None:
        self.alternation = False  # holds a top-level or nested '|'
        self.varying = False  # holds a quantifier other than {m}


class _Scanner:
    """One pass over the pattern; raises PatternError at the first construct outside it."""

    def __init__(self, pattern: str) -> None:
        self.text = pattern
        self.pos = 0
        self.groups = [_Group()]
        self.atom: _Group | bool | None = None  # last atom: a group, True (other), None

    def fail(self, what: str, at: int | None = None) -> PatternError:
        return PatternError(f"{what} at position {self.pos if at is None else at}")

    def scan(self) -> None:
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            start = self.pos
            if char == "\\":
                self.escape(in_class=False)
                self.atom = True
            elif char == "[":
                self.char_class()
                self.atom = True
            elif char == "(":
                if text.startswith("(?", self.pos) and not text.startswith("(?:", self.pos):
                    raise self.fail(
                        "only (...) and (?:...) groups are allowed (no lookaround, named or"
                        " atomic groups, flags or comments)"
                    )
                self.pos += 3 if text.startswith("(?:", self.pos) else 1
                self.groups.append(_Group())
                self.atom = None
            elif char == ")":
                if len(self.groups) == 1:
                    raise self.fail("unbalanced parenthesis")
                inner = self.groups.pop()
                outer = self.groups[-1]
                outer.alternation |= inner.alternation
                outer.varying |= inner.varying
                self.atom = inner
                self.pos += 1
            elif char == "|":
                self.groups[-1].alternation = True
                self.atom = None
                self.pos += 1
            elif char in "^$":
                raise self.fail(
                    f"anchor {char!r}: a pattern always matches the whole value, drop it"
                )
            elif char in "*+?{":
                self.quantifier()
            else:
                self.atom = True
                self.pos += 1
            if self.pos == start:  # defence: every branch moves on
                raise self.fail("cannot read the pattern")

    def quantifier(self) -> None:
        text = self.text
        at = self.pos
        char = text[at]
        if char == "{":
            bounds = _BOUNDS.match(text, at)
            if bounds is None:
                raise self.fail("a literal '{' must be written '\\{'")
            low = int(bounds.group(1))
            high = low if bounds.group(2) is None else None
            if bounds.group(3):
                high = int(bounds.group(3))
            for count in (low, high):
                if count is not None and count > MAX_REPEAT:
                    raise self.fail(f"repetition count {count} is above {MAX_REPEAT}")
            self.pos = bounds.end()
        else:
            low, high = (0, None) if char == "*" else (1, None) if char == "+" else (0, 1)
            self.pos += 1
        if self.atom is None:
            raise self.fail("nothing to repeat", at)
        if text.startswith("?", self.pos):
            self.pos += 1  # lazy: the same verdict
        if self.pos < len(text) and text[self.pos] in "*+?{":
            raise self.fail("a quantifier cannot follow a quantifier (no possessive forms)")
        varying = high is None or high != low
        many = high is None or high > 1
        atom = self.atom
        if varying and many and isinstance(atom, _Group) and (atom.alternation or atom.varying):
            raise self.fail(
                "a repeated group may not hold '|' or a varying quantifier (exponential"
                " backtracking in Python's engine)",
                at,
            )
        if varying:
            self.groups[-1].varying = True
        self.atom = None  # a quantified atom cannot be quantified again

    def escape(self, *, in_class: bool) -> None:
        text = self.text
        at = self.pos
        if at + 1 >= len(text):
            raise self.fail("the pattern ends in a lone backslash")
        char = text[at + 1]
        if char in _SHORTHANDS or char in _CONTROLS or char in ESCAPABLE:
            self.pos = at + 2
            return
        digits = 2 if char == "x" else 4 if char == "u" else 0
        hex_digits = text[at + 2 : at + 2 + digits]
        if digits and len(hex_digits) == digits and set(hex_digits) <= _HEX:
            if 0xD800 <= int(hex_digits, 16) <= 0xDFFF:
                raise self.fail(f"\\u{hex_digits} is a surrogate, not a character")
            self.pos = at + 2 + digits
            return
        if digits:
            raise self.fail(f"\\{char} takes exactly {digits} hex digits")
        where = "inside a class " if in_class else ""
        raise self.fail(
            f"unsupported escape '\\{char}' {where}(allowed: \\d \\D \\w \\W \\s \\S \\t \\n"
            f" \\r \\f \\v \\xHH \\uHHHH and a backslash before one of {ESCAPABLE})"
        )

    def char_class(self) -> None:
        text = self.text
        start = self.pos
        self.pos += 1
        if text.startswith("^", self.pos):
            self.pos += 1
        first = self.pos
        while True:
            if self.pos >= len(text):
                raise self.fail("unterminated character class", start)
            char = text[self.pos]
            if char == "]":
                if self.pos == first:
                    raise self.fail("write ']' inside a class as '\\]'")
                self.pos += 1
                return
            if char == "[":
                raise self.fail("write '[' inside a class as '\\[' (no nested or POSIX classes)")
            if text.startswith(_SET_OPERATORS, self.pos):
                raise self.fail(
                    f"{text[self.pos : self.pos + 2]!r} inside a class (a set operation in"
                    " other engines): escape one of them"
                )
            if char == "\\":
                self.escape(in_class=True)
            else:
                self.pos += 1
