"""The native fast path: decides *valid* for the common payload without building dicts.

At start-up msgspec ``Struct`` types are generated from the contract (``structgen``: types,
bounds via ``Meta``, every field required, unknown fields forbidden, ``gc=False``). A chunk
of payloads is framed as ``[[p0]\\n,[p1]\\n,...]`` and decoded in one native call into
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

A failed decode does not cost a second pass over the payloads before the failure (see
``window``): the error names an element (or a byte), the payload there goes to the rules,
and the decode resumes in place after it. The runs decoded so far are settled once, at
the end of the chunk, by one comma count over all of them. It proves two things at once.
First, no key was repeated (below). Second, the elements msgspec completed before each
failure were exactly the payloads before it: strings cannot cross the raw newline, and a
Struct is flat, so a payload out of step with the framing holds ``m >= 2`` whole objects
and the ``m - 1`` commas between them, ``(m - 1) * N`` commas beyond the ``N - 1`` of one
record (N: declared fields). Each extra element shifts the payloads taken as complete
by one, and a payload wrongly taken lacks at most ``N - 1`` commas, so the count over the
runs exceeds ``N - 1`` per payload (plus the separators) whenever any run was out of step.
When the count is off, each run is settled on its own, and a run whose payloads hold a
``]`` byte is decoded again as a run of its own to prove it.

Where msgspec and the rules could differ, the fast path is kept stricter:

* ints must fit in 64 signed bits (orjson widens longer literals to floats, which the
  rules report as ``undecodable``); the int branch of a float field uses the integer
  ceiling/floor of the bounds, so an int is compared exactly, as the rules do.
* datetime fields are parsed by msgspec's datetime decoder, which accepts a subset of
  ``datetime.fromisoformat`` except for a lowercase ``z`` offset. A run of payloads is
  sure of holding no such ``z`` when it has no backslash (no escapes) and its ``z`` bytes
  are exactly those of the declared keys; any other run is checked again with the
  datetime fields as strings, each parsed by ``fromisoformat`` when it holds a ``z``.
* duplicate keys: n payloads of N members have at least n * N - 1 commas in the framed
  run (see ``dupkeys``); when the count is exactly that, no key was repeated.
* NaN, infinities and out-of-range numbers do not decode; bools are never numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from operator import attrgetter, itemgetter
from typing import Annotated, Any, Final

import msgspec

from stream_validator.codec import NativeDecodeError, typed_decoder
from stream_validator.contracts.model import SchemaContract
from stream_validator.verify import window
from stream_validator.verify.dupkeys import duplicate_keys
from stream_validator.verify.nativetime import DatetimeField, bad_datetimes, is_aware_iso, is_iso
from stream_validator.verify.recordchecks import Bounds, RecordChecks
from stream_validator.verify.structgen import UnsupportedContract, null_probe, record_struct

__all__ = ["CHUNK", "NativeCheck", "UnsupportedContract"]

#: Payloads per screened chunk: large enough that the per-chunk work is amortized, small
#: enough that the framed copy stays small (a few hundred KB).
CHUNK: Final = 256
_first = itemgetter(0)
#: Payloads a..b-1 decoded in one run from framed[lo:hi], and their Structs when at hand.
Run = tuple[int, int, int, int, "list[tuple[Any]] | None"]


class NativeCheck:
    """Screens chunks of payloads; what it declines goes to the full rules."""

    __slots__ = (
        "_checks",
        "_datetimes",
        "_decode_one",
        "_decode_rows",
        "_decode_text_rows",
        "_fields",
        "_getters",
        "_null_probe",
        "_nullables",
        "_z_keys",
        "chunk",
        "max_payload_bytes",
    )

    def __init__(self, contract: SchemaContract, max_payload_bytes: int) -> None:
        text = record_struct(contract, native_datetimes=False)
        has_datetimes = any(s.expected_type is datetime for s in contract.fields)
        native = record_struct(contract, native_datetimes=True) if has_datetimes else text
        try:
            self._decode_rows: Callable[[Any], list[tuple[Any]]] = typed_decoder(
                list[tuple[native]]  # type: ignore[valid-type]
            )
            self._decode_text_rows: Callable[[Any], list[tuple[Any]]] = typed_decoder(
                list[tuple[text]]  # type: ignore[valid-type]
            )
            self._decode_one: Callable[[bytes], Any] = typed_decoder(text)
        except (TypeError, ValueError) as exc:  # msgspec refused a constraint
            raise UnsupportedContract(str(exc)) from exc
        self._fields = len(contract.fields)
        self.chunk = CHUNK
        self.max_payload_bytes = max_payload_bytes
        self._null_probe = null_probe(contract)
        names = [f"f{i}" for i in range(len(contract.fields))]
        slots = [n for n, s in zip(names, contract.fields, strict=True) if s.is_nullable]
        self._nullables: tuple[Callable[[Any], Any], ...] = tuple(map(attrgetter, slots))
        aware = Annotated[datetime, msgspec.Meta(tz=True)]
        self._datetimes = tuple(
            DatetimeField(attrgetter(n), typed_decoder(list[aware | None]), is_aware_iso)
            if s.require_timezone
            else DatetimeField(attrgetter(n), typed_decoder(list[datetime | None]), is_iso)
            for n, s in zip(names, contract.fields, strict=True)
            if s.expected_type is datetime
        )
        self._checks = RecordChecks(contract)
        self._getters = {s.name: attrgetter(n) for n, s in zip(names, contract.fields, strict=True)}
        # 'z' bytes every payload holds in its keys (UTF-8 never uses 0x7a inside a
        # multi-byte character).
        self._z_keys = sum(name.encode().count(b"z") for name in contract.field_names)

    def screen(
        self, part: Sequence[object], nulls: list[int], bounds: tuple[Bounds, ...] = ()
    ) -> list[int]:
        """Positions in ``part`` the fast path declines, ascending; nulls of the rest added.

        ``bounds``: the skew windows at the time of validation (``RecordChecks.bounds``);
        rows a window might concern are declined too, like rows whose record rules do not
        surely hold (the full rules decide them).
        """
        post = bounds or None  # the rules are checked in the decode (structrules)
        declined: list[int] = []
        n = len(part)
        if n == 0:
            return declined
        if list(map(type, part)).count(bytes) != n:
            self._each(part, 0, n, nulls, declined, post)  # tombstones, non-bytes
            return declined
        rows: list[bytes] = list(part)  # type: ignore[arg-type]
        framed = window.frame(rows)
        # The payloads together are no larger than the limit, or one by one they may be.
        if len(framed) > self.max_payload_bytes and max(map(len, rows)) > self.max_payload_bytes:
            self._each(rows, 0, n, nulls, declined, post)  # oversized
            return declined
        try:
            decoded = self._decode_rows(framed)
        except NativeDecodeError as exc:
            self._resume(framed, rows, str(exc), nulls, declined, post)
            return declined
        if len(decoded) != n:
            self._each(rows, 0, n, nulls, declined, post)
        else:
            end = len(framed) - len(window.CLOSE)
            self._settle(framed, rows, 0, n, window.FIRST, end, decoded, nulls, declined, post)
        return declined

    def _resume(
        self,
        framed: bytearray,
        rows: list[bytes],
        message: str,
        nulls: list[int],
        declined: list[int],
        post: tuple[Bounds, ...] | None,
    ) -> None:
        """The decode of ``framed`` failed with ``message``: decline the payload it names,
        decode the rest in place after it, and so on; then settle the decoded runs at once."""
        n = len(rows)
        step = window.STEP
        starts: list[int] | None = None  # every payload's start, for a byte to look up
        runs: list[Run] = []
        a, pos = 0, window.FIRST  # the run being decoded: its first payload, where it starts
        while True:
            k = window.failed_element(message)
            if k is not None:
                f = last = a + k
                if f >= n:
                    self._each(rows, a, n, nulls, declined, post)
                    break
                f_pos = pos + sum(map(len, rows[a:f])) + step * (f - a)
            else:
                if starts is None:
                    starts = window.starts(rows)
                found = window.near_byte(message, starts, a)
                if found is None:
                    self._each(rows, a, n, nulls, declined, post)
                    break
                f, last = found
                f_pos = starts[f]
            if f > a:
                runs.append((a, f, pos, f_pos - step, None))
            if last > f:  # near a syntax error: one at a time, the last to the rules
                self._each(rows, f, last, nulls, declined, post)
            declined.append(last)  # almost surely bad: the rules will say
            a = last + 1
            if a == n:
                break
            pos = f_pos + sum(map(len, rows[f:a])) + step * (a - f)
            try:
                decoded = self._decode_rows(window.resume(framed, pos))
            except NativeDecodeError as exc:
                message = str(exc)
                continue
            if len(decoded) != n - a:
                self._each(rows, a, n, nulls, declined, post)
            else:
                runs.append((a, n, pos, len(framed) - len(window.CLOSE), decoded))
            break
        if runs:
            self._settle_runs(framed, rows, runs, nulls, declined, post)
        declined.sort()

    def _settle_runs(
        self,
        framed: bytearray,
        rows: list[bytes],
        runs: list[Run],
        nulls: list[int],
        declined: list[int],
        post: tuple[Bounds, ...] | None,
    ) -> None:
        """Settle the runs ``_resume`` decoded: one test over all of them when it proves
        that no key was repeated and no datetime holds a 'z' (see the module docstring for
        why it also proves each run's elements are its payloads); else run by run."""
        spans = [(lo, hi) for _, _, lo, hi, _ in runs]
        covered = sum(b - a for a, b, _, _, _ in runs)
        count = framed.count
        sure = post is None and sum(count(b",", lo, hi) for lo, hi in spans) == (
            covered * self._fields - len(runs)
        )
        if sure and self._datetimes:
            if framed.find(b"\\") >= 0:
                sure = False
            elif self._z_keys:
                sure = sum(count(b"z", lo, hi) for lo, hi in spans) == covered * self._z_keys
            else:
                sure = all(framed.find(b"z", lo, hi) < 0 for lo, hi in spans)
        if not sure:
            for a, b, lo, hi, decoded in runs:
                if decoded is None and window.span(rows, a, b)[1]:
                    self._prove(framed, rows, a, b, lo, hi, nulls, declined, post)
                else:
                    self._settle(framed, rows, a, b, lo, hi, decoded, nulls, declined, post)
            return
        if not self._nullables:
            return
        probe = self._null_probe
        for _, _, lo, hi, decoded in runs:
            if probe is not None and framed.find(probe, lo, hi) < 0:
                continue
            if decoded is None:
                decoded = self._decode_text_rows(window.run_bytes(framed, lo, hi))
            structs = list(map(_first, decoded))
            for slot, getter in enumerate(self._nullables):
                nulls[slot] += list(map(getter, structs)).count(None)

    def _prove(
        self,
        framed: bytearray,
        rows: list[bytes],
        a: int,
        b: int,
        lo: int,
        hi: int,
        nulls: list[int],
        declined: list[int],
        post: tuple[Bounds, ...] | None,
    ) -> None:
        """Decode rows[a:b] (framed[lo:hi]) again, as a run of their own."""
        try:
            decoded = self._decode_rows(window.run_bytes(framed, lo, hi))
        except NativeDecodeError:
            decoded = []
        if len(decoded) != b - a:
            self._each(rows, a, b, nulls, declined, post)
        else:
            self._settle(framed, rows, a, b, lo, hi, decoded, nulls, declined, post)

    def _settle(
        self,
        framed: bytearray,
        rows: list[bytes],
        a: int,
        b: int,
        lo: int,
        hi: int,
        decoded: list[tuple[Any]] | None,
        nulls: list[int],
        declined: list[int],
        post: tuple[Bounds, ...] | None,
    ) -> None:
        """Rows a..b-1 decoded (their Structs in ``decoded`` when at hand) from framed[lo:hi]:
        decline the duplicate keys and dubious datetimes among them, count the rest's nulls."""
        bad: set[int] = set()
        if framed.count(b",", lo, hi) != (b - a) * self._fields - 1:
            expected = self._fields - 1
            bad.update(
                i
                for i in range(a, b)
                if rows[i].count(b",") != expected and duplicate_keys(rows[i])
            )
        structs = None if decoded is None else list(map(_first, decoded))
        if self._datetimes and not self._datetimes_sure(framed, lo, hi, b - a):
            # The native parser may have taken a lowercase 'z': parse the strings again.
            structs = list(map(_first, self._decode_text_rows(window.run_bytes(framed, lo, hi))))
            bad.update(a + i for i in bad_datetimes(self._datetimes, structs))
        if post is not None:
            if structs is None:
                structs = list(
                    map(_first, self._decode_text_rows(window.run_bytes(framed, lo, hi)))
                )
            bad.update(a + i for i in self._checks.screen(structs, self._getters, post))
        probe = self._null_probe
        if self._nullables and (probe is None or framed.find(probe, lo, hi) >= 0):
            if structs is None:
                structs = list(
                    map(_first, self._decode_text_rows(window.run_bytes(framed, lo, hi)))
                )
            if bad:
                structs = [s for i, s in enumerate(structs, a) if i not in bad]
            for slot, getter in enumerate(self._nullables):
                nulls[slot] += list(map(getter, structs)).count(None)
        if bad:
            declined.extend(sorted(bad))

    def _datetimes_sure(self, framed: bytearray, lo: int, hi: int, count: int) -> bool:
        """True when no datetime value in framed[lo:hi] (whole payloads) holds a 'z'."""
        if framed.find(b"\\", lo, hi) >= 0:
            return False  # an escape could spell a 'z' (or a key)
        if not self._z_keys:
            return framed.find(b"z", lo, hi) < 0
        # Every payload there decoded, so it holds each declared key, unescaped.
        return framed.count(b"z", lo, hi) == count * self._z_keys

    def _each(
        self,
        part: Sequence[object],
        lo: int,
        hi: int,
        nulls: list[int],
        declined: list[int],
        post: tuple[Bounds, ...] | None,
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
            if (
                (payload.count(b",") != self._fields - 1 and duplicate_keys(payload))
                or (self._datetimes and bad_datetimes(self._datetimes, [struct]))
                or (post is not None and self._checks.screen([struct], self._getters, post))
            ):
                declined.append(i)
                continue
            for slot, getter in enumerate(self._nullables):
                if getter(struct) is None:
                    nulls[slot] += 1
