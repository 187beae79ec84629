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
  a range adds another, so they grow with the records read, never with the numbers. A
  key over ``MAX_KEY_CHARS`` characters is held as ``compact_key`` (its start and a digest).
* Sequence (an int per symbol) must increase by one. A hole is ``sequence_gap`` once it
  is more than ``sequence_window`` numbers behind the highest seen (0: at once); a late
  number inside the window fills its hole silently. A number already passed (a repeat,
  or older than the window) is ``sequence_regression`` and leaves the state alone,
  unless ``resync_after`` such numbers in a row are increasing: then the feed restarted
  its numbering and the state follows it.
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
from bisect import bisect_right
from collections import OrderedDict, deque
from collections.abc import Hashable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from operator import itemgetter
from typing import Final

from stream_validator.contracts.statespec import SymbolStateSpec
from stream_validator.verify.symbolevents import EventTally, SymbolEvent, SymbolEventKind

__all__ = [
    "EventTally",
    "EventTime",
    "SymbolEvent",
    "SymbolEventKind",
    "SymbolStateTracker",
    "event_moment",
    "event_seconds",
    "feeds_state",
]

#: An event time: epoch seconds, or an aware datetime (one kind per tracker).
EventTime = float | datetime


_NO_EVENTS: Final[tuple[SymbolEvent, ...]] = ()
# Violations that leave every field well-formed (rules and skew windows run on fields that
# passed their own checks): a record quarantined only for these still feeds the state.
_FIELDS_INTACT: Final = frozenset({"rule_violation", "timestamp_out_of_range"})


class _Symbol:
    """The mutable state of one (partition, symbol)."""

    __slots__ = (
        "alerted",
        "candidate",
        "high",
        "holes",
        "latest",
        "quote",
        "seen",
        "since",
        "streak",
        "updates",
    )

    def __init__(self) -> None:
        self.high: int | None = None  # highest sequence number seen
        # missing numbers inside the window: ascending, disjoint ranges [start, end)
        self.holes: deque[tuple[int, int]] = deque()
        self.streak = 0  # increasing regressions in a row (a renumbered feed?)
        self.candidate = 0  # the last of those
        self.latest: EventTime | None = None  # latest event time seen
        self.quote: tuple[object, ...] | None = None
        self.updates = 0  # updates in a row carrying ``quote``
        self.since: EventTime | None = None  # event time of the first of them
        self.alerted = False
        self.seen = 0  # the tracker's clock when last observed (LRU order)


