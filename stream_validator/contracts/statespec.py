"""SymbolStateSpec: the ``state`` section of a contract file, and its reader.

It lives in contracts (not verify) so the contract loader can build it; the tracker in
``stream_validator.state`` consumes it. Contract-file form::

    state:
      key: symbol              # required: a declared str field
      max_symbols: 100000      # LRU bound over (partition, symbol) keys
      sequence:                # optional
        field: seq             # a declared int field
        window: 0              # out-of-order tolerance, in sequence numbers
        resync_after: 3        # increasing step-backs in a row that mean "renumbered"; null: never
        action: flag           # flag (default) | quarantine
      event_time:              # optional
        field: event_ts        # a declared datetime, int or float (epoch seconds) field
        max_regression_s: 0.0
        action: flag
      frozen_quote:            # optional; at least one limit
        fields: [bid, ask]     # declared fields, compared as a tuple
        max_updates: 500
        max_seconds: 120       # of event time; needs event_time

What must hold for a spec from ``state_spec_from_mapping``: every field named is declared
with a fitting type, every limit is in range, and a check left out is None (disabled).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from stream_validator.contracts.rulespec import RuleAction
from stream_validator.errors import StateSpecError


@dataclass(frozen=True, slots=True)
class SymbolStateSpec:
    """What a contract's ``state`` section declares; a None field disables its check."""

    key_field: str = "symbol"
    sequence_field: str | None = "seq"
    sequence_window: int = 0
    resync_after: int | None = 3
    sequence_action: RuleAction = RuleAction.FLAG
    event_time_field: str | None = None
    max_time_regression_s: float = 0.0
    event_time_action: RuleAction = RuleAction.FLAG
    quote_fields: tuple[str, ...] = ()
    frozen_max_updates: int | None = None
    frozen_max_s: float | None = None
    max_symbols: int = 100_000
    max_holes: int = 1_000
    max_holes_total: int = 100_000

    def __post_init__(self) -> None:
        problems = _limit_problems(self)
        if problems:
            raise StateSpecError(problems)


#: The most ``max_holes`` allowed: a symbol's holes are a list, and filling or splitting a
#: hole moves the ranges after it (a few µs at this size, see bench/bench_state.py).
MAX_HOLES = 10_000


def _limit_problems(spec: SymbolStateSpec) -> list[str]:
    problems = []
    if spec.sequence_window < 0:
        problems.append("state.sequence.window must be >= 0")
    if spec.max_symbols < 1:
        problems.append("state.max_symbols must be >= 1")
    if not 1 <= spec.max_holes <= MAX_HOLES:
        problems.append(f"state.sequence.max_holes must be 1 .. {MAX_HOLES}")
    if spec.max_holes_total < 1:
        problems.append("state.sequence.max_holes_total must be >= 1")
    if spec.resync_after is not None and spec.resync_after < 1:
        problems.append("state.sequence.resync_after must be >= 1 (or null: never)")
    if spec.frozen_max_updates is not None and spec.frozen_max_updates < 1:
        problems.append("state.frozen_quote.max_updates must be >= 1")
    if spec.frozen_max_s is not None and spec.frozen_max_s < 0:
        problems.append("state.frozen_quote.max_seconds must be >= 0")
    if spec.max_time_regression_s < 0:
        problems.append("state.event_time.max_regression_s must be >= 0")
    return problems


_SECTIONS: dict[str, frozenset[str]] = {
    "state": frozenset({"key", "max_symbols", "sequence", "event_time", "frozen_quote"}),
    "state.sequence": frozenset(
        {"field", "window", "resync_after", "action", "max_holes", "max_holes_total"}
    ),
    "state.event_time": frozenset({"field", "max_regression_s", "action"}),
    "state.frozen_quote": frozenset({"fields", "max_updates", "max_seconds"}),
}
_TIME_TYPES = (datetime, int, float)
#: Numbers only: the quote is held per symbol, and a str field could hold a whole payload.
_QUOTE_TYPES = (int, float)


