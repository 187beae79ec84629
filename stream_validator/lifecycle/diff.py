"""Every change between two contract versions, each classified (``change.Effect``). PURE.

Fields are matched by path (``book.bid``, ``levels[].price``: an object's fields by name,
an array's items as ``levels[]``), rules by name. What is tightening (the rest mirrors it):

* contract: ``max_allowed_null_pct`` lowered; ``forbid_unknown_fields`` turned on;
* a field added (a declared field is required, nullable or not); a field removed while the
  new contract forbids unknown fields (records carrying it become ``unknown_field``);
* a type narrowed or changed (only ``int`` -> ``float`` and ``datetime`` -> ``str`` widen);
* ``nullable`` -> required; ``allow_non_finite`` off; ``require_timezone`` on;
* a bound added or moved inward: ``min_value``/``max_value``, ``min_length``/``max_length``,
  ``min_items``/``max_items`` (an absent ``max_items`` is ``DEFAULT_MAX_ITEMS``), the skew
  windows ``max_future_s``/``max_age_s``;
* ``allowed`` added or losing a value; a ``pattern`` added or rewritten;
* a field's ``action`` ``flag`` -> ``quarantine``; a rule added, made ``quarantine``, its
  check rewritten or its ``when`` dropped or rewritten (``diffrules``);
* the per-symbol state: a ``quarantine`` check added or made stricter (``diffrules``).

Changes inside a top-level field whose ``action`` is ``flag`` (in the new contract for a
tightening, the old for a loosening) are neutral: they flag, never quarantine.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from stream_validator.contracts.model import (
    FieldSpec,
    SchemaContract,
    child_path,
    item_path,
    type_name,
)
from stream_validator.contracts.rulespec import RuleAction
from stream_validator.lifecycle.change import ANY_FIELD, Change, Effect, kinds
from stream_validator.lifecycle.diffrules import rule_changes, state_changes

T, L, N = Effect.TIGHTENING, Effect.LOOSENING, Effect.NEUTRAL
_WIDENING = frozenset({(int, float), (datetime, str)})


def diff_contracts(old: SchemaContract, new: SchemaContract) -> list[Change]:
    """Every change from ``old`` to ``new``, contract keys first, then fields in the new
    contract's order (removed ones after), then rules and the state section."""
    changes: list[Change] = []
    for key in ("name", "version", "description"):
        before, after = getattr(old, key), getattr(new, key)
        if before != after:
            changes.append(Change(key, f"{key}_changed", N, before, after, f"{key} changed"))
    before_pct, after_pct = old.max_allowed_null_pct, new.max_allowed_null_pct
    if before_pct != after_pct:
        lowered = after_pct < before_pct
        changes.append(
            Change(
                "max_allowed_null_pct",
                "null_ceiling_lowered" if lowered else "null_ceiling_raised",
                T if lowered else L,
                before_pct,
                after_pct,
                f"null ceiling {before_pct}% -> {after_pct}%"
                + (" (batches breach sooner)" if lowered else ""),
            )
        )
    if old.forbid_unknown_fields != new.forbid_unknown_fields:
        on = new.forbid_unknown_fields
        changes.append(
            Change(
                "forbid_unknown_fields",
                "unknown_fields_forbidden" if on else "unknown_fields_allowed",
                T if on else L,
                old.forbid_unknown_fields,
                new.forbid_unknown_fields,
                "undeclared fields now quarantine a record"
                if on
                else "undeclared fields no longer quarantine a record",
                field=ANY_FIELD,
                kinds=kinds("unknown_field"),
            )
        )
    walker = _FieldWalker(new.forbid_unknown_fields, changes)
    walker.fields(old.fields, new.fields, "", None)
    changes += rule_changes(old.rules, new.rules)
    changes += state_changes(old.state, new.state)
    return changes


