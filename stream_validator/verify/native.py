"""The native fast path: decides *valid* for the common payload without building dicts.

At start-up a msgspec ``Struct`` is generated from the contract (types, bounds via
``Meta``, every field required, unknown fields forbidden, ``gc=False``). A chunk of
payloads is decoded in one native call as ``[[p0]\\n,[p1]\\n,...]`` into
``list[tuple[Struct]]``. Whatever the fast path does not accept goes to the full rules,
whose verdict is final, so the fast path may only ever be *stricter* than the rules.

Why a decoded element is exactly its own payload: the separator ``]\\n,[`` holds a raw
newline, which no JSON string may contain, so no string spans a payload boundary. Each
Struct is a flat object (scalar values only; anything else fails to decode), so the only
brackets outside strings are those of the framing: n payloads give n + 1 of each, and a
successful decode into n one-element arrays consumes exactly those. Hence the k-th inner
array is the k-th framing pair, and the k-th payload is one object with whitespace around
it, i.e. a JSON text of its own. A payload such as ``{"a":1}],[{"b":2}`` changes the count
of arrays and fails the decode (or the length check).

Where msgspec and the rules could differ, the fast path is kept stricter:

* ints must fit in 64 signed bits (orjson widens longer literals to floats, which the
  rules report as ``undecodable``); the int branch of a float field uses the integer
  ceiling/floor of the bounds, so an int is compared exactly, as the rules do.
* datetime fields are decoded as strings, then parsed by msgspec's datetime decoder, which
  accepts a subset of ``datetime.fromisoformat`` except for a lowercase ``z`` offset;
  strings holding a ``z`` (or failing) are parsed by ``fromisoformat`` itself.
* duplicate keys: n payloads of N members have at least n * N - 1 commas in the framed
  chunk (see ``dupkeys``); when the count is exactly that, no key was repeated.
* NaN, infinities and out-of-range numbers do not decode; bools are never numbers.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from datetime import datetime
from itertools import accumulate
from operator import attrgetter, itemgetter
from typing import Annotated, Any, Final

import msgspec

from stream_validator.codec import NativeDecodeError, typed_decoder
from stream_validator.codec import encode_json as _encode_json
from stream_validator.contracts.model import FieldSpec, SchemaContract
from stream_validator.verify.dupkeys import duplicate_keys

CHUNK: Final = 256
_FRAME_OPEN: Final = b"[["
_FRAME_SEP: Final = b"]\n,["
_FRAME_CLOSE: Final = b"]]"
_INT64_MIN: Final = -(2**63)
_INT64_MAX: Final = 2**63 - 1
_ELEMENT: Final = re.compile(r"at `\$\[(\d+)\]")
_BYTE: Final = re.compile(r"\(byte (\d+)\)")
_first = itemgetter(0)


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


def _field_type(spec: FieldSpec) -> Any:
    lo, hi = spec.min_value, spec.max_value
    for bound in (lo, hi):
        if bound is not None and not math.isfinite(bound):
            raise UnsupportedContract("non-finite bound")
    tp: Any
    if spec.expected_type is bool:
        tp = bool
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


def _null_probe(contract: SchemaContract) -> bytes | None:
    """A byte of ``null`` that no declared name holds: absent from a chunk means no nulls."""
    names = "".join(contract.field_names)
    has_bool = any(spec.expected_type is bool for spec in contract.fields)
    for letter in ("n", "u", "l") if has_bool else ("u", "n", "l"):
        if letter not in names:
            return letter.encode()
    return None


def _iso_or_none(value: str | None) -> bool:
    return value is None or _is_iso(value)


def _is_iso(text: str) -> bool:
    try:
        datetime.fromisoformat(text)
    except ValueError:
        return False
    return True


class NativeCheck:
    """Screens chunks of payloads; what it declines goes to the full rules."""

    __slots__ = (
        "_datetimes",
        "_decode_datetimes",
        "_decode_one",
        "_decode_rows",
        "_fields",
        "_null_probe",
        "_nullables",
        "chunk",
        "max_payload_bytes",
    )

    def __init__(self, contract: SchemaContract, max_payload_bytes: int) -> None:
        names = [f"f{i}" for i in range(len(contract.fields))]
        try:
            struct = msgspec.defstruct(
                "Record",
                [(n, _field_type(s)) for n, s in zip(names, contract.fields, strict=True)],
                rename=dict(zip(names, contract.field_names, strict=True)),
                forbid_unknown_fields=True,
                gc=False,
            )
            self._decode_rows: Callable[[bytes], list[tuple[Any]]] = typed_decoder(
                list[tuple[struct]]  # type: ignore[valid-type]
            )
            self._decode_one: Callable[[bytes], Any] = typed_decoder(struct)
        except (TypeError, ValueError) as exc:  # msgspec refused a constraint
            raise UnsupportedContract(str(exc)) from exc
        self._fields = len(contract.fields)
        self.chunk = CHUNK
        self.max_payload_bytes = max_payload_bytes
        self._null_probe = _null_probe(contract)
        slots = [n for n, s in zip(names, contract.fields, strict=True) if s.is_nullable]
        self._nullables: tuple[tuple[int, Callable[[Any], Any]], ...] = tuple(
            (slot, attrgetter(n)) for slot, n in enumerate(slots)
        )
        self._decode_datetimes = typed_decoder(list[datetime | None])
        self._datetimes: tuple[Callable[[Any], Any], ...] = tuple(
            attrgetter(n)
            for n, s in zip(names, contract.fields, strict=True)
            if s.expected_type is datetime
        )

    def screen(self, part: Sequence[object], nulls: list[int]) -> list[int]:
        """Positions in ``part`` the fast path declines, ascending; nulls of the rest added."""
        declined: list[int] = []
        n = len(part)
        if n == 0:
            return declined
        if set(map(type, part)) != {bytes}:
            self._each(part, 0, n, nulls, declined)  # tombstones, non-bytes
            return declined
        payloads: list[bytes] = list(part)  # type: ignore[arg-type]
        if max(map(len, payloads)) > self.max_payload_bytes:
            self._each(payloads, 0, n, nulls, declined)  # oversized
            return declined
        # Windows shrink after a failure and grow after a success, so a failure wastes
        # (re-decodes) a short prefix where bad records are dense and clean runs go fast.
        lo, window = 0, self.chunk
        while lo < n:
            hi = min(n, lo + window)
            failed = self._window(payloads, lo, hi, nulls, declined)
            if failed is None:
                lo, window = hi, min(window * 2, self.chunk)
                continue
            if failed > lo and self._window(payloads, lo, failed, nulls, declined) is not None:
                self._each(payloads, lo, failed, nulls, declined)
            declined.append(failed)  # almost surely bad: the rules will say
            lo, window = failed + 1, max(window // 2, 32)
        return declined

    def _window(
        self, payloads: list[bytes], lo: int, hi: int, nulls: list[int], declined: list[int]
    ) -> int | None:
        """Decode payloads[lo:hi] at once; None when settled, else where to split."""
        rows = payloads[lo:hi]
        # The framing bytes go onto the first and last payload only (one big copy).
        framed = _FRAME_SEP.join(
            [_FRAME_OPEN + rows[0], *rows[1:-1], rows[-1] + _FRAME_CLOSE]
            if len(rows) > 1
            else [_FRAME_OPEN + rows[0] + _FRAME_CLOSE]
        )
        try:
            decoded = self._decode_rows(framed)
        except NativeDecodeError as exc:
            failed = _failed_at(str(exc), rows)
            if failed is None:
                self._each(payloads, lo, hi, nulls, declined)
                return None
            return lo + failed
        if len(decoded) != len(rows):
            self._each(payloads, lo, hi, nulls, declined)
            return None
        self._settle(framed, rows, list(map(_first, decoded)), lo, nulls, declined)
        return None

    def _settle(
        self,
        framed: bytes,
        payloads: list[bytes],
        structs: list[Any],
        lo: int,
        nulls: list[int],
        declined: list[int],
    ) -> None:
        n = len(payloads)
        bad: set[int] = set()
        if framed.count(b",") != n * self._fields - 1:
            expected = self._fields - 1
            bad.update(
                i for i, p in enumerate(payloads) if p.count(b",") != expected and duplicate_keys(p)
            )
        if self._datetimes:
            bad.update(self._bad_datetimes(structs))
        if bad:
            keep = [i for i in range(n) if i not in bad]
            structs = [structs[i] for i in keep]
            declined.extend(sorted(lo + i for i in bad))
        probe = self._null_probe
        if self._nullables and (probe is None or framed.find(probe) >= 0):
            for slot, getter in self._nullables:
                nulls[slot] += list(map(getter, structs)).count(None)

    def _bad_datetimes(self, structs: list[Any]) -> list[int]:
        bad: list[int] = []
        for getter in self._datetimes:
            values = list(map(getter, structs))
            if "z" in "".join([v for v in values if v is not None]):
                bad.extend(i for i, v in enumerate(values) if v is not None and not _is_iso(v))
                continue
            start = 0
            while start < len(values):
                try:
                    self._decode_datetimes(_encode_json(values[start:]))
                    break
                except (NativeDecodeError, TypeError) as exc:  # TypeError: not encodable
                    match = _ELEMENT.search(str(exc))
                    if match is None:  # cannot tell which: ask fromisoformat about each
                        bad.extend(
                            i for i in range(start, len(values)) if not _iso_or_none(values[i])
                        )
                        break
                    failed = start + int(match.group(1))
                    if not _iso_or_none(values[failed]):
                        bad.append(failed)
                    start = failed + 1
        return bad

    def _each(
        self, part: Sequence[object], lo: int, hi: int, nulls: list[int], declined: list[int]
    ) -> None:
        """One payload at a time (no framing): for chunks that cannot be decoded at once."""
        for i in range(lo, hi):
            payload = part[i]
            if type(payload) is not bytes or len(payload) > self.max_payload_bytes:
                declined.append(i)
                continue
            assert isinstance(payload, bytes)
            try:
                struct = self._decode_one(payload)
            except NativeDecodeError:
                declined.append(i)
                continue
            if (payload.count(b",") != self._fields - 1 and duplicate_keys(payload)) or (
                self._datetimes and self._bad_datetimes([struct])
            ):
                declined.append(i)
                continue
            for slot, getter in self._nullables:
                if getter(struct) is None:
                    nulls[slot] += 1


def _failed_at(message: str, payloads: list[bytes]) -> int | None:
    """Which payload a failed chunk decode points at (a hint: the caller re-proves the rest)."""
    match = _ELEMENT.search(message)
    if match is not None:
        index = int(match.group(1))
        return index if index < len(payloads) else None
    match = _BYTE.search(message)
    if match is None:
        return None
    offset = int(match.group(1))
    # Payload k starts at 2 + sum(len(p_j) for j < k) + 4 * k; the byte belongs to the
    # last payload starting at or before it (its trailing separator included).
    ends = list(accumulate(map(len, payloads), initial=0))
    sep = len(_FRAME_SEP)
    index = bisect_right(range(len(payloads)), offset, key=lambda k: 2 + ends[k] + sep * k) - 1
    return min(max(index, 0), len(payloads) - 1)
