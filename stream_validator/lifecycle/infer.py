"""A draft contract from a sample's observations (``observe``). PURE.

What holds for a draft of a sample (a property test keeps it so): it passes
``check_contract``, and validating the same sample against it quarantines no record the
sample's observations counted, and breaches no null ceiling. To keep that promise, a field
is declared only when the contract language can say what was seen:

* a field present in only part of its records (or objects, for an object's fields) is left
  out: a declared field is required, and ``nullable`` allows a null, not an absence;
* a field whose values have no one type (an int here, a str there), that is always null, an
  object that is always empty or has no field that could be typed, an array always empty or
  whose items could not be typed, a container nested deeper than ``MAX_NESTING_DEPTH`` or an
  array longer than ``MAX_ITEMS_LIMIT``, and a nested name holding ``.``, ``[`` or ``]`` (or
  an empty name) are left out as *untyped*.

Left out fields are listed (``Draft.partial``, ``Draft.untyped``); records carrying them
still pass, since the draft allows unknown fields. Types: ``int`` when every number was an
int, else ``float`` (ints widen); ``datetime`` (``require_timezone`` when every value had an
offset) when every string was a date and time, else ``str``. Bounds: ``bounds``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from fractions import Fraction

from stream_validator.contracts.check import contract_problems
from stream_validator.contracts.model import (
    DEFAULT_MAX_ITEMS,
    MAX_ITEMS_LIMIT,
    MAX_NESTING_DEPTH,
    FieldSpec,
    SchemaContract,
    child_path,
    item_path,
)
from stream_validator.lifecycle.bounds import (
    ceiling_pct,
    widen_count,
    widen_float,
    widen_int,
)
from stream_validator.lifecycle.observe import (
    ARRAY,
    BOOL,
    DATETIME_NAIVE,
    DATETIME_TZ,
    FLOAT,
    INT,
    NULL,
    OBJECT,
    STR,
    Observed,
    SampleObservations,
)

#: ``--margin``'s default: bounds 10 % beyond the observed extremes, the null ceiling 10 %
#: above the highest observed null rate.
DEFAULT_MARGIN = Fraction(1, 10)
#: The null ceiling of a draft without nullable fields (the contract language's default).
DEFAULT_CEILING_PCT = 1.0
_PATH_CHARS = frozenset(".[]")
_NUMBERS = frozenset({INT, FLOAT})
_TIMES = frozenset({DATETIME_TZ, DATETIME_NAIVE})
_TYPES: dict[str, type] = {
    INT: int,
    FLOAT: float,
    STR: str,
    BOOL: bool,
    OBJECT: dict,
    ARRAY: list,
}


@dataclass(frozen=True, slots=True)
class InferOptions:
    """How to draft: the contract's name and description, the margin, whether to bound."""

    name: str = "draft"
    description: str = ""
    margin: Fraction = DEFAULT_MARGIN
    bounds: bool = True


@dataclass(frozen=True, slots=True)
class Facts:
    """What was observed of a declared field: values seen, null rate (percent of records),
    numeric extremes, array lengths."""

    seen: int
    null_pct: float
    lo: int | float | None = None
    hi: int | float | None = None
    min_items: int | None = None
    max_items: int | None = None


@dataclass(slots=True)
class Draft:
    """The inferred contract (None: nothing to declare) and what was left out, and why.

    ``partial``: (path, seen in, out of) of fields missing from some records or objects;
    ``untyped``: (path, reason); ``facts``: per declared path; ``ceiling_from``: the path
    and null rate the null ceiling was drawn from (None: no nullable field).
    """

    contract: SchemaContract | None
    records: int
    facts: dict[str, Facts] = field(default_factory=dict)
    partial: list[tuple[str, int, int]] = field(default_factory=list)
    untyped: list[tuple[str, str]] = field(default_factory=list)
    ceiling_from: tuple[str, float] | None = None
    problems: list[str] = field(default_factory=list)


def infer_contract(sample: SampleObservations, options: InferOptions = InferOptions()) -> Draft:
    """The draft of a sample (``contract`` None when the sample holds no record or no
    field could be typed)."""
    draft = Draft(None, sample.records)
    if sample.records == 0:
        return draft
    builder = _Builder(options, sample.records, draft)
    fields = builder.fields(sample.root, "", top=True)
    if not fields:
        return draft
    nullable = [(path, facts.null_pct) for path, facts in draft.facts.items() if facts.null_pct]
    ceiling = DEFAULT_CEILING_PCT
    if nullable:
        path, _ = max(nullable, key=lambda item: item[1])
        null_records = builder.null_records[path]
        draft.ceiling_from = (path, null_records * 100 / sample.records)
        ceiling = ceiling_pct(Fraction(null_records * 100, sample.records), options.margin)
    contract = SchemaContract(
        name=options.name,
        fields=fields,
        max_allowed_null_pct=ceiling,
        forbid_unknown_fields=False,
        version="1",
        description=options.description,
    )
    draft.problems = contract_problems(contract)
    if not draft.problems:
        draft.contract = contract
    return draft


