"""Clean records for the contracts in config/contracts/: tick, orderbook_snapshot, ohlcv_bar, order.

PURE. Each builder turns the instrument the market just moved into one record carrying
exactly the contract's fields, valid in type, bounds and nullability:

* tick: last trade inside [bid, ask], bid < ask, round-lot sizes; a side of the book goes
  empty (price and size null) now and then.
* orderbook_snapshot: three levels per side, bids strictly falling and asks strictly
  rising away from the touch; a thin book (depth 1 or 2) nulls the missing levels.
* ohlcv_bar: consecutive one-minute bars per symbol from the run's start minute (a replay:
  faster than one bar per symbol per minute runs ahead of wall time); low <= open, close
  <= high and the VWAP inside [low, high]; a bar without trades has volume 0 and VWAP null.
* order: new orders, buy or sell half each, with a unique order_id; a limit order rests a
  few cents behind the touch (a buy at or below the bid, a sell at or above the ask); a
  market order (now and then) has a null price.

Legitimate nulls are rare and spaced out (``NullGate``): at least 200 / ceiling records
apart, so no run of at least 100 / ceiling consecutive records has a null rate above the
contract's ``max_allowed_null_pct``.
"""

from __future__ import annotations

import functools
import random
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any, Final, Protocol

from stream_validator.sim.market import Instrument, cents, walk

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_SPREADS_CENTS: Final = (1, 1, 1, 2, 2, 3)
_BAR_SECONDS: Final = 60
#: How far behind the touch a limit order rests, in cents (0: at the touch).
_ORDER_OFFSETS_CENTS: Final = (0, 0, 1, 1, 2, 3, 5)


class Entity(StrEnum):
    """The simulated entities; each value is the name of its contract."""

    TICK = "tick"
    ORDERBOOK_SNAPSHOT = "orderbook_snapshot"
    OHLCV_BAR = "ohlcv_bar"
    ORDER = "order"


class NullGate:
    """Says when a legitimate null may occur: with a probability, never twice within a gap."""

    __slots__ = ("_probability", "_since", "gap")

    def __init__(self, probability: float, gap: int) -> None:
        self._probability = probability
        self.gap = gap
        self._since = gap

    def allows(self, rng: random.Random) -> bool:
        """Advance one record; True when this record gets its null."""
        if self._since < self.gap:
            self._since += 1
            return False
        if rng.random() < self._probability:
            self._since = 0
            return True
        return False


class RecordBuilder(Protocol):
    """Builds one clean record for the instrument that just moved, at an event time."""

    def build(self, instrument: Instrument, ts_us: int) -> dict[str, Any]: ...


def format_ts(ts_us: int) -> str:
    """Microseconds since the epoch as ISO-8601 UTC with microseconds ('...T14:30:00.000001Z')."""
    seconds, micros = divmod(ts_us, 1_000_000)
    return f"{_second(seconds)}.{micros:06d}Z"


@functools.lru_cache(maxsize=64)
def _second(seconds: int) -> str:
    # Formatting a datetime is the costliest step of a tick; consecutive records share seconds.
    return f"{_EPOCH + timedelta(seconds=seconds):%Y-%m-%dT%H:%M:%S}"


def _lot(rng: random.Random) -> int:
    # Mostly round lots of 100, sometimes an odd lot (random() is much cheaper than randint).
    draw = rng.random()
    return (1 + int(draw * 62.5)) * 100 if draw < 0.8 else 1 + int((draw - 0.8) * 495)


def _touch(mid_cents: int, rng: random.Random) -> tuple[int, int]:
    spread = rng.choice(_SPREADS_CENTS)
    bid = mid_cents - spread // 2
    return bid, bid + spread


class TickBuilder:
    """Top-of-book ticks; a book side is empty about 0.2% of the time (tick ceiling: 1%)."""

    __slots__ = ("_ask_gate", "_bid_gate", "_rng")

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._bid_gate = NullGate(0.002, gap=200)
        self._ask_gate = NullGate(0.002, gap=200)

    def build(self, instrument: Instrument, ts_us: int) -> dict[str, Any]:
        rng = self._rng
        bid, ask = _touch(instrument.mid_cents, rng)
        no_bid, no_ask = self._bid_gate.allows(rng), self._ask_gate.allows(rng)
        return {
            "symbol": instrument.symbol,
            "exchange": instrument.exchange,
            "event_ts": format_ts(ts_us),
            "seq": instrument.seq,
            "price": cents(rng.randint(bid, ask)),
            "size": _lot(rng),
            "bid": None if no_bid else cents(bid),
            "ask": None if no_ask else cents(ask),
            "bid_sz": None if no_bid else _lot(rng),
            "ask_sz": None if no_ask else _lot(rng),
        }


