"""Record-level checks after the field checks: the contract's rules and skew windows. PURE.

They run on a record's fields only when those fields passed their own checks, so a
missing ``bid`` is reported once (``missing_field``), never again by ``bid <= ask``:

* a rule reads a nested object field by path (``book.bid``); it is skipped when that
  field or an object above it (``book``) failed its own check;
* a rule with action ``quarantine`` that does not hold adds a ``rule_violation``
  (``rule`` = its name); one with action ``flag`` leaves the record valid and is counted
  in the report's ``flagged_counts`` when the record ends valid (a quarantined record's
  DLQ entry lists it, marked flagged: a ``FlaggedViolation``);
* a datetime field with ``max_future_s``/``max_age_s`` outside
  ``[now - max_age_s, now + max_future_s]`` adds a ``timestamp_out_of_range``. ``now`` is
  the time of validation the caller gives (None: no skew check); a value without an offset
  is read as UTC.

``screen`` is the fast path's side for skew windows: it names the rows of a decoded run
whose timestamp is within ``MARGIN`` of a bound or beyond, and the full rules decide
those. msgspec rounds sub-microsecond digits where ``datetime.fromisoformat`` truncates;
the margin covers that, so the fast path is only ever stricter. (The fast path checks
the rules inside its decode: ``structrules``.)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from itertools import compress
from typing import Any, Final, NamedTuple

from stream_validator.contracts.expr_eval import compile_rule, failing_link
from stream_validator.contracts.exprtree import render
from stream_validator.contracts.model import SchemaContract
from stream_validator.contracts.rulespec import RuleAction, RuleSpec
from stream_validator.verify.render import show
from stream_validator.verify.report import FlaggedViolation, Violation, ViolationKind
from stream_validator.verify.structrules import RuleDeclined, compile_sure_holds, text_of

MARGIN: Final = timedelta(seconds=1)


class _Window(NamedTuple):
    name: str
    future: timedelta | None
    age: timedelta | None


class Bounds(NamedTuple):
    """A skew window resolved against one validation time (None: unbounded side)."""

    name: str
    lo: datetime | None
    hi: datetime | None


def instant(value: object) -> datetime | None:
    """The aware datetime of a valid datetime field value (naive: UTC); None if not one."""
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    return value if value.utcoffset() is not None else value.replace(tzinfo=UTC)


def _shift(now: datetime, delta: timedelta | None, sign: int) -> datetime | None:
    if delta is None:
        return None
    try:
        return now + sign * delta
    except OverflowError:  # beyond year 1..9999: that side cannot be crossed
        return None


class PathView(Mapping[str, Any]):
    """A record read by path: ``view.get("book.bid")`` is ``record["book"]["bid"]``, None
    when a step is missing or not a mapping (the rule's link then holds, as for a null);
    a name without a dot is read as it is."""

    __slots__ = ("_record",)

    def __init__(self, record: Mapping[Any, Any]) -> None:
        self._record = record

    def __getitem__(self, name: str) -> Any:
        record = self._record
        if name in record or "." not in name:
            return record[name]
        value: Any = record
        for step in name.split("."):
            if not isinstance(value, Mapping):
                raise KeyError(name)
            value = value[step]
        return value

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default

    def __iter__(self) -> Iterator[str]:
        return iter(self._record)

    def __len__(self) -> int:
        return len(self._record)


def _with_parents(names: frozenset[str]) -> frozenset[str]:
    """The paths a rule reads and every object above them: ``book.bid`` -> ``book``."""
    out = set(names)
    for name in names:
        parts = name.split(".")
        out.update(".".join(parts[:end]) for end in range(1, len(parts)))
    return frozenset(out)


class RecordChecks:
    """The rules and skew windows of one contract, compiled once."""

    __slots__ = ("_deps", "_paths", "_rules", "_sure", "_text", "_windows")

    def __init__(self, contract: SchemaContract) -> None:
        self._text = {spec.name: text_of(contract, spec) for spec in contract.rules}
        self._rules: tuple[tuple[RuleSpec, Callable[[Mapping[str, object]], bool]], ...] = tuple(
            (spec, compile_rule(spec.expr, self._text[spec.name])) for spec in contract.rules
        )
        declared = set(contract.field_names)
        # The rules read nested paths: they see the record through a PathView.
        self._paths = any(not spec.fields <= declared for spec in contract.rules)
        # Per rule, the fields whose failure skips it (with the objects above a path).
        self._deps = tuple(
            _with_parents(spec.fields) if self._paths else spec.fields for spec in contract.rules
        )
        # A shortcut for the common record whose every rule holds (see structrules).
        self._sure = compile_sure_holds(contract)
        self._windows = tuple(
            _Window(
                spec.name,
                None if spec.max_future_s is None else timedelta(seconds=spec.max_future_s),
                None if spec.max_age_s is None else timedelta(seconds=spec.max_age_s),
            )
            for spec in contract.fields
            if spec.has_skew_window
        )

    def active(self, now: datetime | None) -> bool:
        """True when a record could fail or be flagged here at this validation time."""
        return bool(self._rules) or (now is not None and bool(self._windows))

    def bounds(self, now: datetime | None) -> tuple[Bounds, ...]:
        """The skew windows at ``now`` (aware; naive is read as UTC); none without a time."""
        if now is None:
            return ()
        if now.utcoffset() is None:
            now = now.replace(tzinfo=UTC)
        return tuple(
            Bounds(w.name, _shift(now, w.age, -1), _shift(now, w.future, 1)) for w in self._windows
        )

    def check(
        self,
        record: Mapping[Any, Any],
        violations: list[Violation] | None,
        bounds: tuple[Bounds, ...],
    ) -> tuple[list[Violation] | None, list[str]]:
        """(violations with the record checks' added, the flag rules the record broke).

        A record with violations (of its fields or of a quarantining rule) also gets one
        ``FlaggedViolation`` per flag rule it broke, listed last."""
        failed = {v.field for v in violations} if violations and bounds else None
        for name, lo, hi in bounds:
            if failed and name in failed:
                continue
            value = record.get(name)
            moment = instant(value)
            if moment is None:
                continue  # null in a nullable field (anything else failed its field check)
            if lo is not None and moment < lo:
                where = f"before the oldest allowed {lo.isoformat()}"
            elif hi is not None and moment > hi:
                where = f"after the latest allowed {hi.isoformat()}"
            else:
                continue
            violations = violations or []
            violations.append(
                Violation(
                    name,
                    ViolationKind.TIMESTAMP_OUT_OF_RANGE,
                    f"field {name!r}: {show(value)} is {where}",
                )
            )
        flagged: list[str] = []
        if self._sure is not None:
            try:
                self._sure(record)
            except RuleDeclined:
                pass  # some rule may not hold: judge each one
            else:
                return violations, flagged
        if violations and not bounds:  # the set is only needed here: most bad records
            failed = {v.field for v in violations}  # return above without it
        if self._paths:
            record = PathView(record)
        for (spec, holds), deps in zip(self._rules, self._deps, strict=True):
            if failed and not failed.isdisjoint(deps):
                continue
            if holds(record):
                continue
            if spec.action is RuleAction.FLAG:
                flagged.append(spec.name)
                continue
            violations = violations or []
            violations.append(_rule_violation(spec, record, self._text[spec.name]))
        if flagged and violations is not None:
            violations.extend(self._flag_violations(record, flagged))
        return violations, flagged

    def _flag_violations(self, record: Mapping[Any, Any], names: list[str]) -> list[Violation]:
        """The violations of the flag rules ``names`` the record broke, marked flagged (for
        the DLQ entry of a record with other violations)."""
        wanted = set(names)
        return [
            _rule_violation(spec, record, self._text[spec.name], FlaggedViolation)
            for spec, _ in self._rules
            if spec.name in wanted
        ]

    def screen(
        self,
        rows: Sequence[Any],
        getters: Mapping[str, Callable[[Any], Any]],
        bounds: tuple[Bounds, ...],
    ) -> set[int]:
        """Positions in ``rows`` (decoded Structs) whose timestamp is not MARGIN inside its
        window: the full rules must judge them."""
        out: set[int] = set()
        for name, lo, hi in bounds:
            low = None if lo is None else lo + MARGIN
            high = None if hi is None else hi - MARGIN
            values = list(map(getters[name], rows))
            for i in compress(range(len(values)), [value is not None for value in values]):
                moment = instant(values[i])
                if (
                    moment is None
                    or (low is not None and moment < low)
                    or (high is not None and moment > high)
                ):
                    out.add(i)
        return out


def _rule_violation(
    spec: RuleSpec,
    record: Mapping[Any, Any],
    text: frozenset[str],
    cls: type[Violation] = Violation,
) -> Violation:
    link = failing_link(spec.body, record, text) or spec.canonical
    if spec.condition is not None:
        link += f" when {render(spec.condition)}"
    values = ", ".join(f"{name}={show(record.get(name))}" for name in sorted(spec.fields))
    return cls(
        None,
        ViolationKind.RULE_VIOLATION,
        f"rule {spec.name!r} does not hold: {link} ({values})",
        rule=spec.name,
    )
