"""The changes of a contract's record rules and per-symbol state section (``diff``). PURE.

Rules are matched by name. A rule's check is compared in its canonical form (spacing and
parentheses do not count); a rewritten check cannot be proven weaker, so it is tightening
(neutral when the rule only flags). ``when`` narrows where a rule applies: adding one is
loosening, dropping or rewriting one tightening.

The state section is the streaming service's (``validate`` and ``diff-contract --sample``
do not run it): a change matters only where the check it touches has action
``quarantine``. Its memory bounds (``max_symbols``, ``max_holes*``) and the frozen-quote
alert never quarantine: neutral.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stream_validator.contracts.expr import render
from stream_validator.contracts.rulespec import RuleAction, RuleSpec
from stream_validator.contracts.statespec import SymbolStateSpec
from stream_validator.lifecycle.change import Change, Effect

T, L, N = Effect.TIGHTENING, Effect.LOOSENING, Effect.NEUTRAL
Q = RuleAction.QUARANTINE


def rule_changes(old: tuple[RuleSpec, ...], new: tuple[RuleSpec, ...]) -> list[Change]:
    """Rules added, removed and changed."""
    before = {rule.name: rule for rule in old}
    after = {rule.name: rule for rule in new}
    out: list[Change] = []
    for name, rule in after.items():
        subject = f"rule {name}"
        was = before.get(name)
        if was is None:
            effect = T if rule.action == Q else N
            out.append(_rule(subject, "rule_added", effect, None, rule.check, name, rule))
            continue
        if was.action != rule.action:
            effect = T if rule.action == Q else L
            what = f"rule_action_{rule.action}"
            out.append(_rule(subject, what, effect, str(was.action), str(rule.action), name))
        if was.canonical != rule.canonical:
            effect = T if rule.action == Q else N
            out.append(
                _rule(subject, "rule_check_changed", effect, was.check, rule.check, name, rule)
            )
        old_when = render(was.condition) if was.condition is not None else None
        new_when = render(rule.condition) if rule.condition is not None else None
        if old_when != new_when:
            if old_when is None:
                effect, what = (L if was.action == Q else N), "rule_when_added"
            else:
                effect = T if rule.action == Q else N
                what = "rule_when_removed" if new_when is None else "rule_when_changed"
            out.append(_rule(subject, what, effect, was.when or None, rule.when or None, name))
        if was.description != rule.description:
            out.append(
                _rule(subject, "rule_description_changed", N, was.description, rule.description)
            )
    for name, rule in before.items():
        if name not in after:
            effect = L if rule.action == Q else N
            out.append(_rule(f"rule {name}", "rule_removed", effect, rule.check, None, name))
    return out


def _rule(
    subject: str,
    what: str,
    effect: Effect,
    old: Any,
    new: Any,
    name: str | None = None,
    rule: RuleSpec | None = None,
) -> Change:
    text = what.removeprefix("rule_").replace("_", " ")
    if effect is N and rule is not None and rule.action != Q:
        text += " (the rule flags: no record changes verdict)"
    return Change(subject, what, effect, old, new, text, rule=name)


def state_changes(old: SymbolStateSpec | None, new: SymbolStateSpec | None) -> list[Change]:
    """The per-symbol state section added, removed, or changed key by key."""
    if old == new:
        return []
    if old is None or new is None:
        spec = new if old is None else old
        assert spec is not None
        guards = _quarantines(spec)
        effect = N if not guards else (T if old is None else L)
        what = "state_added" if old is None else "state_removed"
        checks = ", ".join(guards) or "none that quarantine"
        return [Change("state", what, effect, old, new, f"{what[6:]}; checks: {checks}")]
    out: list[Change] = []
    seq_q = (old.sequence_action == Q, new.sequence_action == Q)
    time_q = (old.event_time_action == Q, new.event_time_action == Q)
    any_q = (bool(_quarantines(old)), bool(_quarantines(new)))
    compare: list[tuple[str, str, tuple[bool, bool], Callable[[Any, Any], bool | None]]] = [
        ("key_field", "state.key", any_q, _renamed),
        ("sequence_field", "state.sequence.field", seq_q, _enabled),
        ("sequence_window", "state.sequence.window", seq_q, _lowered),
        ("resync_after", "state.sequence.resync_after", seq_q, _later_resync),
        ("sequence_action", "state.sequence.action", (True, True), _to_quarantine),
        ("event_time_field", "state.event_time.field", time_q, _enabled),
        ("max_time_regression_s", "state.event_time.max_regression_s", time_q, _lowered),
        ("event_time_action", "state.event_time.action", (True, True), _to_quarantine),
    ]
    for attr, subject, (quarantined_before, quarantined_after), tighter in compare:
        before, after = getattr(old, attr), getattr(new, attr)
        if before == after:
            continue
        tight = tighter(before, after)
        if tight is None or tight:
            effect = T if quarantined_after else N
        else:
            effect = L if quarantined_before else N
        out.append(Change(subject, "state_changed", effect, before, after, f"{subject} changed"))
    for attr in ("quote_fields", "frozen_max_updates", "frozen_max_s", "max_symbols"):
        before, after = getattr(old, attr), getattr(new, attr)
        if before != after:
            subject = f"state.{attr}"
            out.append(Change(subject, "state_changed", N, before, after, "alerts or memory only"))
    for attr in ("max_holes", "max_holes_total"):
        before, after = getattr(old, attr), getattr(new, attr)
        if before != after:
            subject = f"state.sequence.{attr}"
            out.append(Change(subject, "state_changed", N, before, after, "memory bound only"))
    return out


def _quarantines(spec: SymbolStateSpec) -> list[str]:
    """The state checks of a spec that quarantine."""
    found = []
    if spec.sequence_field is not None and spec.sequence_action == Q:
        found.append("sequence")
    if spec.event_time_field is not None and spec.event_time_action == Q:
        found.append("event_time")
    return found


def _renamed(before: Any, after: Any) -> bool | None:
    return None  # another key: every symbol's history starts over, cannot be ordered


def _enabled(before: Any, after: Any) -> bool | None:
    if before is None:
        return True
    return False if after is None else None


def _lowered(before: Any, after: Any) -> bool | None:
    return bool(after < before)


def _later_resync(before: Any, after: Any) -> bool | None:
    """resync_after: a renumbered feed is accepted after more step-backs (or never)."""
    if after is None:
        return True
    if before is None:
        return False
    return bool(after > before)


def _to_quarantine(before: Any, after: Any) -> bool | None:
    return bool(after == Q)
