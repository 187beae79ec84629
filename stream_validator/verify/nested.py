"""The checks of object and array fields, by path. PURE.

``NestedInspector`` is the ``RecordInspector`` of a contract with object or array fields:
the top-level fields are checked as by the base class, and each object or array value is
walked as deep as its spec (``contracts.model.MAX_NESTING_DEPTH`` at most), never deeper:

* a scalar inside gets the same checks as a top-level field (``rules._check_field``), its
  violation naming the path: ``book.bid``, ``levels[3].price``, ``tags[0]``;
* an object checks its ``fields`` (``missing_field`` ``book.bid``) and its keys beyond
  them follow the contract's ``forbid_unknown_fields``: reported as drift by metric path
  (``book.extra``, ``levels[].extra``) and, when forbidden, an ``unknown_field`` each;
* an array checks ``min_items`` (``too_few_items``) and its item limit (``max_items``,
  else ``DEFAULT_MAX_ITEMS``: ``too_many_items``; the items of an array over the limit are
  not checked one by one), then each item: time linear in the items, never recursion
  beyond the contract's depth.

Per top-level field, the first ``MAX_NAMED_VIOLATIONS`` nested violations are listed;
one more, of the kind of the first left out, counts the rest ("and N more violations in
'levels'"). A nullable nested field counts once per record in which it is null at least
once, under its metric path (``levels[].size``), so null rates stay 0-100.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from stream_validator.contracts.model import (
    FieldSpec,
    SchemaContract,
    child_path,
    item_path,
    nullable_paths,
)
from stream_validator.verify.render import key_name, show_name
from stream_validator.verify.report import MAX_NAMED_VIOLATIONS, Violation, ViolationKind
from stream_validator.verify.rules import (
    _MISSING,
    CLEAN_NS,
    Inspection,
    RecordInspector,
    _check_field,
    _clean,
    _compile,
    _Rule,
)


class _Found:
    """What one top-level field's walk found: violations (capped), null slots, drift."""

    __slots__ = ("left_kind", "left_out", "named", "nulls", "unknown")

    def __init__(self, nulls: list[int], unknown: dict[str, None]) -> None:
        self.named: list[Violation] = []
        self.left_out = 0
        self.left_kind: str | None = None
        self.nulls = nulls
        self.unknown = unknown

    def check(self, rule: _Rule, value: object, path: str) -> None:
        """The scalar (or container type) checks of ``value`` at ``path``."""
        named = self.named
        if len(named) < MAX_NAMED_VIOLATIONS:
            # The list returned, not ``named``: an empty list may be replaced, not extended.
            more, _, _ = _check_field(rule._replace(name=path), value, named, self.nulls)
            if more is not None and more is not named:
                named.extend(more)
            return
        more, _, _ = _check_field(rule._replace(name=path), value, None, self.nulls)
        if more:
            self._leave_out(more[0].kind, len(more))

    def add(self, path: str, kind: ViolationKind, message: str) -> None:
        if len(self.named) < MAX_NAMED_VIOLATIONS:
            self.named.append(Violation(path, kind, message))
        else:
            self._leave_out(kind, 1)

    def _leave_out(self, kind: str, count: int) -> None:
        self.left_out += count
        if self.left_kind is None:
            self.left_kind = kind

    def violations(self, top: str) -> list[Violation]:
        if not self.left_out or self.left_kind is None:
            return self.named
        summary = Violation(
            top,
            self.left_kind,
            f"and {self.left_out} more violations in {show_name(top)}"
            f" (the first {MAX_NAMED_VIOLATIONS} are listed)",
        )
        return [*self.named, summary]