class OrderbookBuilder:
    """Top-3 snapshots; about 1% are thin books with null deeper levels (ceiling: 5%)."""

    __slots__ = ("_rng", "_thin_gate")

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._thin_gate = NullGate(0.01, gap=40)

    def build(self, instrument: Instrument, ts_us: int) -> dict[str, Any]:
        rng = self._rng
        depth = rng.choice((1, 2)) if self._thin_gate.allows(rng) else 3
        bid, ask = _touch(instrument.mid_cents, rng)
        record: dict[str, Any] = {
            "symbol": instrument.symbol,
            "exchange": instrument.exchange,
            "snapshot_ts": format_ts(ts_us),
            "depth": depth,
        }
        for level in (1, 2, 3):
            present = level <= depth
            record[f"bid_px_{level}"] = cents(bid) if present else None
            record[f"bid_sz_{level}"] = _lot(rng) if present else None
            record[f"ask_px_{level}"] = cents(ask) if present else None
            record[f"ask_sz_{level}"] = _lot(rng) if present else None
            bid -= rng.randint(1, 3)
            ask += rng.randint(1, 3)
        return record


class BarBuilder:
    """Consecutive one-minute bars per symbol; about 0.3% have no trades (ceiling: 2%)."""

    __slots__ = ("_empty_gate", "_next_start_us", "_rng", "_start_us")

    def __init__(self, rng: random.Random, start_us: int) -> None:
        self._rng = rng
        minute_us = _BAR_SECONDS * 1_000_000
        self._start_us = start_us - start_us % minute_us
        self._next_start_us: dict[str, int] = {}
        self._empty_gate = NullGate(0.005, gap=100)

    def build(self, instrument: Instrument, ts_us: int) -> dict[str, Any]:
        rng = self._rng
        bar_start = self._next_start_us.get(instrument.symbol, self._start_us)
        self._next_start_us[instrument.symbol] = bar_start + _BAR_SECONDS * 1_000_000
        record: dict[str, Any] = {
            "symbol": instrument.symbol,
            "bar_start": format_ts(bar_start),
            "interval_s": _BAR_SECONDS,
        }
        if self._empty_gate.allows(rng):
            price = cents(instrument.mid_cents)
            ohlc = {"open": price, "high": price, "low": price, "close": price}
            return record | ohlc | {"volume": 0, "trade_count": 0, "vwap": None}
        # The minute's path in a few steps; each step stands for a burst of trades at its price.
        prices, volume, notional, trade_count = [], 0, 0, 0
        for _ in range(rng.randint(2, 8)):
            instrument.mid_cents = price = walk(instrument.mid_cents, rng)
            trades = rng.randint(1, 25)
            size = trades * _lot(rng)
            prices.append(price)
            volume += size
            notional += price * size
            trade_count += trades
        return record | {
            "open": cents(prices[0]),
            "high": cents(max(prices)),
            "low": cents(min(prices)),
            "close": cents(prices[-1]),
            "volume": volume,
            "trade_count": trade_count,
            "vwap": round(notional / volume / 100, 4),
        }


class OrderBuilder:
    """New orders; about 8% are market orders, whose price is null (ceiling: 20%)."""

    __slots__ = ("_market_gate", "_next_id", "_rng")

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._market_gate = NullGate(0.25, gap=10)
        self._next_id = rng.randrange(1_000_000, 9_000_000)

    def build(self, instrument: Instrument, ts_us: int) -> dict[str, Any]:
        rng = self._rng
        self._next_id += 1
        side = "buy" if rng.random() < 0.5 else "sell"
        if self._market_gate.allows(rng):
            order_type, price = "market", None
        else:
            bid, ask = _touch(instrument.mid_cents, rng)
            offset = rng.choice(_ORDER_OFFSETS_CENTS)
            order_type, price = "limit", cents(bid - offset if side == "buy" else ask + offset)
        return {
            "order_id": f"ORD-{self._next_id:010d}",
            "symbol": instrument.symbol,
            "exchange": instrument.exchange,
            "side": side,
            "order_type": order_type,
            "qty": _lot(rng),
            "price": price,
            "event_ts": format_ts(ts_us),
        }


def builder_for(entity: Entity, rng: random.Random, start_us: int) -> RecordBuilder:
    """The record builder of an entity."""
    if entity is Entity.TICK:
        return TickBuilder(rng)
    if entity is Entity.ORDERBOOK_SNAPSHOT:
        return OrderbookBuilder(rng)
    if entity is Entity.ORDER:
        return OrderBuilder(rng)
    return BarBuilder(rng, start_us)
