"""The simulated market: a symbol universe whose mid prices follow random walks.

PURE: all randomness comes from the ``random.Random`` passed in, so a seed fixes the
whole price path. Prices are kept in integer cents, so bid < ask holds exactly and
every price prints as a short decimal ("190.25").
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

# Liquid names first: the first symbols get the most updates, like a real feed.
_TICKERS = (
    ("AAPL", "XNAS"),
    ("MSFT", "XNAS"),
    ("NVDA", "XNAS"),
    ("AMZN", "XNAS"),
    ("GOOGL", "XNAS"),
    ("META", "XNAS"),
    ("TSLA", "XNAS"),
    ("JPM", "XNYS"),
    ("V", "XNYS"),
    ("XOM", "XNYS"),
    ("UNH", "XNYS"),
    ("KO", "XNYS"),
    ("SPY", "ARCX"),
    ("QQQ", "XNAS"),
    ("IWM", "ARCX"),
    ("BAC", "XNYS"),
    ("WMT", "XNYS"),
    ("PFE", "XNYS"),
    ("INTC", "XNAS"),
    ("AMD", "XNAS"),
)
_VENUES = ("XNAS", "XNYS", "ARCX", "BATS")
# Per-update log-return volatility (5 basis points) and the band a walk is held in.
_VOLATILITY = 0.0005
_MIN_MID_CENTS = 100
_MAX_MID_CENTS = 100_000_000
_ZIPF_EXPONENT = 0.8


@dataclass(slots=True)
class Instrument:
    """One symbol's evolving state: mid price, vendor sequence number, last event time."""

    symbol: str
    exchange: str
    mid_cents: int
    seq: int
    last_ts_us: int = 0


class Market:
    """A fixed universe of instruments; ``step`` moves one of them and returns it."""

    __slots__ = ("_cum_weights", "_rng", "instruments")

    def __init__(self, symbols: int, rng: random.Random) -> None:
        if symbols < 1:
            raise ValueError(f"symbols must be >= 1, got {symbols}")
        self._rng = rng
        self.instruments = [_instrument(i, rng) for i in range(symbols)]
        weights = [1.0 / (rank + 1) ** _ZIPF_EXPONENT for rank in range(symbols)]
        total = 0.0
        self._cum_weights: list[float] = []
        for weight in weights:
            total += weight
            self._cum_weights.append(total)

    def step(self) -> Instrument:
        """Pick an instrument (liquid names more often), walk its mid, bump its seq."""
        rng = self._rng
        instrument = rng.choices(self.instruments, cum_weights=self._cum_weights)[0]
        instrument.mid_cents = walk(instrument.mid_cents, rng)
        instrument.seq += 1
        return instrument


def walk(mid_cents: int, rng: random.Random) -> int:
    """One geometric random-walk step of a mid price, held inside [1.00, 1,000,000.00]."""
    moved = round(mid_cents * math.exp(rng.gauss(0.0, _VOLATILITY)))
    return min(max(moved, _MIN_MID_CENTS), _MAX_MID_CENTS)


def cents(value: int) -> float:
    """Integer cents as a float price with at most two decimals."""
    return value / 100


def _instrument(index: int, rng: random.Random) -> Instrument:
    if index < len(_TICKERS):
        symbol, exchange = _TICKERS[index]
    else:
        symbol, exchange = f"SYM{index:04d}", _VENUES[index % len(_VENUES)]
    mid = round(math.exp(rng.uniform(math.log(20.0), math.log(800.0))) * 100)
    return Instrument(symbol, exchange, mid, seq=rng.randrange(1_000_000, 9_000_000))
