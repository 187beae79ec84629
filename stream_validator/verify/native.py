"""The native fast path: decides *valid* for the common payload without building dicts.

At start-up msgspec ``Struct`` types are generated from the contract (``structgen``: types,
bounds via ``Meta``, every field required, unknown fields forbidden, ``gc=False``, the
record rules as ``__post_init__``). Each payload of a chunk is decoded on its own, in one
native loop: ``list.extend(map(decode, rows))``. When a decode raises, the Structs before
it are already in the list, so its length names the failing payload, which goes to the
full rules; the same ``map`` iterator then goes on with the next payload. So a payload is
decoded once, whatever fails around it, and no framing has to prove where a payload ends.
When most of a chunk's first ``PROBE`` payloads fail (a vendor incident), the rest of the
chunk goes to the full rules without a native try.
Whatever the fast path does not accept goes to the full rules, whose verdict is final, so
the fast path may only ever be *stricter* than the rules.

Where msgspec and the rules could differ, the fast path is kept stricter:

* ints must fit in 64 signed bits (orjson widens longer literals to floats, which the
  rules report as ``undecodable``); the int branch of a float field uses the integer
  ceiling/floor of the bounds, so an int is compared exactly, as the rules do.
* datetime fields are parsed by msgspec's datetime decoder, which accepts a subset of
  ``datetime.fromisoformat`` except for a lowercase ``z`` offset. A chunk is sure of
  holding no such ``z`` when it has no backslash (no escapes) and the ``z`` bytes of its
  accepted payloads are exactly those of the declared keys (each accepted payload holds
  every key, literally); otherwise each payload that is not sure on its own is checked
  again with the datetime fields as strings, parsed by ``fromisoformat``.
* duplicate keys: an accepted payload holds the N declared keys, so at least N - 1 commas
  outside strings; when the accepted payloads of a chunk hold exactly N - 1 commas each
  (counted over the chunk, in one pass with the ``z`` bytes above), no key was repeated.
  Otherwise each payload with more is tokenized (``dupkeys``).
* NaN, infinities and out-of-range numbers do not decode; bools are never numbers.
* a str field's ``pattern`` is not in the Struct: each distinct value of a chunk's decoded
  rows is checked once (``ValueCheck.accepts``, the rules' own regex), and the rows holding
  a value that fails go to the full rules.
* payloads that are not ``bytes`` or are over ``max_payload_bytes`` are not decoded.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Sequence
from datetime import datetime
from itertools import accumulate
from operator import attrgetter
from types import SimpleNamespace
from typing import Annotated, Any, Final

import msgspec

from stream_validator.codec import NativeDecodeError, typed_decoder
from stream_validator.contracts.model import SchemaContract
from stream_validator.verify.dupkeys import duplicate_keys
from stream_validator.verify.nativetime import DatetimeField, bad_datetimes, is_aware_iso, is_iso
from stream_validator.verify.recordchecks import Bounds, RecordChecks
from stream_validator.verify.structgen import UnsupportedContract, null_probe, record_struct
from stream_validator.verify.valuecheck import ValueCheck

__all__ = ["CHUNK", "NativeCheck", "UnsupportedContract"]

#: Payloads per screened chunk: large enough that the per-chunk work (one join, a few
#: counts) is amortized, small enough that the joined copy stays small (tens of KB).
CHUNK: Final = 256
#: The first PROBE rows of a chunk are decoded first; when PROBE_DECLINED of them do not
#: decode, the rest of the chunk goes to the full rules without a native try (each failed
#: decode costs 1.4-1.8 µs, and the full rules decide those rows anyway).
PROBE: Final = 32
PROBE_DECLINED: Final = 24
#: Stands in for a payload the fast path does not decode: no JSON text is empty.
_DECLINE: Final = b""


class NativeCheck:
    """Screens chunks of payloads; what it declines goes to the full rules."""

    __slots__ = (
        "_attrs",
        "_blank",
        "_checks",
        "_datetimes",
        "_decode",
        "_decode_text",
        "_fields",
        "_getters",
        "_null_probe",
        "_nullables",
        "_patterns",
        "_z_keys",
        "chunk",
        "max_payload_bytes",
    )

    def __init__(self, contract: SchemaContract, max_payload_bytes: int) -> None:
        text = record_struct(contract, native_datetimes=False)
        has_datetimes = any(s.expected_type is datetime for s in contract.fields)
        native = record_struct(contract, native_datetimes=True) if has_datetimes else text
        try:
            self._decode: Callable[[bytes], Any] = typed_decoder(native)
            self._decode_text: Callable[[bytes], Any] = typed_decoder(text)
        except (TypeError, ValueError) as exc:  # msgspec refused a constraint
            raise UnsupportedContract(str(exc)) from exc
        self._fields = len(contract.fields)
        self.chunk = CHUNK
        self.max_payload_bytes = max_payload_bytes
        self._null_probe = null_probe(contract)
        names = [f"f{i}" for i in range(len(contract.fields))]
        slots = [n for n, s in zip(names, contract.fields, strict=True) if s.is_nullable]
        self._nullables: tuple[Callable[[Any], Any], ...] = tuple(map(attrgetter, slots))
        # Stands in for a payload that did not decode: no field of it is null.
        self._blank = SimpleNamespace(**dict.fromkeys(names, 0))
        aware = Annotated[datetime, msgspec.Meta(tz=True)]
        self._datetimes = tuple(
            DatetimeField(attrgetter(n), typed_decoder(list[aware | None]), is_aware_iso)
            if s.require_timezone
            else DatetimeField(attrgetter(n), typed_decoder(list[datetime | None]), is_iso)
            for n, s in zip(names, contract.fields, strict=True)
            if s.expected_type is datetime
        )
        self._checks = RecordChecks(contract)
        # Str fields whose pattern the Struct leaves out (with allowed, the Literal is exact).
        self._patterns = tuple(
            (attrgetter(n), ValueCheck(s).accepts)
            for n, s in zip(names, contract.fields, strict=True)
            if s.pattern is not None and s.allowed is None
        )
        self._attrs = dict(zip(contract.field_names, names, strict=True))
        self._getters = {s.name: attrgetter(n) for n, s in zip(names, contract.fields, strict=True)}
        # 'z' bytes every payload holds in its keys (UTF-8 never uses 0x7a inside a
        # multi-byte character).
        self._z_keys = sum(name.encode().count(b"z") for name in contract.field_names)

    def screen(
        self,
        part: Sequence[object],
        nulls: list[int],
        bounds: tuple[Bounds, ...] = (),
        decoded: list[Any] | None = None,
    ) -> list[int]:
        """Positions in ``part`` the fast path declines, ascending; nulls of the rest added.

        ``bounds``: the skew windows at the time of validation (``RecordChecks.bounds``);
        rows a window might concern are declined too, like rows whose record rules do not
        surely hold (the full rules decide them).
        ``decoded``: extended with one entry per payload, its Struct (read its fields with
        ``getter``) or None where declined.
        """
        declined = self._screen(part, nulls, bounds, decoded)
        if decoded is not None:
            for position in declined:
                decoded[position - len(part)] = None
        return declined

    def getter(self, *names: str) -> Callable[[Any], Any] | None:
        """Reads field ``names[0]`` of a Struct that ``screen`` put in ``decoded`` (of
        several names: the tuple of their values, as ``attrgetter``); None when one is not
        a contract field."""
        if not names or not set(names) <= self._getters.keys():
            return None
        return attrgetter(*(self._attrs[name] for name in names))

    def _screen(
        self,
        part: Sequence[object],
        nulls: list[int],
        bounds: tuple[Bounds, ...],
        decoded: list[Any] | None,
    ) -> list[int]:
        n = len(part)
        rows: list[bytes] = list(part)  # type: ignore[arg-type]
        if list(map(type, rows)).count(bytes) != n:  # tombstones, other types
            rows = [p if type(p) is bytes else _DECLINE for p in rows]
        joined = b"".join(rows)
        limit = self.max_payload_bytes
        if len(joined) > limit and max(map(len, rows)) > limit:
            rows = [p if len(p) <= limit else _DECLINE for p in rows]
            joined = b"".join(rows)
        structs: list[Any] = []
        declined: list[int] = []
        if n <= PROBE:
            self._decode_into(rows, structs, declined)
        else:
            self._decode_into(rows[:PROBE], structs, declined)
            if len(declined) >= PROBE_DECLINED:
                # Nearly all bad (a vendor incident): the full rules take the rest at once,
                # rather than after a native decode that would fail on nearly every row.
                declined.extend(range(PROBE, n))
                structs.extend([self._blank] * (n - PROBE))
            else:
                self._decode_into(rows[PROBE:], structs, declined)
        if decoded is not None:
            decoded.extend(structs if len(structs) == n else [None] * n)
        if len(structs) != n:  # defence in depth: positions would be off
            return list(range(n))
        if len(declined) == n:
            return declined
        if 2 * len(declined) > n:  # mostly declined: the byte scans read the accepted rows
            skip = set(declined)
            text, skipped = b"".join([row for i, row in enumerate(rows) if i not in skip]), []
        else:  # the whole chunk, less what the declined rows hold
            text, skipped = joined, declined
        bad = set(self._bad(rows, text, skipped, n - len(declined), structs, bounds))
        if self._nullables and self._may_hold_nulls(rows, text, skipped):
            for slot, getter in enumerate(self._nullables):
                nulls[slot] += list(map(getter, structs)).count(None)  # never the blank
            for i in bad:
                for slot, getter in enumerate(self._nullables):
                    nulls[slot] -= getter(structs[i]) is None
        if bad:
            return sorted(bad.union(declined))
        return declined

    def _decode_into(self, rows: list[bytes], structs: list[Any], declined: list[int]) -> None:
        """Append each row's Struct to ``structs``; for a row that does not decode, its
        position (``len(structs)``) to ``declined`` and the blank."""
        more = map(self._decode, rows)
        while True:
            try:
                structs.extend(more)  # keeps the Structs decoded before a failure
                return
            except NativeDecodeError:
                declined.append(len(structs))
                structs.append(self._blank)

    def _may_hold_nulls(self, rows: list[bytes], joined: bytes, declined: list[int]) -> bool:
        """False when no accepted row in ``joined`` holds the null probe (then none holds a
        null); ``joined``: the accepted rows, or all ``rows``, of which ``rows[declined]``
        did not decode."""
        probe = self._null_probe
        if probe is None:
            return True
        at = joined.find(probe)
        if at < 0 or not declined:
            return at >= 0
        ends = list(accumulate(map(len, rows)))  # rows[k] ends at ends[k]
        skip = set(declined)
        while at >= 0:
            k = bisect_right(ends, at)
            if k not in skip:
                return True
            at = joined.find(probe, ends[k])
        return False

    def _bad(
        self,
        rows: list[bytes],
        joined: bytes,
        declined: list[int],
        accepted: int,
        structs: list[Any],
        bounds: tuple[Bounds, ...],
    ) -> list[int]:
        """Decoded rows the full rules must judge all the same: duplicate keys, a datetime
        that may hold a lowercase 'z', a timestamp near or beyond its skew window, a str
        value off its field's pattern.
        ``joined``: the ``accepted`` rows, or all ``rows``, of which ``rows[declined]`` did
        not decode."""
        bad: list[int] = []
        expected = self._fields - 1
        commas, zs = _counts(joined, rows, declined, both=bool(self._datetimes))
        if commas != accepted * expected:
            bad.extend(
                i
                for i, row in enumerate(rows)
                if structs[i] is not self._blank
                and row.count(b",") != expected
                and duplicate_keys(row)
            )
        if self._datetimes and not self._datetimes_sure(joined, zs, accepted):
            # The native parser may have taken a lowercase 'z': parse the strings again.
            bad.extend(
                i
                for i, row in enumerate(rows)
                if structs[i] is not self._blank
                and not self._datetimes_sure(row, row.count(b"z"), 1)
                and bad_datetimes(self._datetimes, [self._decode_text(row)])
            )
        for getter, accepts in self._patterns:
            values = list(map(getter, structs))  # the blank's 0 and nulls are never str
            failing = {v for v in set(values) if type(v) is str and not accepts(v)}
            if failing:
                bad.extend(i for i, v in enumerate(values) if v in failing)
        if bounds:
            live = [i for i, s in enumerate(structs) if s is not self._blank]
            near = self._checks.screen([structs[i] for i in live], self._getters, bounds)
            bad.extend(live[j] for j in near)
        return bad

    def _datetimes_sure(self, text: bytes, zs: int, accepted: int) -> bool:
        """True when no datetime value of the ``accepted`` decoded payloads in ``text``
        holds a 'z'; ``zs``: the 'z' bytes of those payloads."""
        if text.find(b"\\") >= 0:
            return False  # an escape could spell a 'z' (or a key)
        # Every accepted payload holds each declared key, unescaped.
        return zs == accepted * self._z_keys


#: Every byte but ',' and 'z': deleting these leaves the two bytes a chunk's checks count,
#: one pass over the chunk for both (``bytes.count`` takes a pass per byte counted).
_UNCOUNTED: Final = bytes(sorted(set(range(256)) - set(b",z")))


def _counts(
    joined: bytes, rows: list[bytes], declined: list[int], *, both: bool
) -> tuple[int, int]:
    """Commas and (when ``both``; else 0) 'z' bytes in ``joined`` less ``rows[declined]``."""
    if not both:
        return joined.count(b",") - sum([rows[i].count(b",") for i in declined]), 0
    kept = joined.translate(None, _UNCOUNTED)
    commas = kept.count(b",")
    zs = len(kept) - commas
    for i in declined:
        commas -= rows[i].count(b",")
        zs -= rows[i].count(b"z")
    return commas, zs