class _FieldWalker:
    def __init__(self, forbid_unknown: bool, out: list[Change]) -> None:
        self.forbid_unknown = forbid_unknown
        self.out = out
        # The top-level field's actions (old, new) while walking inside it.
        self.flag_old = self.flag_new = False

    def fields(
        self,
        old: tuple[FieldSpec, ...],
        new: tuple[FieldSpec, ...],
        prefix: str,
        tops: tuple[FieldSpec | None, FieldSpec | None] | None,
    ) -> None:
        before = {spec.name: spec for spec in old}
        after = {spec.name: spec for spec in new}
        for name, spec in after.items():
            path = child_path(prefix, name) if prefix else name
            if tops is None:
                self.flag_old = name in before and before[name].action == RuleAction.FLAG
                self.flag_new = spec.action == RuleAction.FLAG
            if name not in before:
                self._add(
                    T,
                    path,
                    "field_added",
                    None,
                    type_name(spec.expected_type),
                    "a new required field: records without it are quarantined",
                    kinds("missing_field"),
                )
            else:
                self.spec(before[name], spec, path)
        for name, spec in before.items():
            if name in after:
                continue
            path = child_path(prefix, name) if prefix else name
            if tops is None:
                self.flag_old = spec.action == RuleAction.FLAG
                self.flag_new = False
            if self.forbid_unknown:
                self.out.append(
                    Change(
                        path,
                        "field_removed",
                        T,
                        type_name(spec.expected_type),
                        None,
                        "removed while unknown fields are forbidden: records carrying it"
                        " are quarantined",
                        field=path,
                        kinds=kinds("unknown_field"),
                    )
                )
            else:
                self._add(
                    L,
                    path,
                    "field_removed",
                    type_name(spec.expected_type),
                    None,
                    "removed: its checks no longer apply (it passes as an unknown field)",
                    None,
                    below=True,
                )

    def spec(self, old: FieldSpec, new: FieldSpec, path: str) -> None:
        """The changes of one field present in both."""
        if old.action != new.action:
            to_flag = new.action == RuleAction.FLAG
            self.out.append(
                Change(
                    path,
                    f"action_{new.action}",
                    L if to_flag else T,
                    str(old.action),
                    str(new.action),
                    "its broken checks now flag instead of quarantining"
                    if to_flag
                    else "its broken checks now quarantine instead of flagging",
                    field=path,
                    below=True,
                )
            )
        before_t, after_t = old.expected_type, new.expected_type
        if before_t is not after_t:
            widens = (before_t, after_t) in _WIDENING
            self._add(
                L if widens else T,
                path,
                "type_widened" if widens else "type_changed",
                type_name(before_t),
                type_name(after_t),
                f"type {type_name(before_t)} -> {type_name(after_t)}",
                kinds("type_mismatch"),
                below=True,
            )
        self._flag(old, new, path, "is_nullable", "null_value", "nullable", loosen_when=True)
        self._flag(old, new, path, "allow_non_finite", "non_finite", "allow_non_finite", True)
        self._flag(old, new, path, "require_timezone", "type_mismatch", "require_timezone", False)
        self._bound(old.min_value, new.min_value, path, "min_value", "below_min", low=True)
        self._bound(old.max_value, new.max_value, path, "max_value", "above_max", low=False)
        self._bound(old.min_length, new.min_length, path, "min_length", "too_short", low=True)
        self._bound(old.max_length, new.max_length, path, "max_length", "too_long", low=False)
        self._bound(old.min_items, new.min_items, path, "min_items", "too_few_items", low=True)
        self._bound(
            old.item_limit if old.expected_type is list else None,
            new.item_limit if new.expected_type is list else None,
            path,
            "max_items",
            "too_many_items",
            low=False,
        )
        window = "timestamp_out_of_range"
        self._bound(old.max_future_s, new.max_future_s, path, "max_future_s", window, low=False)
        self._bound(old.max_age_s, new.max_age_s, path, "max_age_s", window, low=False)
        self._allowed(old, new, path)
        if old.pattern != new.pattern:
            removed = new.pattern is None
            what = "removed" if removed else ("added" if old.pattern is None else "changed")
            self._add(
                L if removed else T,
                path,
                f"pattern_{what}",
                old.pattern,
                new.pattern,
                f"pattern {what}" + ("" if removed else " (values it does not match fail)"),
                kinds("pattern_mismatch"),
            )
        if old.expected_type is dict and new.expected_type is dict:
            self.fields(old.fields or (), new.fields or (), path, (old, new))
        if old.items is not None and new.items is not None and before_t is after_t:
            self.spec(old.items, new.items, item_path(path))

    def _flag(
        self,
        old: FieldSpec,
        new: FieldSpec,
        path: str,
        attr: str,
        kind: str,
        meaning: str,
        loosen_when: bool,
    ) -> None:
        before, after = getattr(old, attr), getattr(new, attr)
        if before == after:
            return
        loosens = after == loosen_when
        code = {"is_nullable": ("required_to_nullable", "nullable_to_required")}.get(attr)
        what = code[0 if loosens else 1] if code else f"{attr}_{'on' if after else 'off'}"
        self._add(
            L if loosens else T,
            path,
            what,
            before,
            after,
            f"{meaning}: {str(before).lower()} -> {str(after).lower()}",
            kinds(kind),
        )

    def _bound(self, before: Any, after: Any, path: str, key: str, kind: str, *, low: bool) -> None:
        """A lower (``low``) or upper bound; None: no bound."""
        if before == after:
            return
        if before is None:
            tight, what = True, "added"
        elif after is None:
            tight, what = False, "removed"
        else:
            tight = after > before if low else after < before
            what = "raised" if after > before else "lowered"
        self._add(
            T if tight else L,
            path,
            f"{key}_{what}",
            before,
            after,
            f"{key} {before} -> {after}" + (" (tightened)" if tight else " (loosened)"),
            kinds(kind),
        )

    def _allowed(self, old: FieldSpec, new: FieldSpec, path: str) -> None:
        before, after = old.allowed, new.allowed
        if before is None and after is None:
            return
        if before is not None and after is not None and set(before) == set(after):
            return
        if after is None:
            tight, what = False, "allowed_removed"
        elif before is None:
            tight, what = True, "allowed_added"
        else:
            tight = not set(after) >= set(before)
            what = "allowed_narrowed" if tight else "allowed_widened"
        lost = sorted(set(before or ()) - set(after or ()), key=repr) if after else []
        detail = "allowed values " + ("no longer accepted: " + repr(lost)[1:-1] if lost else what)
        self._add(T if tight else L, path, what, before, after, detail, kinds("not_allowed"))

    def _add(
        self,
        effect: Effect,
        path: str,
        what: str,
        old: Any,
        new: Any,
        detail: str,
        about: frozenset[str] | None,
        *,
        below: bool = False,
    ) -> None:
        flagged = self.flag_new if effect is T else self.flag_old
        if flagged:
            effect, detail = N, detail + " (the field flags: no record changes verdict)"
        self.out.append(Change(path, what, effect, old, new, detail, path, about, None, below))
