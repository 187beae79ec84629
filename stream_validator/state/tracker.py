"""Per-symbol state of a market-data stream: sequence, event time, frozen quotes.

Settings come from ``contracts.statespec.SymbolStateSpec`` (the contract's ``state``).

PURE: no clock and no I/O; every time is passed in (the record's event time: epoch
seconds, or an aware datetime -- one kind per tracker, as one contract field gives), so a
replay gives the same events as the live run. Datetimes are compared as they are and
subtracted exactly, so the common case pays no conversion to seconds. What must hold:

* State is keyed by (partition, symbol). ``drop(partition)`` forgets a revoked
  partition's symbols, so the first record after an assignment starts fresh (no event).
* Memory is bounded: at most ``max_symbols`` keys (least recently seen evicted first,
  counted in ``evictions``; an evicted symbol starts fresh too). Pending holes are kept
  as ranges: a jump adds one however far it goes (a jump of 10**9 under a window of 10**9
  used to list every missing number, 16 GB for one record), and only a late number inside
  a range adds another. A symbol holds at most ``max_holes`` ranges, all symbols
  ``max_holes_total``: past either, the symbol adding one gives up its own lowest ranges
  (the new one when it has no other), a ``sequence_holes_given_up`` event counting their
  numbers as missed. A symbol's ranges are one flat list: finding a number's range is a
  bisect, and filling or splitting one moves at most 2 * ``max_holes`` pointers. A key
  over ``MAX_KEY_CHARS`` characters is held as ``compact_key`` (its start and a digest).
  A healthy symbol holds no hole list (its rarer sequence state is made on first need).
* Sequence (an int per symbol) must increase by one. A hole is ``sequence_gap`` once it
  is more than ``sequence_window`` numbers behind the highest seen (0: at once); a late
  number inside the window fills its hole silently. A number inside the window below a
  hole given up, and in no pending hole, is ``sequence_late`` (late for the hole given up,
  or a repeat: the state cannot tell) and leaves the state alone. Any other number already
  passed (a repeat, or older than the window) is ``sequence_regression`` and leaves the
  state alone, unless ``resync_after`` such numbers in a row are increasing: then the feed
  restarted its numbering and the state follows it.
* Event time must not go back more than ``max_time_regression_s`` behind the latest seen
  for the symbol (``event_time_regression``).
* Frozen quote: the same quote (e.g. price, bid, ask) on more than ``frozen_max_updates``
  updates in a row, or for more than ``frozen_max_s`` of event time, gives one
  ``frozen_quote`` event per episode; a different quote ends the episode. Time is the
  symbol's latest event time, so a record whose time went back does not stretch it. A
  quote holding NaN never counts as frozen (NaN is reported by the non-finite rates).

Events carry the symbol for examples in batch events; counts go per contract and kind,
never per symbol (``EventTally``).
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left, bisect_right
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Final

from stream_validator.contracts.statespec import SymbolStateSpec
from stream_validator.verify.report import Violation
from stream_validator.verify.symbolevents import EventTally, SymbolEvent, SymbolEventKind

__all__ = [
    "EventTally",
    "EventTime",
    "SymbolEvent",
    "SymbolEventKind",
    "SymbolStateTracker",
    "distrusted",
    "event_moment",
    "event_seconds",
]

#: An event time: epoch seconds, or an aware datetime (one kind per tracker).
EventTime = float | datetime


_NO_EVENTS: Final[tuple[SymbolEvent, ...]] = ()
#: What a record feeds the state in full (``observe_record``'s ``distrust``).
TRUSTED: Final[frozenset[str]] = frozenset()
#: A record that feeds the state nothing (``distrusted``).
UNFED: Final[frozenset[str]] = frozenset({"key"})
_NO_PARTITION: Final = object()  # before the first record of a batch
_NO_SYMBOLS: Final[dict[str, Any]] = {}  # a partition not held yet (never written)


class _Gaps:
    """A symbol's sequence state beyond its highest number: held only while it has pending
    holes, a renumbering streak, or given-up holes still inside the window."""

    __slots__ = ("candidate", "holes", "mark", "streak")

    def __init__(self) -> None:
        # missing numbers inside the window, flat: ascending, disjoint, non-adjacent ranges
        # [start, end) as start0, end0, start1, end1, ... (an odd bisect position: inside one)
        self.holes: list[int] = []
        self.streak = 0  # increasing regressions in a row (a renumbered feed?)
        self.candidate = 0  # the last of those
        self.mark: int | None = None  # holes given up lay below this number


class _Symbol:
    """The mutable state of one (partition, symbol); the sequence's rarer state lazily."""

    __slots__ = ("alerted", "gaps", "high", "latest", "quote", "seen", "since", "updates")

    def __init__(self, stamp: int) -> None:
        self.high: int | None = None  # highest sequence number seen
        self.gaps: _Gaps | None = None
        self.latest: EventTime | None = None  # latest event time seen
        self.quote: tuple[object, ...] | None = None
        self.updates = 0  # updates in a row carrying ``quote``
        self.since: EventTime | None = None  # event time of the first of them
        self.alerted = False
        self.seen = stamp  # the tracker's clock when last observed (LRU order)


