"""A contract as the native verdict core's plan (the tuples ``_native.VerdictPlan`` reads).

PURE. ``plan_spec(contract)`` builds (fields, forbid_unknown, rules), or raises
``UnplannableContract`` for what the core does not hold: field names it would read only
as escapes, a nested field with a pattern, allowed values on a float, numbers past a
double, more than 64 fields, rules or nullable paths. Everything else is planned:

* a field is its checks; an object or array field also carries the spec its value is
  walked against (``nested``: null slots by metric path, as ``nullable_paths`` numbers
  them, and the value slots of the object paths the rules read, after the fields);
* a rule that is a conjunction of numeric comparisons is its links; any other (``or``,
  ``not``, ``in``, strings, ``when``) is its condition in normal form
  (``expr_eval.normal_form``), a tree of all/any over comparisons, string comparisons and
  ``in`` tests, judged as ``expr_eval._compile_condition`` judges it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from stream_validator.contracts.expr_eval import is_text, links, normal_form, plain
from stream_validator.contracts.exprtree import (
    And,
    BinOp,
    Compare,
    Const,
    Expr,
    Field,
    In,
    Neg,
    Or,
    Str,
    fields_of,
)
from stream_validator.contracts.model import (
    FieldSpec,
    SchemaContract,
    child_path,
    item_path,
    nullable_paths,
    type_name,
)
from stream_validator.contracts.rulespec import RuleAction, RuleSpec
from stream_validator.verify.structrules import text_of
from stream_validator.verify.valuecheck import ValueCheck

__all__ = ["UnplannableContract", "plan_spec"]

_TYPES: Final = {float: 0, int: 1, str: 2, bool: 3, datetime: 4, dict: 5, list: 6}


class UnplannableContract(ValueError):
    """The contract uses something the native plan does not hold."""


def _expr(node: Expr, index: dict[str, int]) -> tuple[Any, ...]:
    if isinstance(node, Field):
        return ("f", index[node.name])
    if isinstance(node, Const):
        return ("c", node.value)
    if isinstance(node, Neg):
        return ("neg", _expr(node.operand, index))
    if isinstance(node, BinOp):
        return ("bin", node.op, _expr(node.left, index), _expr(node.right, index))
    raise UnplannableContract(f"expression node {type(node).__name__}")


def _side(node: Expr, index: dict[str, int]) -> tuple[str, Any]:
    """An operand of a string comparison (``_text_reader``)."""
    if isinstance(node, Str):
        return ("s", node.value)
    if isinstance(node, Field):
        return ("f", index[node.name])
    raise UnplannableContract(f"string operand {type(node).__name__}")


def _cond(node: Expr, index: dict[str, int], text: frozenset[str]) -> tuple[Any, ...]:
    """A normal-form condition (``expr_eval._compile_condition``'s cases, in its order)."""
    if isinstance(node, And | Or):
        terms = [_cond(term, index, text) for term in node.terms]
        return ("all" if isinstance(node, And) else "any", terms)
    if isinstance(node, In):
        values = [item.value for item in node.values]
        if isinstance(node.values[0], Str):
            return ("intext", _side(node.operand, index), values, node.negated)
        read = sorted(index[n] for n in fields_of(node.operand))
        return ("innum", _expr(node.operand, index), read, values, node.negated)
    if not isinstance(node, Compare) or len(node.ops) != 1:
        raise UnplannableContract("a condition not in normal form")
    left, right = node.operands
    op = node.ops[0]
    if is_text(left, text) or is_text(right, text):
        return ("text", _side(left, index), op == "==", _side(right, index))
    read = sorted(index[n] for n in fields_of(left) | fields_of(right))
    return ("link", _expr(left, index), op, _expr(right, index), read)


def _field(spec: FieldSpec, slot: int, window: int, nest: object = None) -> tuple[Any, ...]:
    tp = spec.expected_type
    if any(c in '"\\' or c < " " for c in spec.name):
        raise UnplannableContract("a field name the core reads only as an escape")
    if tp not in _TYPES:
        raise UnplannableContract(f"field type {type_name(tp)}")
    if spec.allowed is not None and tp not in (str, int):
        raise UnplannableContract("allowed values on a field that is not str or int")
    values = ValueCheck.of(spec)
    allowed = spec.allowed
    return (
        spec.name,
        repr(spec.name),
        _TYPES[tp],
        slot,
        spec.min_value,
        repr(spec.min_value),
        spec.max_value,
        repr(spec.max_value),
        type_name(tp) + (" with a UTC offset" if spec.require_timezone else ""),
        spec.require_timezone,
        window,
        -1 if spec.min_length is None else spec.min_length,
        -1 if spec.max_length is None else spec.max_length,
        list(allowed) if allowed is not None and tp is str else None,
        list(allowed) if allowed is not None and tp is int else None,
        values.shown if values is not None else "",
        spec.pattern is not None,
        spec.action == RuleAction.FLAG,
        nest,
    )


class _Nest:
    """The slots the container specs are planned against."""

    def __init__(self, nulls: dict[str, int], paths: dict[str, int]) -> None:
        self.nulls = nulls
        self.paths = paths

    def node(self, spec: FieldSpec, metric: str) -> tuple[Any, ...]:
        """(null slot, path slot, kind, ...) of a spec at its metric path."""
        null = self.nulls.get(metric, -1) if spec.is_nullable else -1
        path = self.paths.get(metric, -1)
        if spec.expected_type is dict:
            children = [
                (inner.name, self.node(inner, child_path(metric, inner.name)))
                for inner in spec.fields or ()
            ]
            return (null, path, "obj", children)
        if spec.expected_type is list:
            assert spec.items is not None  # check_contract
            return (
                null,
                path,
                "arr",
                spec.min_items or 0,
                spec.item_limit,
                self.node(spec.items, item_path(metric)),
            )
        if spec.pattern is not None:
            raise UnplannableContract("a pattern inside an object or array")
        return (null, path, "leaf", _field(spec, null, -1))


def _rule(
    rule: RuleSpec, contract: SchemaContract, index: dict[str, int], roots: dict[str, int]
) -> tuple[Any, ...]:
    text = text_of(contract, rule)
    if not rule.fields <= index.keys():
        raise UnplannableContract(f"rule {rule.name!r} reads a path the plan does not hold")
    # The fields whose own failure skips the rule: a path's top-level field (a violation
    # below it makes the core defer the record).
    deps = sorted({roots[n.split(".", 1)[0]] for n in rule.fields})
    flag = rule.action == RuleAction.FLAG
    if not plain(rule.expr, text):
        return ([], deps, flag, _cond(normal_form(rule.expr), index, text))
    planned = [
        (
            _expr(left, index),
            op,
            _expr(right, index),
            sorted(index[n] for n in fields_of(left) | fields_of(right)),
        )
        for left, op, right in links(rule.expr)
    ]
    return (planned, deps, flag, None)


def plan_spec(contract: SchemaContract) -> tuple[Any, ...]:
    """(fields, forbid_unknown, rules) of a contract; UnplannableContract if it cannot be."""
    roots = {spec.name: i for i, spec in enumerate(contract.fields)}
    index = dict(roots)
    for rule in contract.rules:
        for name in sorted(rule.fields - roots.keys()):
            index.setdefault(name, len(index))  # a nested path: a value slot after the fields
    nest = _Nest(
        {path: slot for slot, path in enumerate(nullable_paths(contract))},
        {name: i for name, i in index.items() if name not in roots},
    )
    fields, slot, window = [], 0, 0
    for spec in contract.fields:
        timed = spec.has_skew_window
        node = nest.node(spec, spec.name) if spec.is_nested else None
        fields.append(_field(spec, slot if spec.is_nullable else -1, window if timed else -1, node))
        slot += spec.is_nullable
        window += timed
    rules = [_rule(rule, contract, index, roots) for rule in contract.rules]
    return (fields, contract.forbid_unknown_fields, rules)
