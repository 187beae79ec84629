"""Label values for the metrics: checks for configured values, a budget for payload-derived ones.

Pure (no prometheus_client): ``metrics.py`` applies these before anything is recorded.
``bounded_names``/``bounded_counts`` apply the same idea to batch events, logs and
/status: at most ``MAX_EVENT_NAMES`` payload-derived names, each at most
``MAX_FIELD_CHARS`` printable characters, plus the number left out.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TypeGuard

RECORD_LABEL = "_record"
OVERFLOW_LABEL = "__overflow__"
RESERVED_LABELS = frozenset({RECORD_LABEL, OVERFLOW_LABEL})
MAX_FIELD_CHARS = 128
MAX_CONFIG_CHARS = 249  # Kafka's limit on topic names; plenty for routes and contracts
MAX_EVENT_NAMES = 50
# Distinct payload-derived names a long-lived summary (offline validate, replay) keeps in memory.
MAX_SUMMARY_NAMES = 1000


class LabelBudget:
    """Per contract, the first ``cap`` distinct safe names are labels; the rest overflow."""

    __slots__ = ("_admitted", "_cap", "_overflowed")

    def __init__(self, cap: int) -> None:
        self._cap = cap
        self._admitted: dict[str, set[str]] = {}
        self._overflowed: set[str] = set()

    def label(self, contract: str, name: str) -> tuple[str, bool]:
        """The label for ``name`` and whether this is the label's first use."""
        admitted = self._admitted.setdefault(contract, set())
        if name in admitted:
            return name, False
        if len(admitted) < self._cap and is_safe_field_name(name):
            admitted.add(name)
            return name, True
        first = contract not in self._overflowed
        self._overflowed.add(contract)
        return OVERFLOW_LABEL, first


def is_number(value: object) -> TypeGuard[float]:
    """A finite int or float (not a bool)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def is_count(value: object) -> TypeGuard[int]:
    """An int >= 0 (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def is_config_label(value: object) -> bool:
    """A printable, non-empty label value of bounded length."""
    return isinstance(value, str) and 0 < len(value) <= MAX_CONFIG_CHARS and value.isprintable()


def is_safe_field_name(name: object) -> bool:
    """A field name that may become a label of its own."""
    return (
        isinstance(name, str)
        and 0 < len(name) <= MAX_FIELD_CHARS
        and name.isprintable()
        and name not in RESERVED_LABELS
    )


def config_label(what: str, value: str) -> str:
    """The value, or ValueError when it cannot be a configured label."""
    if not is_config_label(value):
        raise ValueError(
            f"{what} label must be a printable string of 1-{MAX_CONFIG_CHARS} chars, got {value!r}"
        )
    return value


def choice(what: str, value: str, allowed: frozenset[str]) -> str:
    """The value, or ValueError when it is not one of ``allowed``."""
    if value not in allowed:
        raise ValueError(f"{what} must be one of {sorted(allowed)}, got {value!r}")
    return value


def short_name(name: str) -> str:
    """A payload-derived name cut to ``MAX_FIELD_CHARS`` printable characters."""
    if len(name) > MAX_FIELD_CHARS:
        name = name[: MAX_FIELD_CHARS - 3] + "..."
    return name if name.isprintable() else "".join(c if c.isprintable() else "?" for c in name)


def bounded_names(names: Iterable[str], cap: int = MAX_EVENT_NAMES) -> tuple[list[str], int]:
    """The first ``cap`` names in sorted order (shortened) and how many others were left out."""
    ordered = sorted(set(names))
    kept = sorted({short_name(n) for n in ordered[:cap]})
    return kept, len(ordered) - min(len(ordered), cap)


def bounded_counts(
    counts: Mapping[str, int], cap: int = MAX_EVENT_NAMES
) -> tuple[dict[str, int], int]:
    """The ``cap`` names with the highest counts (shortened) and how many names were left out."""
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    kept: Counter[str] = Counter()
    for name, n in ranked[:cap]:
        kept[short_name(name)] += n
    return dict(kept), len(ranked) - min(len(ranked), cap)


def count_bounded(
    counts: Counter[str], name: str, n: int = 1, cap: int = MAX_SUMMARY_NAMES
) -> None:
    """Add ``n`` to ``name``, or to ``OVERFLOW_LABEL`` once ``cap`` names are already counted."""
    if name in counts or len(counts) < cap:
        counts[name] += n
    else:
        counts[OVERFLOW_LABEL] += n
