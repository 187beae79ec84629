"""Per-symbol state of a market-data stream: sequence, event time, frozen quotes.

Settings come from ``contracts.statespec.SymbolStateSpec`` (the contract's ``state``).

PURE: no clock and no I/O; every time is passed in (the record's event time: epoch
seconds, or an aware datetime -- one kind per tracker, as one contract field gives;
``state.eventtime``), so a replay gives the same events as the live run. What must hold:

* State is keyed by (partition, symbol). ``drop(partition)`` forgets a revoked
  partition's symbols, so the first record after an assignment starts fresh (no event).
* Memory is bounded: at most ``max_symbols`` keys (least recently seen evicted first,
  counted in ``evictions``; an evicted symbol starts fresh too), and the sequence's
  pending holes are bounded (``state.sequence``). A key over ``MAX_KEY_CHARS`` characters
  is held as ``compact_key`` (its start and a digest). A healthy symbol holds no hole list
  (its rarer sequence state is made on first need).
* Sequence: ``state.sequence`` states what holds; the common case (the next number) runs
  inline here.
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
from collections import OrderedDict
from collections.abc import Hashable, Iterator, Mapping, Sequence
from typing import Any, Final

from stream_validator.contracts.statespec import SymbolStateSpec
from stream_validator.state.distrust import TRUSTED
from stream_validator.state.entry import SymbolEntry
from stream_validator.state.events import SymbolEvent, SymbolEventKind
from stream_validator.state.eventtime import EventTime, event_moment, span
from stream_validator.state.sequence import SequenceCheck

__all__ = ["MAX_KEY_CHARS", "SymbolStateTracker", "compact_key"]


_NO_EVENTS: Final[tuple[SymbolEvent, ...]] = ()
_NO_PARTITION: Final = object()  # before the first record of a batch
_NO_SYMBOLS: Final[dict[str, Any]] = {}  # a partition not held yet (never written)

#: A partition's symbols: a dict, in LRU order (an OrderedDict) while the bound is near.
_Symbols = dict[str, SymbolEntry]


class SymbolStateTracker:
    """Per-(partition, symbol) state for one contract; ``observe`` once per valid record."""

    def __init__(self, spec: SymbolStateSpec) -> None:
        self.spec = spec
        self.evictions = 0
        self._seqcheck = SequenceCheck(spec)
        self._sequence = self._seqcheck.check  # the rarer cases of the sequence
        # State per partition, then per symbol (no (partition, symbol) tuple per key). LRU
        # by stamps: every observe stamps its state with the clock. Far below the bound no
        # eviction can happen: the dicts are plain and a healthy feed pays a stamp, not a
        # reordering, per record. On reaching the bound ("exact") each becomes an
        # OrderedDict sorted by stamps and kept in LRU order (move_to_end); the least
        # recently seen key is then the oldest of the partitions' first keys.
        self._parts: dict[Hashable, _Symbols] = {}
        self._count = 0
        self._clock = 0
        self._exact = False
        frozen_on = spec.frozen_max_updates is not None or spec.frozen_max_s is not None
        self._quote_fields = spec.quote_fields if frozen_on else ()

    def __len__(self) -> int:
        return self._count

    @property
    def holes(self) -> int:
        """Pending hole ranges held, all symbols (at most ``spec.max_holes_total``)."""
        return self._seqcheck.held

    @property
    def holes_given_up(self) -> int:
        """Hole ranges given up to the bounds so far (their numbers were events)."""
        return self._seqcheck.given_up

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
        for state in symbols.values():
            self._seqcheck.release(state.gaps)
        if self._exact and self._count <= self.spec.max_symbols // 2:
            self._exact = False  # far from the bound again: stamps only, plain dicts
            for key, held in self._parts.items():
                self._parts[key] = dict(held)
        return len(symbols)

    def _items(self) -> Iterator[tuple[tuple[Hashable, str], SymbolEntry]]:
        """Every ((partition, symbol), state) held, partition by partition (for tests)."""
        for partition, symbols in self._parts.items():
            for symbol, state in symbols.items():
                yield (partition, symbol), state

    def _missed(self, partition: Hashable, symbol: str, stamp: int) -> tuple[SymbolEntry, str]:
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

    def _add(self, partition: Hashable, symbol: str, stamp: int) -> SymbolEntry:
        parts = self._parts
        if self._count >= self.spec.max_symbols and not self._exact:
            # The bound is reached: put the dicts in LRU order once, then keep them so.
            for key, held in parts.items():
                parts[key] = OrderedDict(sorted(held.items(), key=lambda item: item[1].seen))
            self._exact = True
        symbols = parts.get(partition)
        if symbols is None:
            symbols = parts[partition] = OrderedDict() if self._exact else {}
        state = symbols[symbol] = SymbolEntry(stamp)
        self._count += 1
        if self._count > self.spec.max_symbols:
            # The least recently seen key: the oldest first key of the partitions.
            oldest = min(parts, key=lambda key: next(iter(parts[key].values())).seen)
            held = parts[oldest]
            _, evicted = held.popitem(last=False)  # type: ignore[call-arg]  # OrderedDict
            if not held:
                del parts[oldest]
            self._seqcheck.release(evicted.gaps)
            self._count -= 1
            self.evictions += 1
        return state

    def _event_time(
        self, state: SymbolEntry, symbol: str, event_time: EventTime, events: list[SymbolEvent]
    ) -> None:
        latest = state.latest
        if latest is None or event_time > latest:  # type: ignore[operator]
            state.latest = event_time
        elif span(latest, event_time) > self.spec.max_time_regression_s:
            back, tolerance = span(latest, event_time), self.spec.max_time_regression_s
            detail = f"event time went back {back:.3f} s (tolerance {tolerance:g} s)"
            events.append(SymbolEvent(SymbolEventKind.EVENT_TIME_REGRESSION, symbol, detail))

    def _frozen(
        self,
        state: SymbolEntry,
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
        held = None if event_time is None or state.since is None else span(event_time, state.since)
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
