"""The msgspec ``Struct`` of one record, generated from a contract for the native fast path.

Types and bounds go into the Struct (bounds via ``Meta``; ``allowed`` as a ``Literal``,
which the contract check keeps inside the bounds, lengths and pattern; lengths as
``Meta(min_length, max_length)``, code points as the rules count them; a ``pattern`` is
not in the Struct: ``NativeCheck`` checks each distinct value of a chunk once, which costs
far less than msgspec's call into ``re`` per record), every field is required,
unknown fields are forbidden and ``gc=False``; the contract's record rules become its
``__post_init__`` (``structrules``). A bound the Struct cannot express exactly raises
UnsupportedContract: the verifier then uses the full rules only.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Annotated, Any, Final, Literal

import msgspec

from stream_validator.contracts.model import FieldSpec, SchemaContract
from stream_validator.verify.structrules import compile_post_init

_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1


class UnsupportedContract(ValueError):
    """The contract has a bound the Struct cannot express exactly; use the rules only."""


def _int_type(lo: float | int | None, hi: float | int | None) -> Any:
    low = _INT64_MIN if lo is None else max(math.ceil(lo), _INT64_MIN)
    high = _INT64_MAX if hi is None else min(math.floor(hi), _INT64_MAX)
    if low > high:
        raise UnsupportedContract("no 64-bit int satisfies the bounds")
    return Annotated[int, msgspec.Meta(ge=low, le=high)]


def _float_bound(bound: float | int | None) -> float | None:
    if bound is None:
        return None
    if float(bound) != bound:  # an int bound a double cannot hold exactly
        raise UnsupportedContract(f"bound {bound!r} is not exact as a float")
    return float(bound)


def _field_type(spec: FieldSpec, native_datetimes: bool) -> Any:
    lo, hi = spec.min_value, spec.max_value
    for bound in (lo, hi):
        if bound is not None and not math.isfinite(bound):
            raise UnsupportedContract("non-finite bound")
    tp: Any
    if spec.expected_type is bool:
        tp = bool
    elif spec.expected_type is datetime and native_datetimes:
        tp = Annotated[datetime, msgspec.Meta(tz=True)] if spec.require_timezone else datetime
    elif spec.allowed is not None:  # str or int: exactly these values, never a bool
        if any(type(v) is int and not _INT64_MIN <= v <= _INT64_MAX for v in spec.allowed):
            raise UnsupportedContract("an allowed int beyond 64 bits")
        tp = Literal[spec.allowed]
    elif spec.expected_type is str and (spec.min_length is not None or spec.max_length is not None):
        tp = Annotated[str, msgspec.Meta(min_length=spec.min_length, max_length=spec.max_length)]
    elif spec.expected_type is str or spec.expected_type is datetime:
        tp = str
    elif spec.expected_type is int:
        tp = _int_type(lo, hi)
    elif spec.expected_type is float:
        fmeta = msgspec.Meta(ge=_float_bound(lo), le=_float_bound(hi))
        tp = _int_type(lo, hi) | Annotated[float, fmeta]
    else:
        raise UnsupportedContract(f"type {spec.expected_type!r}")
    return tp | None if spec.is_nullable else tp


def null_probe(contract: SchemaContract) -> bytes | None:
    """A byte of ``null`` that no declared name holds: absent from a chunk means no nulls."""
    names = "".join(contract.field_names)
    has_bool = any(spec.expected_type is bool for spec in contract.fields)
    for letter in ("n", "u", "l") if has_bool else ("u", "n", "l"):
        if letter not in names:
            return letter.encode()
    return None


def record_struct(contract: SchemaContract, *, native_datetimes: bool) -> Any:
    """The Struct of one record, with datetime fields parsed natively or kept as str, and
    the contract's rules as its ``__post_init__`` (``structrules``). A contract with object
    or array fields raises UnsupportedContract: the full rules (``nested``) judge it."""
    if contract.has_nested_fields:
        raise UnsupportedContract("object and array fields are checked by the full rules")
    names = [f"f{i}" for i in range(len(contract.fields))]
    try:
        post_init = compile_post_init(contract)  # RulesTooDeep is a ValueError
        return msgspec.defstruct(
            "Record",
            [
                (n, _field_type(s, native_datetimes))
                for n, s in zip(names, contract.fields, strict=True)
            ],
            rename=dict(zip(names, contract.field_names, strict=True)),
            namespace={} if post_init is None else {"__post_init__": post_init},
            forbid_unknown_fields=True,
            gc=False,
        )
    except (TypeError, ValueError) as exc:  # msgspec refused a constraint, or rules too deep
        raise UnsupportedContract(str(exc)) from exc