class _Node:
    """One compiled spec below (or at) the top level: its rule, and its inner specs."""

    __slots__ = (
        "children",
        "clean",
        "forbid",
        "item",
        "max_items",
        "metric",
        "min_items",
        "rule",
        "walk",
    )

    def __init__(self, spec: FieldSpec, metric: str, slots: Mapping[str, int], forbid: bool):
        self.metric = metric
        self.rule = _compile(spec, slots.get(metric, -1) if spec.is_nullable else -1)
        self.forbid = forbid
        self.children: tuple[tuple[str, _Node], ...] = ()
        self.item: _Node | None = None
        self.min_items = spec.min_items or 0
        self.max_items = spec.item_limit
        self.walk: Callable[[Any, str, _Found], None] | None = None
        if spec.expected_type is dict:
            self.children = tuple(
                (inner.name, _Node(inner, child_path(metric, inner.name), slots, forbid))
                for inner in spec.fields or ()
            )
            self.clean: Callable[[object], bool] = _is_mapping
            self.walk = self._walk_object
        elif spec.expected_type is list:
            assert spec.items is not None  # check_contract
            self.item = _Node(spec.items, item_path(metric), slots, forbid)
            self.clean = _is_array
            self.walk = self._walk_array
        else:
            ns = dict(CLEAN_NS, lo0=spec.min_value, hi0=spec.max_value)
            if self.rule.values is not None:
                ns["ok0"] = self.rule.values.accepts
            # The rules' own clean test (rules._clean): its source holds no contract data,
            # bounds and value checks are bound in ns.
            self.clean = eval(f"lambda v: {_clean(0, self.rule)}", ns)

    def _walk_object(self, value: Mapping[Any, Any], path: str, found: _Found) -> None:
        present = 0
        for name, node in self.children:
            inner = value.get(name, _MISSING)
            if inner is _MISSING:
                found.check(node.rule, inner, child_path(path, name))
                continue
            present += 1
            # The child's path is only built when it is needed (a clean leaf needs none).
            if inner is None or not node.clean(inner):
                found.check(node.rule, inner, child_path(path, name))
            elif node.walk is not None:
                node.walk(inner, child_path(path, name), found)
        if len(value) > present:
            self._unknown(value, path, found)

    def _unknown(self, value: Mapping[Any, Any], path: str, found: _Found) -> None:
        declared = {name for name, _ in self.children}
        for key in value:
            if key in declared:
                continue
            name = key_name(key)
            found.unknown[child_path(self.metric, name)] = None
            if self.forbid:
                found.add(
                    child_path(path, name),
                    ViolationKind.UNKNOWN_FIELD,
                    f"undeclared field {show_name(child_path(path, name))}"
                    " (the contract forbids unknown fields)",
                )

    def _walk_array(self, value: list[Any] | tuple[Any, ...], path: str, found: _Found) -> None:
        count = len(value)
        if count < self.min_items:
            found.add(
                path,
                ViolationKind.TOO_FEW_ITEMS,
                f"field {path!r}: {count} items, fewer than min_items {self.min_items}",
            )
        if count > self.max_items:
            found.add(
                path,
                ViolationKind.TOO_MANY_ITEMS,
                f"field {path!r}: {count} items, more than max_items {self.max_items}"
                " (its items are not checked)",
            )
            return
        item = self.item
        assert item is not None
        clean, walk = item.clean, item.walk
        for index, inner in enumerate(value):
            if inner is None or not clean(inner):
                found.check(item.rule, inner, f"{path}[{index}]")
            elif walk is not None:
                walk(inner, f"{path}[{index}]", found)


def _is_mapping(value: object) -> bool:
    return isinstance(value, Mapping)


def _is_array(value: object) -> bool:
    return isinstance(value, list | tuple)


class NestedInspector(RecordInspector):
    """A RecordInspector that also walks object and array fields (see the module doc).

    ``nullable_names`` are metric paths: the top-level nullable fields first (their slots
    as in the base class), then the nested ones.
    """

    __slots__ = ("_nodes",)

    def __init__(self, contract: SchemaContract) -> None:
        super().__init__(contract)
        self.nullable_names = tuple(nullable_paths(contract))
        slots = {path: slot for slot, path in enumerate(self.nullable_names)}
        forbid = contract.forbid_unknown_fields
        self._nodes = tuple(_Node(spec, spec.name, slots, forbid) for spec in contract.fields)
        self.inspect = self.inspect_each_field

    def inspect_each_field(self, record: Mapping[Any, Any]) -> Inspection:
        """Return (violations, null slots, unknown field paths); None stands for empty."""
        violations: list[Violation] | None = None
        nulls: list[int] = []
        drift: dict[str, None] = {}
        present = len(self.rules)
        for rule, node in zip(self.rules, self._nodes, strict=True):
            value = record.get(rule.name, _MISSING)
            if value is _MISSING or value is None or not node.clean(value):
                violations, _, missing = _check_field(rule, value, violations, nulls)
                present -= missing
                continue
            if node.walk is None:  # a clean scalar
                continue
            found = _Found(nulls, drift)
            node.walk(value, rule.name, found)
            if found.named:
                violations = (violations or []) + found.violations(rule.name)
        unknown: list[str] | None = None
        if len(record) > present:
            violations, _, unknown = self._unknown(record, violations, None)
        if drift:
            unknown = (unknown or []) + list(drift)
        return violations, (sorted(set(nulls)) if nulls else None), unknown

    def explain_overflow(
        self, record: Mapping[Any, Any], payload: bytes, violations: list[Violation]
    ) -> list[Violation]:
        """As the base class, reading each violation's value by its path."""
        return super().explain_overflow(_ByPath(record), payload, violations)


_STEP: Final = re.compile(r"\[(\d+)\]|\.?([^.\[\]]+)")


class _ByPath(Mapping[str, Any]):
    """``get(path)``: the value at a violation's path (``levels[3].price``), None if absent."""

    __slots__ = ("_record",)

    def __init__(self, record: Mapping[Any, Any]) -> None:
        self._record = record

    def __getitem__(self, path: str) -> Any:
        return self.get(path)

    def __iter__(self) -> Iterator[str]:
        return iter(self._record)

    def __len__(self) -> int:
        return len(self._record)

    def get(self, path: str, default: Any = None) -> Any:
        record = self._record
        if path in record:
            return record[path]
        value: object = record
        for index, name in _STEP.findall(path):
            if index and isinstance(value, list | tuple) and int(index) < len(value):
                value = value[int(index)]
            elif name and isinstance(value, Mapping):
                value = value.get(name)
            else:
                return default
        return value
