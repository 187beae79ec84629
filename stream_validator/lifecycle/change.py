"""One difference between two contract versions, and what it does to records. PURE.

A ``Change`` is classified by what it does to records that passed the OLD contract
(``Effect``): *tightening* (some may now be quarantined), *loosening* (records quarantined
before may now pass, none newly quarantined) or *neutral* (no record changes verdict:
a description, a version, a check of a field or rule that only flags). A change that cannot
be proven one way (a pattern or a rule's check rewritten) counts as tightening.

``field``/``kinds``/``rule`` say which violations the change causes (tightening) or
removes (loosening), so a sample's flipped records can be put down to it: a violation
matches when its rule is the change's rule, or its field's metric path is the change's
``field`` (or below it, with ``below``) and its kind is one of ``kinds`` (None: any kind;
``field`` ``"*"``: any field).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from stream_validator.contracts.model import metric_path
from stream_validator.verify.report import Violation


class Effect(StrEnum):
    """What a change does to the records that passed the old contract."""

    TIGHTENING = "tightening"
    LOOSENING = "loosening"
    NEUTRAL = "neutral"


ANY_FIELD = "*"


@dataclass(frozen=True, slots=True)
class Change:
    """One difference: where (``subject``: a field path, ``rule NAME``, a contract key),
    ``what`` (a stable code such as ``min_value_raised``), its effect, the old and new
    values, a one-line explanation, and the violations it is about (see the module doc)."""

    subject: str
    what: str
    effect: Effect
    old: Any
    new: Any
    detail: str
    field: str | None = None
    kinds: frozenset[str] | None = None
    rule: str | None = None
    below: bool = False

    def explains(self, violation: Violation) -> bool:
        """True when this change is a cause (tightening) or a cure (loosening) of it."""
        if self.rule is not None:
            return violation.rule == self.rule
        if self.field is None:
            return False
        if self.kinds is not None and str(violation.kind) not in self.kinds:
            return False
        if self.field == ANY_FIELD:
            return True
        if violation.field is None:
            return False
        path = metric_path(violation.field)
        if path == self.field:
            return True
        return self.below and (
            path.startswith(self.field + ".") or path.startswith(self.field + "[]")
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (values as they are, types by name)."""
        return {
            "subject": self.subject,
            "change": self.what,
            "effect": str(self.effect),
            "old": _plain(self.old),
            "new": _plain(self.new),
            "detail": self.detail,
        }


def _plain(value: Any) -> Any:
    if isinstance(value, type):
        return value.__name__
    if isinstance(value, frozenset | set | tuple):
        return sorted(value, key=repr)
    return value


def kinds(*names: str) -> frozenset[str]:
    """A closed set of violation kinds."""
    return frozenset(names)


def count_effects(changes: Iterable[Change]) -> dict[str, int]:
    """Changes per effect, every effect listed."""
    counts = dict.fromkeys((str(effect) for effect in Effect), 0)
    for change in changes:
        counts[str(change.effect)] += 1
    return counts