def state_spec_from_mapping(raw: object, field_types: Mapping[str, type]) -> SymbolStateSpec | None:
    """The spec of a ``state`` value (None when absent); StateSpecError lists every problem."""
    if raw is None:
        return None
    problems: list[str] = []
    top = _section(problems, "state", raw)
    key = top.get("key")
    _field(problems, "state.key", key, field_types, (str,))
    options: dict[str, Any] = {"key_field": key, "sequence_field": None}
    options["max_symbols"] = _count(problems, "state.max_symbols", top, "max_symbols", 100_000)
    if "sequence" in top:
        seq = _section(problems, "state.sequence", top["sequence"])
        options["sequence_field"] = seq.get("field")
        _field(problems, "state.sequence.field", seq.get("field"), field_types, (int,))
        options["sequence_window"] = _count(problems, "state.sequence.window", seq, "window", 0)
        resync = seq.get("resync_after", 3)
        if resync is not None:
            resync = _count(problems, "state.sequence.resync_after", seq, "resync_after", 3)
        options["resync_after"] = resync
        options["sequence_action"] = _action(problems, "state.sequence.action", seq)
        for key, default in (("max_holes", 1_000), ("max_holes_total", 100_000)):
            options[key] = _count(problems, f"state.sequence.{key}", seq, key, default)
    if "event_time" in top:
        ev = _section(problems, "state.event_time", top["event_time"])
        options["event_time_field"] = ev.get("field")
        _field(problems, "state.event_time.field", ev.get("field"), field_types, _TIME_TYPES)
        where = "state.event_time.max_regression_s"
        options["max_time_regression_s"] = _seconds(problems, where, ev.get("max_regression_s", 0))
        options["event_time_action"] = _action(problems, "state.event_time.action", ev)
    if "frozen_quote" in top:
        fq = _section(problems, "state.frozen_quote", top["frozen_quote"])
        fields = fq.get("fields")
        if not isinstance(fields, list) or not fields:
            problems.append("state.frozen_quote.fields must be a non-empty list of field names")
            fields = []
        for i, name in enumerate(fields):
            _field(problems, f"state.frozen_quote.fields[{i}]", name, field_types, _QUOTE_TYPES)
        options["quote_fields"] = tuple(str(name) for name in fields)
        if fq.get("max_updates") is not None:
            where = "state.frozen_quote.max_updates"
            options["frozen_max_updates"] = _count(problems, where, fq, "max_updates", 1)
        if fq.get("max_seconds") is not None:
            where = "state.frozen_quote.max_seconds"
            options["frozen_max_s"] = _seconds(problems, where, fq["max_seconds"])
            if "event_time" not in top:
                problems.append(f"{where} needs state.event_time (times come from records)")
        if fq.get("max_updates") is None and fq.get("max_seconds") is None:
            problems.append("state.frozen_quote needs max_updates or max_seconds")
    if problems:
        raise StateSpecError(problems)
    return SymbolStateSpec(**options)


def state_field_problems(spec: object, field_types: Mapping[str, type]) -> list[str]:
    """Every field a built spec names that the contract does not declare with a fitting type.

    ``state_spec_from_mapping`` checks the same while reading a file; this catches a
    SymbolStateSpec built in code (``contract_problems`` calls it).
    """
    if not isinstance(spec, SymbolStateSpec):
        return [f"state must be a SymbolStateSpec, got {type(spec).__name__}"]
    problems: list[str] = []
    _field(problems, "state.key", spec.key_field, field_types, (str,))
    if spec.sequence_field is not None:
        _field(problems, "state.sequence.field", spec.sequence_field, field_types, (int,))
    if spec.event_time_field is not None:
        where = "state.event_time.field"
        _field(problems, where, spec.event_time_field, field_types, _TIME_TYPES)
    for i, name in enumerate(spec.quote_fields):
        _field(problems, f"state.frozen_quote.fields[{i}]", name, field_types, _QUOTE_TYPES)
    if spec.frozen_max_s is not None and spec.event_time_field is None:
        problems.append("state.frozen_quote.max_seconds needs state.event_time")
    return problems


def _section(problems: list[str], where: str, raw: object) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        problems.append(f"{where} must be a mapping")
        return {}
    unknown = sorted(str(key) for key in raw if key not in _SECTIONS[where])
    if unknown:
        allowed = ", ".join(sorted(_SECTIONS[where]))
        problems.append(f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {allowed})")
    return raw


def _field(
    problems: list[str],
    where: str,
    name: object,
    field_types: Mapping[str, type],
    allowed: tuple[type, ...] | None,
) -> None:
    if not isinstance(name, str) or name not in field_types:
        problems.append(f"{where} must name a declared field, got {name!r}")
        return
    declared = field_types[name]
    if allowed is not None and (declared is bool or declared not in allowed):
        wanted = " or ".join(t.__name__ for t in allowed)
        problems.append(f"{where}: field {name!r} is {declared.__name__}, expected {wanted}")


def _count(
    problems: list[str], where: str, section: Mapping[str, Any], key: str, default: int
) -> int:
    value = section.get(key, default)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    problems.append(f"{where} must be a whole number >= 0, got {value!r}")
    return default


def _seconds(problems: list[str], where: str, value: object) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    problems.append(f"{where} must be a number of seconds >= 0, got {value!r}")
    return 0.0


def _action(problems: list[str], where: str, section: Mapping[str, Any]) -> RuleAction:
    value = section.get("action", "flag")
    if isinstance(value, str) and value in {a.value for a in RuleAction}:
        return RuleAction(value)
    problems.append(f"{where} must be flag or quarantine, got {value!r}")
    return RuleAction.FLAG
