"""A field's value checks beyond type and bounds: ``allowed``, ``pattern``, lengths. PURE.

Built once per field that declares any of them (``ValueCheck.of``). ``accepts`` is the
clean test the compiled inspectors call on a value of the right type; ``violation`` says
what is wrong, one violation per field, checked in this order: ``too_short``, ``too_long``
(code points), ``pattern_mismatch`` (the whole value, ``contracts.pattern``),
``not_allowed``. The length checks come first, so ``max_length`` bounds the text the
pattern runs on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from stream_validator.contracts.model import FieldSpec
from stream_validator.contracts.pattern import compile_pattern
from stream_validator.verify.render import show
from stream_validator.verify.report import Violation, ViolationKind

#: Allowed values named in a ``not_allowed`` message; the rest are counted.
_SHOWN_VALUES: Final = 5
#: A pattern's verdicts are remembered for up to this many distinct short values: a call
#: into ``re`` costs far more than a dict lookup, and a feed repeats its venues and codes.
MEMO_VALUES: Final = 4096
MEMO_CHARS: Final = 64


class ValueCheck:
    """The compiled ``allowed``/``pattern``/length checks of one field."""

    __slots__ = (
        "accepts",
        "allowed",
        "max_length",
        "memo",
        "min_length",
        "pattern",
        "regex",
        "shown",
    )

    def __init__(self, spec: FieldSpec) -> None:
        self.allowed = None if spec.allowed is None else frozenset(spec.allowed)
        self.pattern = spec.pattern
        self.regex = None if spec.pattern is None else compile_pattern(spec.pattern)
        self.min_length = spec.min_length
        self.max_length = spec.max_length
        listed = spec.allowed or ()
        shown = ", ".join(show(value) for value in listed[:_SHOWN_VALUES])
        if len(listed) > _SHOWN_VALUES:
            shown += f", ... ({len(listed)} in all)"
        self.shown = shown
        self.memo: dict[str, bool] = {}  # the pattern's verdicts on short values
        self.accepts: Callable[[object], bool] = self._accepts_function()

    @classmethod
    def of(cls, spec: FieldSpec) -> ValueCheck | None:
        """The field's value checks; None when it declares none."""
        return cls(spec) if spec.has_text_checks else None

    def _accepts_function(self) -> Callable[[object], bool]:
        allowed = self.allowed
        if allowed is not None:  # the contract check keeps every allowed value passing the rest
            return allowed.__contains__
        regex, lo, hi = self.regex, self.min_length, self.max_length
        low = 0 if lo is None else lo
        if regex is None:

            def fits(value: Any) -> bool:
                size = len(value)
                return size >= low and (hi is None or size <= hi)

            return fits
        match = regex.match  # anchored at both ends
        memo = self.memo
        remembered = memo.get

        def matches(value: Any) -> bool:
            verdict = remembered(value)
            if verdict is None:
                size = len(value)
                verdict = size >= low and (hi is None or size <= hi) and match(value) is not None
                if size <= MEMO_CHARS and len(memo) < MEMO_VALUES:
                    memo[value] = verdict
            return verdict

        return matches

    def violation(self, name: str, value: object) -> Violation | None:
        """What is wrong with a value of the field's type (None: nothing)."""
        if isinstance(value, str):
            size = len(value)
            if self.min_length is not None and size < self.min_length:
                return Violation(
                    name,
                    ViolationKind.TOO_SHORT,
                    f"field {name!r}: {show(value)} has {size} characters,"
                    f" fewer than min_length {self.min_length}",
                )
            if self.max_length is not None and size > self.max_length:
                return Violation(
                    name,
                    ViolationKind.TOO_LONG,
                    f"field {name!r}: {show(value)} has {size} characters,"
                    f" more than max_length {self.max_length}",
                )
            if self.regex is not None and self.regex.match(value) is None:
                return Violation(
                    name,
                    ViolationKind.PATTERN_MISMATCH,
                    f"field {name!r}: {show(value)} does not match pattern {show(self.pattern)}",
                )
        if self.allowed is not None and value not in self.allowed:
            return Violation(
                name,
                ViolationKind.NOT_ALLOWED,
                f"field {name!r}: {show(value)} is not one of the allowed values ({self.shown})",
            )
        return None
