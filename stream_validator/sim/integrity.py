"""Market-data integrity scenarios: records that are well-formed but cannot be true.

PURE, like ``drift`` (which registers them and documents what the verifier reports). A
schema contract accepts every record these send, except ``bad_deploy``'s: the cross-field
rules, the timestamp checks and the per-symbol state of issue 14 are what catch them.

Some need to remember a symbol (``SymbolMemory``): a sequence gap moves the symbol's
numbering for good, a step back must not cost a number, and a frozen quote repeats what it
froze at. The Simulator keeps one memory per symbol and ``carry`` applies it to each record.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Final

from stream_validator.codec import encode_json
from stream_validator.sim.market import cents

if TYPE_CHECKING:
    from stream_validator.sim.drift import DriftTargets

Record = dict[str, Any]

#: Sequence numbers a sequence_gap skips (the gap's size, as a tracker counts it).
SEQUENCE_GAP: Final = 100
#: How far below the symbol's last number a sequence_regression goes.
SEQUENCE_STEP_BACK: Final = 10
#: A stale timestamp is the Unix epoch or this old; a future one this far ahead.
STALE_BY: Final = timedelta(hours=6)
FUTURE_BY: Final = timedelta(hours=1)
EPOCH_TS: Final = "1970-01-01T00:00:00.000000Z"
#: The share of stale timestamps that are the Unix epoch (a zero turned into a date).
_EPOCH_SHARE: Final = 0.5
# A size for a book side that was empty when a scenario must quote it.
_FILL_SIZE: Final = 100


@dataclass(slots=True)
class SymbolMemory:
    """What the stateful scenarios remember about one symbol.

    ``seq_shift`` is added to the market's sequence number in every later record of the
    symbol; ``frozen`` is the quote a frozen_quote episode repeats (None: not frozen).
    """

    seq_shift: int = 0
    frozen: Record | None = None


def carry(record: Record, targets: DriftTargets, memory: SymbolMemory, scenario: str) -> None:
    """Apply a symbol's memory to its next record, whatever scenario (if any) it gets.

    A record that is not frozen ends the symbol's frozen episode: a fresh quote arrived.
    """
    if memory.seq_shift and targets.seq is not None:
        record[targets.seq] += memory.seq_shift
    if scenario != "frozen_quote":
        memory.frozen = None


def _cents(price: float) -> int:
    return round(price * 100)


def _touch(record: Record, targets: DriftTargets) -> tuple[int, int]:
    """Best bid and ask in cents; an empty tick side is quoted a cent off the last trade."""
    assert targets.touch is not None, "only entities with a book side get book scenarios"
    bid_name, ask_name = targets.touch
    for size in targets.touch_sizes:
        if record[size] is None:
            record[size] = _FILL_SIZE
    price = _cents(record[targets.price])
    bid, ask = record[bid_name], record[ask_name]
    return (
        _cents(bid) if bid is not None else price - 1,
        _cents(ask) if ask is not None else price + 1,
    )


def crossed_book(
    record: Record, targets: DriftTargets, rng: random.Random, memory: SymbolMemory
) -> bytes:
    """Best bid above best ask: the touch is swapped (deeper book levels stay monotone)."""
    bid, ask = _touch(record, targets)
    bid_name, ask_name = targets.touch or ("", "")
    record[bid_name], record[ask_name] = cents(ask), cents(bid)
    return encode_json(record)


def locked_book(
    record: Record, targets: DriftTargets, rng: random.Random, memory: SymbolMemory
) -> bytes:
    """Best bid equals best ask; a tick's last trade happened at that price."""
    bid, _ = _touch(record, targets)
    bid_name, ask_name = targets.touch or ("", "")
    record[bid_name] = record[ask_name] = cents(bid)
    if targets.price not in (bid_name, ask_name):
        record[targets.price] = cents(bid)
    return encode_json(record)


def impossible_bar(
    record: Record, targets: DriftTargets, rng: random.Random, memory: SymbolMemory
) -> bytes:
    """An OHLC bar that cannot happen; which way it breaks is drawn at random."""
    low, high = _cents(record["low"]), _cents(record["high"])
    kind = rng.randrange(3)
    if kind == 0:  # high below low (then open and close are outside too)
        record["high"], record["low"] = cents(low - 1), cents(high)
    elif kind == 1:
        record["open"] = cents(high + 1)
    else:
        record["close"] = cents(low - 1)
    return encode_json(record)


def sequence_gap(
    record: Record, targets: DriftTargets, rng: random.Random, memory: SymbolMemory
) -> bytes:
    """SEQUENCE_GAP numbers skipped; the symbol's later records continue after the gap."""
    assert targets.seq is not None, "only entities with a seq field get sequence scenarios"
    record[targets.seq] += SEQUENCE_GAP
    memory.seq_shift += SEQUENCE_GAP
    return encode_json(record)


def sequence_regression(
    record: Record, targets: DriftTargets, rng: random.Random, memory: SymbolMemory
) -> bytes:
    """A number SEQUENCE_STEP_BACK below the symbol's last; later records go on as if it
    never came (it takes no number, so it causes no gap)."""
    assert targets.seq is not None, "only entities with a seq field get sequence scenarios"
    record[targets.seq] -= SEQUENCE_STEP_BACK + 1
    memory.seq_shift -= 1
    return encode_json(record)


def _shift_ts(text: str, by: timedelta) -> str:
    moved = datetime.fromisoformat(text) + by
    return f"{moved:%Y-%m-%dT%H:%M:%S.%f}Z"


def stale_timestamp(
    record: Record, targets: DriftTargets, rng: random.Random, memory: SymbolMemory
) -> bytes:
    """The event time is the Unix epoch or STALE_BY old."""
    old = rng.random() < _EPOCH_SHARE
    record[targets.time] = EPOCH_TS if old else _shift_ts(record[targets.time], -STALE_BY)
    return encode_json(record)


def future_timestamp(
    record: Record, targets: DriftTargets, rng: random.Random, memory: SymbolMemory
) -> bytes:
    """The event time is FUTURE_BY ahead (a clock or time-zone slip)."""
    record[targets.time] = _shift_ts(record[targets.time], FUTURE_BY)
    return encode_json(record)


def naive_timestamp(
    record: Record, targets: DriftTargets, rng: random.Random, memory: SymbolMemory
) -> bytes:
    """The event time has no offset: '2026-01-05T14:30:00.000123' (local or UTC? unknown)."""
    record[targets.time] = record[targets.time].removesuffix("Z")
    return encode_json(record)


def frozen_quote(
    record: Record, targets: DriftTargets, rng: random.Random, memory: SymbolMemory
) -> bytes:
    """The symbol repeats the quote it froze at: its first complete one in the episode.

    A quote with a null (an empty tick side, a thin book, a bar without trades) is not
    frozen at, so repeating it cannot breach the null ceiling; the record goes as built.
    """
    if memory.frozen is None:
        quote = {name: record[name] for name in targets.quote}
        if any(value is None for value in quote.values()):
            return encode_json(record)
        memory.frozen = quote
    record.update(memory.frozen)
    return encode_json(record)


def bad_deploy(
    record: Record, targets: DriftTargets, rng: random.Random, memory: SymbolMemory
) -> bytes:
    """A new producer build writes every field name in PascalCase (bid_sz -> BidSz)."""
    return encode_json({_pascal(key): value for key, value in record.items()})


def _pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))