class _Builder:
    def __init__(self, options: InferOptions, records: int, draft: Draft) -> None:
        self.options = options
        self.records = records
        self.draft = draft
        self.null_records: dict[str, int] = {}

    def fields(self, parent: Observed, prefix: str, *, top: bool) -> tuple[FieldSpec, ...]:
        """The specs of an object's fields (``parent``: the object's observations)."""
        out: list[FieldSpec] = []
        for name, observed in parent.children.items():
            path = child_path(prefix, name) if prefix else name
            if not name or (not top and _PATH_CHARS.intersection(name)):
                why = "an empty name" if not name else "a nested name holding '.', '[' or ']'"
                self.draft.untyped.append((path, f"{why} cannot be declared"))
                continue
            if observed.present < parent.objects:
                self.draft.partial.append((path, observed.present, parent.objects))
                continue
            spec = self.spec(name, observed, path)
            if spec is not None:
                out.append(spec)
        return tuple(out)

    def spec(self, name: str, observed: Observed, path: str) -> FieldSpec | None:
        """The spec of the values at ``path`` (None: untyped, with the reason noted)."""
        kinds = {kind for kind in observed.kinds if kind != NULL}
        nullable = NULL in observed.kinds
        kind = _one_kind(kinds)
        if kind is None:
            self._untyped(path, _mixture(observed.kinds) if kinds else "always null")
            return None
        facts = Facts(observed.present, observed.null_records * 100 / self.records)
        margin, bound = self.options.margin, self.options.bounds
        spec: FieldSpec | None
        if kind in _TIMES:
            spec = FieldSpec(name, datetime, nullable, require_timezone=DATETIME_NAIVE not in kinds)
        elif kind in _NUMBERS:
            lo, hi = observed.lo, observed.hi
            facts = Facts(facts.seen, facts.null_pct, lo, hi)
            if not bound or lo is None or hi is None:
                spec = FieldSpec(name, _TYPES[kind], nullable)
            elif kind == INT:
                assert isinstance(lo, int) and isinstance(hi, int)
                low, high = widen_int(lo, margin, False), widen_int(hi, margin, True)
                spec = FieldSpec(name, int, nullable, min_value=low, max_value=high)
            else:
                low_f, high_f = widen_float(lo, margin, False), widen_float(hi, margin, True)
                spec = FieldSpec(name, float, nullable, min_value=low_f, max_value=high_f)
        elif kind == OBJECT:
            spec = self._object(name, observed, path, nullable)
        elif kind == ARRAY:
            spec = self._array(name, observed, path, nullable)
            if spec is not None:
                facts = Facts(
                    facts.seen, facts.null_pct, None, None, observed.min_items, observed.max_items
                )
        else:
            spec = FieldSpec(name, _TYPES[kind], nullable)
        if spec is not None:
            self.draft.facts[path] = facts
            if nullable:
                self.null_records[path] = observed.null_records
        return spec

    def _object(self, name: str, observed: Observed, path: str, nullable: bool) -> FieldSpec | None:
        if observed.too_deep:
            self._untyped(path, f"an object nested deeper than {MAX_NESTING_DEPTH} levels")
            return None
        if not observed.children:
            self._untyped(path, "always an empty object")
            return None
        fields = self.fields(observed, path, top=False)
        if not fields:
            self._untyped(path, "an object none of whose fields could be declared")
            return None
        return FieldSpec(name, dict, nullable, fields=fields)

    def _array(self, name: str, observed: Observed, path: str, nullable: bool) -> FieldSpec | None:
        shortest, longest = observed.min_items or 0, observed.max_items or 0
        if observed.too_deep:
            self._untyped(path, f"an array nested deeper than {MAX_NESTING_DEPTH} levels")
            return None
        if longest > MAX_ITEMS_LIMIT:
            self._untyped(path, f"an array of {longest} items (at most {MAX_ITEMS_LIMIT})")
            return None
        if observed.item is None or observed.item.present == 0:
            self._untyped(path, "always an empty array: its items have no type")
            return None
        items = self.spec(name + "[]", observed.item, item_path(path))
        if items is None:
            self._untyped(path, "an array whose items could not be typed")
            return None
        if not self.options.bounds:  # only the limit the default would break
            limit = longest if longest > DEFAULT_MAX_ITEMS else None
            return FieldSpec(name, list, nullable, items=items, max_items=limit)
        margin = self.options.margin
        low = widen_count(shortest, margin, False)
        high = min(widen_count(longest, margin, True), MAX_ITEMS_LIMIT)
        return FieldSpec(name, list, nullable, items=items, min_items=low or None, max_items=high)

    def _untyped(self, path: str, reason: str) -> None:
        self.draft.untyped.append((path, reason))


def _one_kind(kinds: set[str]) -> str | None:
    """The one contract type of these value kinds, as a kind (None: there is none)."""
    if not kinds:
        return None
    if kinds <= _NUMBERS:
        return FLOAT if FLOAT in kinds else INT
    if kinds <= _TIMES:
        return DATETIME_TZ if DATETIME_NAIVE not in kinds else DATETIME_NAIVE
    if kinds <= _TIMES | {STR}:
        return STR
    if len(kinds) == 1:
        (kind,) = kinds
        return kind if kind in _TYPES else None
    return None


def _mixture(kinds: Counter[str]) -> str:
    """``values of several types: int 80, str 20``."""
    shown = ", ".join(f"{kind} {count}" for kind, count in kinds.most_common())
    return f"values of several types: {shown}"