class SymbolStateTracker:
    """Per-(partition, symbol) state for one contract; ``observe`` once per valid record."""

    def __init__(self, spec: SymbolStateSpec) -> None:
        self.spec = spec
        self.evictions = 0
        # LRU by stamps: every observe stamps its state with the clock; the dict is kept in
        # LRU order (move_to_end) only while "exact", i.e. once the bound was reached, and
        # is sorted by stamps on entering it. Far below the bound no eviction can happen,
        # so a healthy feed pays a stamp, not a reordering, per record.
        self._states: OrderedDict[tuple[Hashable, str], _Symbol] = OrderedDict()
        self._clock = 0
        self._exact = False
        self._by_partition: dict[Hashable, set[str]] = {}
        frozen_on = spec.frozen_max_updates is not None or spec.frozen_max_s is not None
        self._quote_fields = spec.quote_fields if frozen_on else ()

    def __len__(self) -> int:
        return len(self._states)

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
        state = self._states.get((partition, symbol))
        if state is None:
            state, symbol = self._missed(partition, symbol, self._clock)
        else:
            state.seen = self._clock
            if self._exact:
                self._states.move_to_end((partition, symbol))
        events: list[SymbolEvent] = []
        if seq is not None:
            high = state.high
            if high is not None and seq == high + 1 and not state.holes:
                state.high, state.streak = seq, 0  # the common case, inline
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
        states, missed, touch = self._states, self._missed, self._states.move_to_end
        start = self._clock + 1
        self._clock += len(keys)
        exact = self._exact
        held_column = quotes if quotes is not None else [None] * len(keys)
        for stamp, (partition, symbol, seq, event_time, held) in enumerate(
            zip(partitions, keys, seqs, times, held_column, strict=True), start
        ):
            key = (partition, symbol)
            try:
                state = states[key]
            except KeyError:  # new, or held compact (a try costs nothing when nothing is raised)
                state, symbol = missed(partition, symbol, stamp)
                exact = self._exact
            else:
                state.seen = stamp
                if exact:
                    touch(key)
            if seq is not None:
                high = state.high
                if high is not None and seq == high + 1 and not state.holes:
                    state.high = seq
                    if state.streak:
                        state.streak = 0
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
        self, partition: Hashable, record: Mapping[str, object]
    ) -> tuple[SymbolEvent, ...]:
        """``observe`` with the values the spec's fields name, read from a valid record.

        A key that is not a str skips the record; a seq that is not an int, or an event
        time ``event_moment`` cannot read, skips only that check (field checks report them).
        """
        spec = self.spec
        symbol = record.get(spec.key_field)
        if type(symbol) is not str and not isinstance(symbol, str):
            return _NO_EVENTS
        seq = record.get(spec.sequence_field) if spec.sequence_field else None
        if type(seq) is not int and (not isinstance(seq, int) or isinstance(seq, bool)):
            seq = None
        event_time = None
        if spec.event_time_field:
            event_time = event_moment(record.get(spec.event_time_field))
        quote = None
        if self._quote_fields:
            quote = [record.get(name) for name in self._quote_fields]
        return self.observe(partition, symbol, seq=seq, event_time=event_time, quote=quote)

    def drop(self, partition: Hashable) -> int:
        """Forget a revoked partition's state; how many symbols were dropped."""
        symbols = self._by_partition.pop(partition, set())
        for symbol in symbols:
            del self._states[(partition, symbol)]
        if len(self._states) <= self.spec.max_symbols // 2:
            self._exact = False  # far from the bound again: stamps only
        return len(symbols)

    def _missed(self, partition: Hashable, symbol: str, stamp: int) -> tuple[_Symbol, str]:
        """The state of a key the plain lookup missed, and the symbol it is held under: a
        long symbol's compact key (checked only here, so other symbols pay nothing), or a
        new symbol's fresh state."""
        if len(symbol) > MAX_KEY_CHARS:
            symbol = compact_key(symbol)
            state = self._states.get((partition, symbol))
            if state is not None:
                state.seen = stamp
                if self._exact:
                    self._states.move_to_end((partition, symbol))
                return state, symbol
        return self._add(partition, symbol, stamp), symbol

    def _add(self, partition: Hashable, symbol: str, stamp: int) -> _Symbol:
        states = self._states
        if len(states) >= self.spec.max_symbols and not self._exact:
            # The bound is reached: put the dict in LRU order once, then keep it so.
            for key in sorted(states, key=lambda key: states[key].seen):
                states.move_to_end(key)
            self._exact = True
        state = states[(partition, symbol)] = _Symbol()
        state.seen = stamp
        self._by_partition.setdefault(partition, set()).add(symbol)
        if len(states) > self.spec.max_symbols:
            (old_partition, old_symbol), _ = states.popitem(last=False)
            self._by_partition[old_partition].discard(old_symbol)
            self.evictions += 1
        return state

    def _sequence(self, state: _Symbol, symbol: str, seq: int, events: list[SymbolEvent]) -> None:
        high, window = state.high, self.spec.sequence_window
        if high is None:
            state.high = seq
            return
        holes = state.holes
        if seq > high:
            cutoff = seq - window  # numbers below this are beyond the window
            missed = max(0, min(seq, cutoff) - (high + 1))
            start = max(high + 1, cutoff)
            if start < seq:
                holes.append((start, seq))
            while holes and holes[0][0] < cutoff:
                first, end = holes[0]
                if end <= cutoff:
                    holes.popleft()
                    missed += end - first
                else:
                    holes[0] = (cutoff, end)
                    missed += cutoff - first
            state.high, state.streak = seq, 0
            if missed:
                detail = f"{missed} sequence number(s) missing before {seq}"
                events.append(SymbolEvent(SymbolEventKind.SEQUENCE_GAP, symbol, detail, missed))
            return
        if holes and _fill(holes, seq):  # late, but inside the window
            return
        detail = f"seq {seq} after {high}"
        events.append(SymbolEvent(SymbolEventKind.SEQUENCE_REGRESSION, symbol, detail))
        state.streak = state.streak + 1 if state.streak and seq > state.candidate else 1
        state.candidate = seq
        resync = self.spec.resync_after
        if resync is not None and state.streak >= resync:
            state.high, state.streak = seq, 0
            holes.clear()

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


_START: Final = itemgetter(0)  # a hole range's start


def _fill(holes: deque[tuple[int, int]], seq: int) -> bool:
    """Take ``seq`` out of the range of ``holes`` holding it; False when none does."""
    at = bisect_right(holes, seq, key=_START) - 1  # the last range starting at or before seq
    if at < 0:
        return False
    start, end = holes[at]
    if seq >= end:
        return False
    if start == seq and end == seq + 1:
        del holes[at]
    elif start == seq:
        holes[at] = (seq + 1, end)
    elif end == seq + 1:
        holes[at] = (start, seq)
    else:
        holes[at] = (start, seq)
        holes.insert(at + 1, (seq + 1, end))
    return True


def feeds_state(violation_kinds: Iterable[str]) -> bool:
    """Whether a record quarantined with these violation kinds still feeds the state.

    Yes when only record rules or skew windows failed: its fields passed their own checks,
    and a crossed book left out would leave a sequence gap that did not happen. No when
    a field failed (missing, null, wrong type, out of bounds, undecodable): its seq and
    time cannot be trusted.
    """
    return _FIELDS_INTACT.issuperset(map(str, violation_kinds))  # in C: once per DLQ entry


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