#: A partition's symbols: a dict, in LRU order (an OrderedDict) while the bound is near.
_Symbols = dict[str, _Symbol]


class SymbolStateTracker:
    """Per-(partition, symbol) state for one contract; ``observe`` once per valid record."""

    def __init__(self, spec: SymbolStateSpec) -> None:
        self.spec = spec
        self.evictions = 0
        self.holes_given_up = 0  # hole ranges given up to the bounds (their numbers: events)
        # State per partition, then per symbol (no (partition, symbol) tuple per key). LRU
        # by stamps: every observe stamps its state with the clock. Far below the bound no
        # eviction can happen: the dicts are plain and a healthy feed pays a stamp, not a
        # reordering, per record. On reaching the bound ("exact") each becomes an
        # OrderedDict sorted by stamps and kept in LRU order (move_to_end); the least
        # recently seen key is then the oldest of the partitions' first keys.
        self._parts: dict[Hashable, _Symbols] = {}
        self._count = 0
        self._holes = 0  # hole ranges held, all symbols
        self._clock = 0
        self._exact = False
        frozen_on = spec.frozen_max_updates is not None or spec.frozen_max_s is not None
        self._quote_fields = spec.quote_fields if frozen_on else ()

    def __len__(self) -> int:
        return self._count

    @property
    def holes(self) -> int:
        """Pending hole ranges held, all symbols (at most ``spec.max_holes_total``)."""
        return self._holes

    def observe(
        self,
        partition: Hashable,
        symbol: str,
        *,
        seq: int | None = None,
        event_time: EventTime | None = None,
        quote: Sequence[object] | None = None,
    ) -> tuple[SymbolEvent, ...]:
        """Fold one record into its symbol's state; the events it raises (usually none)."""
        self._clock += 1
        symbols = self._parts.get(partition)
        state = symbols.get(symbol) if symbols is not None else None
        if state is None:
            state, symbol = self._missed(partition, symbol, self._clock)
        else:
            state.seen = self._clock
            if self._exact:
                symbols.move_to_end(symbol)  # type: ignore[union-attr]  # an OrderedDict
        events: list[SymbolEvent] = []
        if seq is not None:
            high = state.high
            if high is not None and seq == high + 1 and state.gaps is None:
                state.high = seq  # the common case, inline
            else:
                self._sequence(state, symbol, seq, events)
        if event_time is not None and event_time == event_time:
            latest = state.latest
            if latest is None or event_time > latest:  # type: ignore[operator]  # one kind
                state.latest = event_time
            else:
                self._event_time(state, symbol, event_time, events)
        if quote is not None:
            # The symbol's latest event time, not this record's: a stale record (an epoch
            # timestamp) inside a quiet stretch must not make the quote look held for decades.
            self._frozen(state, symbol, tuple(quote), state.latest, events)
        return tuple(events) if events else _NO_EVENTS

    def observe_columns(
        self,
        partitions: Sequence[Hashable],
        keys: Sequence[str],
        seqs: Sequence[int | None],
        times: Sequence[EventTime | None],
        quotes: Sequence[tuple[object, ...] | None] | None = None,
    ) -> list[tuple[int, tuple[SymbolEvent, ...]]]:
        """``observe(partitions[i], keys[i], seq=seqs[i], event_time=times[i],
        quote=quotes[i])`` for each record in order (``quotes`` None: no quotes); the
        (position, events) of the records that raised any.

        Same state and events as one ``observe`` per record: the common case (next seq,
        later time, a different quote) runs inline, every other case calls the same
        helpers. Columns, not rows: the caller takes them out in C (``map`` over getters).
        """
        out: list[tuple[int, tuple[SymbolEvent, ...]]] = []
        events: list[SymbolEvent] = []
        parts, missed = self._parts, self._missed
        start = self._clock + 1
        self._clock += len(keys)
        exact = self._exact
        held_column = quotes if quotes is not None else [None] * len(keys)
        current: object = _NO_PARTITION
        symbols: _Symbols = {}
        for stamp, (partition, symbol, seq, event_time, held) in enumerate(
            zip(partitions, keys, seqs, times, held_column, strict=True), start
        ):
            if partition != current:  # a batch mostly holds runs of one partition
                current, symbols = partition, parts.get(partition, _NO_SYMBOLS)
            try:
                state = symbols[symbol]
            except KeyError:  # new, or held compact (a try costs nothing when nothing is raised)
                state, symbol = missed(partition, symbol, stamp)
                exact = self._exact
                current = _NO_PARTITION  # its dict may be new, or an OrderedDict now
            else:
                state.seen = stamp
                if exact:
                    symbols.move_to_end(symbol)  # type: ignore[attr-defined]  # OrderedDict
            if seq is not None:
                high = state.high
                if high is not None and seq == high + 1 and state.gaps is None:
                    state.high = seq
                else:
                    self._sequence(state, symbol, seq, events)
            if event_time is not None:
                latest = state.latest
                if latest is not None and event_time > latest:  # type: ignore[operator]
                    state.latest = event_time
                elif event_time == event_time:  # NaN: no time
                    self._event_time(state, symbol, event_time, events)
            if held is not None:
                if held != state.quote:
                    state.quote, state.updates, state.since = held, 1, state.latest
                    if state.alerted:
                        state.alerted = False
                else:
                    self._frozen(state, symbol, held, state.latest, events)
            if events:
                out.append((stamp - start, tuple(events)))
                events.clear()
        return out

    def observe_record(
        self,
        partition: Hashable,
        record: Mapping[str, object],
        distrust: frozenset[str] = TRUSTED,
    ) -> tuple[SymbolEvent, ...]:
        """``observe`` with the values ``read`` finds in a record (none: no events)."""
        values = self.read(record, distrust)
        if values is None:
            return _NO_EVENTS
        symbol, seq, event_time, quote = values
        return self.observe(partition, symbol, seq=seq, event_time=event_time, quote=quote)

    def read(
        self, record: Mapping[str, object], distrust: frozenset[str] = TRUSTED
    ) -> tuple[str, int | None, EventTime | None, tuple[object, ...] | None] | None:
        """The symbol, seq, event time and quote ``observe`` takes, read from a record's
        spec fields; None: the record is skipped.

        A key that is not a str skips the record; a seq that is not an int, or an event
        time ``event_moment`` cannot read, skips only that check (field checks report them).
        ``distrust``: the parts left out (``distrusted``: a quarantined record's failed
        fields); with ``"key"`` the record is skipped.
        """
        spec = self.spec
        symbol = record.get(spec.key_field)
        if (type(symbol) is not str and not isinstance(symbol, str)) or "key" in distrust:
            return None
        seq = record.get(spec.sequence_field) if spec.sequence_field else None
        if type(seq) is not int and (not isinstance(seq, int) or isinstance(seq, bool)):
            seq = None
        event_time = None
        if spec.event_time_field:
            event_time = event_moment(record.get(spec.event_time_field))
        if distrust:
            seq = None if "seq" in distrust else seq
            event_time = None if "time" in distrust else event_time
        quote = None
        if self._quote_fields and "quote" not in distrust:
            quote = tuple([record.get(name) for name in self._quote_fields])
        return symbol, seq, event_time, quote

    def drop(self, partition: Hashable) -> int:
        """Forget a revoked partition's state; how many symbols were dropped."""
        symbols = self._parts.pop(partition, {})
        self._count -= len(symbols)
        self._holes -= sum(len(s.gaps.holes) // 2 for s in symbols.values() if s.gaps)
        if self._exact and self._count <= self.spec.max_symbols // 2:
            self._exact = False  # far from the bound again: stamps only, plain dicts
            for key, held in self._parts.items():
                self._parts[key] = dict(held)
        return len(symbols)

    def _items(self) -> Iterator[tuple[tuple[Hashable, str], _Symbol]]:
        """Every ((partition, symbol), state) held, partition by partition (for tests)."""
        for partition, symbols in self._parts.items():
            for symbol, state in symbols.items():
                yield (partition, symbol), state

    def _missed(self, partition: Hashable, symbol: str, stamp: int) -> tuple[_Symbol, str]:
        """The state of a key the plain lookup missed, and the symbol it is held under: a
        long symbol's compact key (checked only here, so other symbols pay nothing), or a
        new symbol's fresh state."""
        if len(symbol) > MAX_KEY_CHARS:
            symbol = compact_key(symbol)
            symbols = self._parts.get(partition)
            state = symbols.get(symbol) if symbols is not None else None
            if state is not None:
                state.seen = stamp
                if self._exact:
                    symbols.move_to_end(symbol)  # type: ignore[union-attr]  # an OrderedDict
                return state, symbol
        return self._add(partition, symbol, stamp), symbol

    def _add(self, partition: Hashable, symbol: str, stamp: int) -> _Symbol:
        parts = self._parts
        if self._count >= self.spec.max_symbols and not self._exact:
            # The bound is reached: put the dicts in LRU order once, then keep them so.
            for key, held in parts.items():
                parts[key] = OrderedDict(sorted(held.items(), key=lambda item: item[1].seen))
            self._exact = True
        symbols = parts.get(partition)
        if symbols is None:
            symbols = parts[partition] = OrderedDict() if self._exact else {}
        state = symbols[symbol] = _Symbol(stamp)
        self._count += 1
        if self._count > self.spec.max_symbols:
            # The least recently seen key: the oldest first key of the partitions.
            oldest = min(parts, key=lambda key: next(iter(parts[key].values())).seen)
            held = parts[oldest]
            _, evicted = held.popitem(last=False)  # type: ignore[call-arg]  # OrderedDict
            if not held:
                del parts[oldest]
            if evicted.gaps is not None:
                self._holes -= len(evicted.gaps.holes) // 2
            self._count -= 1
            self.evictions += 1
        return state

    def _sequence(self, state: _Symbol, symbol: str, seq: int, events: list[SymbolEvent]) -> None:
        high, window = state.high, self.spec.sequence_window
        if high is None:
            state.high = seq
            return
        gaps = state.gaps
        if seq > high:
            cutoff = seq - window  # numbers below this are beyond the window
            missed = max(0, min(seq, cutoff) - (high + 1))
            start = max(high + 1, cutoff)
            given = 0
            state.high = seq
            if gaps is None:
                if start >= seq:
                    return self._gap(symbol, seq, missed, 0, events)
                gaps = state.gaps = _Gaps()
            else:
                gaps.streak = 0
            holes = gaps.holes
            if holes and holes[0] < cutoff:
                missed += self._pass(holes, cutoff)
            if start < seq:
                holes += (start, seq)  # above every range held: their ends are <= high
                self._holes += 1
                given = self._bound(gaps)
            self._settle(state, gaps, seq - window)
            return self._gap(symbol, seq, missed, given, events)
        if gaps is not None:
            holes = gaps.holes
            at = bisect_right(holes, seq)
            if at & 1:  # late, but inside the window: fill its hole
                if holes[at - 1] == seq:
                    if holes[at] == seq + 1:
                        del holes[at - 1 : at + 1]
                        self._holes -= 1
                        self._settle(state, gaps, high - window)
                    else:
                        holes[at - 1] = seq + 1
                elif holes[at] == seq + 1:
                    holes[at] = seq
                else:
                    holes[at:at] = (seq, seq + 1)  # splits the range in two
                    self._holes += 1
                    given = self._bound(gaps)
                    if given:
                        detail = _given_up_detail(given, self.spec)
                        events.append(
                            SymbolEvent(SymbolEventKind.HOLES_GIVEN_UP, symbol, detail, given)
                        )
                return
            mark = gaps.mark
            if mark is not None and high - window <= seq < mark:
                detail = f"seq {seq} after {high}: late for a hole given up, or a repeat"
                events.append(SymbolEvent(SymbolEventKind.SEQUENCE_LATE, symbol, detail))
                return
        detail = f"seq {seq} after {high}"
        events.append(SymbolEvent(SymbolEventKind.SEQUENCE_REGRESSION, symbol, detail))
        if gaps is None:
            gaps = state.gaps = _Gaps()
        gaps.streak = gaps.streak + 1 if gaps.streak and seq > gaps.candidate else 1
        gaps.candidate = seq
        resync = self.spec.resync_after
        if resync is not None and gaps.streak >= resync:
            state.high = seq
            self._holes -= len(gaps.holes) // 2
            state.gaps = None

    def _pass(self, holes: list[int], cutoff: int) -> int:
        """Take the numbers below ``cutoff`` (out of the window) out of ``holes``; how many."""
        at = bisect_left(holes, cutoff)  # holes[:at] are below cutoff
        whole = at & ~1  # the ranges wholly below
        missed = sum(holes[1:whole:2]) - sum(holes[0:whole:2])
        if at & 1:  # a range across the cutoff keeps its part from the cutoff on
            missed += cutoff - holes[whole]
            holes[whole] = cutoff
        del holes[:whole]
        self._holes -= whole // 2
        return missed

    def _bound(self, gaps: _Gaps) -> int:
        """Give up the oldest holes of a symbol past ``max_holes``, or past
        ``max_holes_total`` held in all; the numbers given up (0: none)."""
        holes, spec = gaps.holes, self.spec
        over = max(len(holes) // 2 - spec.max_holes, self._holes - spec.max_holes_total, 0)
        if not over:
            return 0
        over = min(over, len(holes) // 2)  # the total is made room for by this symbol
        whole = 2 * over
        given = sum(holes[1:whole:2]) - sum(holes[0:whole:2])
        gaps.mark = holes[whole - 1]
        del holes[:whole]
        self._holes -= over
        self.holes_given_up += over
        return given

    def _settle(self, state: _Symbol, gaps: _Gaps, floor: int) -> None:
        """Let ``gaps`` go when it holds nothing (``floor``: the lowest number in the window)."""
        if gaps.mark is not None and gaps.mark <= floor:
            gaps.mark = None  # the holes given up are beyond the window now
        if not gaps.holes and not gaps.streak and gaps.mark is None:
            state.gaps = None

    def _gap(
        self, symbol: str, seq: int, missed: int, given: int, events: list[SymbolEvent]
    ) -> None:
        if missed:
            detail = f"{missed} sequence number(s) missing before {seq}"
            events.append(SymbolEvent(SymbolEventKind.SEQUENCE_GAP, symbol, detail, missed))
        if given:
            detail = _given_up_detail(given, self.spec)
            events.append(SymbolEvent(SymbolEventKind.HOLES_GIVEN_UP, symbol, detail, given))

    def _event_time(
        self, state: _Symbol, symbol: str, event_time: EventTime, events: list[SymbolEvent]
    ) -> None:
        latest = state.latest
        if latest is None or event_time > latest:  # type: ignore[operator]
            state.latest = event_time
        elif _span(latest, event_time) > self.spec.max_time_regression_s:
            back, tolerance = _span(latest, event_time), self.spec.max_time_regression_s
            detail = f"event time went back {back:.3f} s (tolerance {tolerance:g} s)"
            events.append(SymbolEvent(SymbolEventKind.EVENT_TIME_REGRESSION, symbol, detail))

    def _frozen(
        self,
        state: _Symbol,
        symbol: str,
        quote: tuple[object, ...],
        event_time: EventTime | None,
        events: list[SymbolEvent],
    ) -> None:
        if quote != state.quote:
            state.quote, state.updates, state.since, state.alerted = quote, 1, event_time, False
            return
        if any(value != value for value in quote):  # NaN: never "the same"
            state.quote, state.updates, state.alerted = None, 0, False
            return
        state.updates += 1
        if state.since is None:
            state.since = event_time
        if state.alerted:
            return
        max_updates, max_s = self.spec.frozen_max_updates, self.spec.frozen_max_s
        held = None if event_time is None or state.since is None else _span(event_time, state.since)
        if max_updates is not None and state.updates > max_updates:
            detail = f"same quote on {state.updates} updates in a row (limit {max_updates})"
        elif max_s is not None and held is not None and held > max_s:
            detail = f"same quote for {held:.3f} s (limit {max_s:g} s)"
        else:
            return
        state.alerted = True
        events.append(SymbolEvent(SymbolEventKind.FROZEN_QUOTE, symbol, detail))


#: A key (symbol) longer than this is kept as ``compact_key``: the state holds up to
#: ``max_symbols`` keys, and a feed sending 1 MB symbols would otherwise hold 100 GB.
MAX_KEY_CHARS: Final = 256
_KEPT_CHARS: Final = 32  # what events show of a symbol anyway (batch events cut to 32)


def compact_key(symbol: str) -> str:
    """A long key's stand-in: its first characters and a 128-bit digest of all of it (two
    keys that differ anywhere stay apart)."""
    digest = hashlib.blake2b(symbol.encode("utf-8", "surrogatepass"), digest_size=16)
    return f"{symbol[:_KEPT_CHARS]}…#{digest.hexdigest()}"


def _given_up_detail(given: int, spec: SymbolStateSpec) -> str:
    return (
        f"{given} sequence number(s) in the oldest hole(s) given up (over"
        f" {spec.max_holes} holes for the symbol or {spec.max_holes_total} in all)"
    )


def distrusted(spec: SymbolStateSpec, violations: Iterable[Violation]) -> frozenset[str]:
    """The parts of the state a quarantined record with these violations cannot feed.

    Each of the spec's fields is used only when it passed its own checks (declared type,
    bounds, not null, skew window), whatever the record's other fields did: a record
    quarantined for its ``size`` still carries the feed's next sequence number, and leaving
    it out would report a gap the vendor never made. So: ``"key"`` (nothing is fed) for a
    record-level problem (undecodable, not a mapping, oversized, a validator error) or a
    failed key field; else ``"seq"``, ``"time"`` for a failed sequence or event-time
    field, and ``"quote"`` when any quote field failed (the frozen-quote detector compares
    whole quotes). Record rules read only fields that passed: a rule violation distrusts
    nothing. Empty (``TRUSTED``): the record feeds the state in full.
    """
    out: set[str] = set()
    for violation in violations:
        name = violation.field
        if name is None:
            if violation.kind != "rule_violation":
                return UNFED
            continue
        # a nested path (``levels[3].price``) fails its top-level field
        head = name.split(".", 1)[0].split("[", 1)[0]
        if head == spec.key_field:
            return UNFED
        if head == spec.sequence_field:
            out.add("seq")
        if head == spec.event_time_field:
            out.add("time")
        if head in spec.quote_fields:
            out.add("quote")
    return frozenset(out) if out else TRUSTED


def event_seconds(value: object) -> float | None:
    """Seconds since the epoch of an event-time field value, or None when it has none.

    A datetime or ISO-8601 text, or int/float epoch seconds (not bool, not NaN). A value
    without an offset is read as UTC: only the order within one symbol matters here,
    and one fixed assumption keeps that order (``datetime.timestamp`` would use the
    machine's zone instead).
    """
    moment = event_moment(value)
    return moment.timestamp() if isinstance(moment, datetime) else moment


def event_moment(value: object) -> EventTime | None:
    """``event_seconds`` without the conversion: an aware datetime for a datetime or
    ISO-8601 text (naive read as UTC), float seconds for a number, None when it has none."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if value == value else None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _span(later: EventTime, earlier: EventTime) -> float:
    """Seconds from ``earlier`` to ``later`` (exact for datetimes)."""
    if isinstance(later, datetime) and isinstance(earlier, datetime):
        return (later - earlier).total_seconds()
    if isinstance(later, datetime) or isinstance(earlier, datetime):
        raise TypeError(
            f"event times of two kinds: {type(later).__name__}, {type(earlier).__name__}"
        )
    return later - earlier
