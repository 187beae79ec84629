"""Vendor drift scenarios: each turns one clean record into the bytes a broken feed sends.

PURE. Every scenario is a small function ``(record, targets, rng, memory) -> bytes | None``;
the record is the builder's fresh dict (a scenario may change it), ``targets`` names the
fields of the entity it aims at, ``memory`` is what the simulator remembers about the
record's symbol (``integrity.SymbolMemory``), and ``None`` is a Kafka tombstone. A scenario
that does not apply to the entity (a crossed book in a bar feed) leaves the record clean,
and its header says "clean". What the verifier reports:

===================  ==========================================  ===============================
scenario             what the vendor sends                       verifier outcome
===================  ==========================================  ===============================
field_rename         ask_sz as ask_volume (ticks), ask_sz_1 as   missing_field + the new name in
                     ask_volume_1 (books), volume as             observed_unknown_fields
                     total_volume (bars), qty as quantity
                     (orders)
string_prices        prices as strings ("190.25"); orders:       type_mismatch
                     price and qty (a market order has no
                     price)
nan_prices           the raw JSON carries a NaN literal          undecodable (orjson rejects it)
null_bid_spike       bid side null (ticks: bid, bid_sz; books:   records valid, null_breach_fields
                     levels 2-3 of the bids; bars: vwap;         over the batch
                     orders: price) in 30% of records by
                     default
bool_volumes         sizes as JSON true                          type_mismatch
garbage              not JSON: Latin-1 bytes, binary noise,      undecodable
                     truncated JSON, CSV, empty
tombstone            a null value                                not_a_mapping
negative_price       the main price negated (a market order's    below_min
                     null price sent as -1.0)
crossed_book         ticks, books: bid above ask (the touch      rule_violation of the shipped
                     swapped; an empty tick side is quoted a     contracts' crossed_book rule
                     cent off the last trade)                    (quarantine)
locked_book          ticks, books: bid == ask (a tick's last     valid; flagged by the
                     trade at that price)                        locked_book rule (flag)
impossible_bar       bars: high below low, open above high or    rule_violation of open_in_range
                     close below low (drawn at random)           or close_in_range (quarantine)
sequence_gap         ticks (the only entity with seq): the       valid; a sequence_gap event
                     symbol's seq jumps 100 numbers ahead and    (flag) of tick.yaml's state
                     its later records continue from there
sequence_regression  ticks: seq 10 below the symbol's last; the  valid; a sequence_regression
                     next record continues without a gap         event (flag)
stale_timestamp      event time (tick and order event_ts, book   valid; timestamp_out_of_range
                     snapshot_ts, bar bar_start) the Unix epoch  under a max_age_s (none is
                     or 6 h old, half each                       shipped); ticks: an
                                                                 event_time_regression (flag)
future_timestamp     event time 1 h ahead                        valid with the shipped
                                                                 contracts (none sets
                                                                 max_future_s);
                                                                 timestamp_out_of_range under
                                                                 one
naive_timestamp      event time without an offset                type_mismatch: every shipped
                     ("2026-01-05T14:30:00.000123")              contract sets require_timezone
frozen_quote         ticks, books, bars: each symbol repeats     valid; ticks: a frozen_quote
                     its first complete quote of the episode     alert of tick.yaml's state
                     (ticks: price, size, bid, ask and sizes;    past 20 updates (never a
                     books: all levels; bars: OHLC, volume,      quarantine)
                     trades, VWAP)
bad_deploy           every field name in PascalCase (bid_sz ->   every record quarantined:
                     BidSz, symbol -> Symbol)                    missing_field for each declared
                                                                 field; the new names in
                                                                 observed_unknown_fields
unknown_side         orders: side "hold", "sell_short" or        not_allowed (side)
                     "cross"
upper_case_side      orders: side "BUY" or "SELL"                not_allowed (side)
empty_order_id       orders: order_id ""                         too_short (order_id)
===================  ==========================================  ===============================

Only ticks carry a sequence number (``seq`` in tick.yaml; books, bars and orders have none),
so the sequence scenarios leave the others clean; orders carry no quote, so frozen_quote
leaves them clean. A drift that is quarantined (garbage, tombstone, ...) still takes its
tick's number, so on the clean stream it shows as a gap.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from stream_validator.codec import encode_json
from stream_validator.sim import integrity, orders
from stream_validator.sim.integrity import SymbolMemory
from stream_validator.sim.records import Entity

Record = dict[str, Any]


@dataclass(frozen=True, slots=True)
class DriftTargets:
    """The fields of one entity that the scenarios aim at."""

    rename: tuple[str, str]
    price: str
    prices: tuple[str, ...]
    sizes: tuple[str, ...]
    bid_side: tuple[str, ...]
    time: str
    quote: tuple[str, ...]
    touch: tuple[str, str] | None = None
    touch_sizes: tuple[str, ...] = ()
    seq: str | None = None
    side: str | None = None
    order_id: str | None = None


TARGETS: Final[dict[Entity, DriftTargets]] = {
    Entity.TICK: DriftTargets(
        rename=("ask_sz", "ask_volume"),
        price="price",
        prices=("price", "bid", "ask"),
        sizes=("size",),
        bid_side=("bid", "bid_sz"),
        time="event_ts",
        quote=("price", "size", "bid", "ask", "bid_sz", "ask_sz"),
        touch=("bid", "ask"),
        touch_sizes=("bid_sz", "ask_sz"),
        seq="seq",
    ),
    Entity.ORDERBOOK_SNAPSHOT: DriftTargets(
        rename=("ask_sz_1", "ask_volume_1"),
        price="bid_px_1",
        prices=tuple(f"{side}_px_{level}" for level in (1, 2, 3) for side in ("bid", "ask")),
        sizes=tuple(f"{side}_sz_{level}" for level in (1, 2, 3) for side in ("bid", "ask")),
        bid_side=("bid_px_2", "bid_sz_2", "bid_px_3", "bid_sz_3"),
        time="snapshot_ts",
        quote=(
            "depth",
            *(
                f"{side}_{kind}_{level}"
                for level in (1, 2, 3)
                for side in ("bid", "ask")
                for kind in ("px", "sz")
            ),
        ),
        touch=("bid_px_1", "ask_px_1"),
    ),
    Entity.OHLCV_BAR: DriftTargets(
        rename=("volume", "total_volume"),
        price="close",
        prices=("open", "high", "low", "close", "vwap"),
        sizes=("volume",),
        bid_side=("vwap",),
        time="bar_start",
        quote=("open", "high", "low", "close", "volume", "trade_count", "vwap"),
    ),
    Entity.ORDER: DriftTargets(
        rename=("qty", "quantity"),
        price="price",
        prices=("price", "qty"),
        sizes=("qty",),
        bid_side=("price",),
        time="event_ts",
        quote=(),
        side="side",
        order_id="order_id",
    ),
}

Drift = Callable[[Record, DriftTargets, random.Random, SymbolMemory], bytes | None]


@dataclass(frozen=True, slots=True)
class Scenario:
    """A named drift, the share of records it hits when a spec gives none, a summary, and
    the entities it applies to."""

    name: str
    apply: Drift
    default_fraction: float
    summary: str
    entities: frozenset[Entity] = frozenset(Entity)


def field_rename(
    record: Record, targets: DriftTargets, rng: random.Random, memory: SymbolMemory
) -> bytes:
    """The vendor renamed a field; order and value are kept."""
    old, new = targets.rename
    return encode_json({(new if key == old else key): value for key, value in record.items()})


def string_prices(
    record: Record, targets: DriftTargets, rng: random.Random, memory: SymbolMemory
) -> bytes:
    """Prices arrive as decimal strings; nulls stay null."""
    for name in targets.prices:
        if record[name] is not None:
            record[name] = str(record[name])
    return encode_json(record)


def nan_prices(
    record: Record, targets: DriftTargets, rng: random.Random, memory: SymbolMemory
) -> bytes:
    """The main price is the NaN literal, which JSON (and orjson) does not allow."""
    record[targets.price] = None
    placeholder = b'"' + targets.price.encode() + b'":null'
    return encode_json(record).replace(placeholder, placeholder[:-4] + b"NaN", 1)


def null_bid_spike(
    record: Record, targets: DriftTargets, rng: random.Random, memory: SymbolMemory
) -> bytes:
    """The bid side is null: each record stays valid, but the batch's null rate breaches."""
    for name in targets.bid_side:
        record[name] = None
    return encode_json(record)


def bool_volumes(
    record: Record, targets: DriftTargets, rng: random.Random, memory: SymbolMemory
) -> bytes:
    """Sizes arrive as JSON true; nulls stay null."""
    for name in targets.sizes:
        if record[name] is not None:
            record[name] = True
    return encode_json(record)


def garbage(
    record: Record, targets: DriftTargets, rng: random.Random, memory: SymbolMemory
) -> bytes:
    """Bytes that are not JSON at all; the kind of breakage is drawn at random."""
    clean = encode_json(record)
    kind = rng.randrange(5)
    if kind == 0:  # a Latin-1 'é' where UTF-8 is required
        return clean.replace(b'":"', b'":"\xe9', 1)
    if kind == 1:
        return b"\xff\xfe" + rng.randbytes(rng.randint(1, 64))
    if kind == 2:
        return clean[: rng.randint(1, len(clean) - 1)]
    if kind == 3:
        values = [record[targets.price], record[targets.sizes[0]]]
        return ",".join(str(v) for v in (record["symbol"], *values)).encode()
    return b""


def tombstone(
    record: Record, targets: DriftTargets, rng: random.Random, memory: SymbolMemory
) -> None:
    """A null value where a record was expected."""
    return None


def negative_price(
    record: Record, targets: DriftTargets, rng: random.Random, memory: SymbolMemory
) -> bytes:
    """The main price has the wrong sign; a missing one (a market order's) is sent as -1."""
    price = record[targets.price]
    record[targets.price] = -1.0 if price is None else -abs(price)
    return encode_json(record)


_BOOKS: Final = frozenset({Entity.TICK, Entity.ORDERBOOK_SNAPSHOT})
_SEQ: Final = frozenset(entity for entity, targets in TARGETS.items() if targets.seq)
_QUOTES: Final = frozenset(entity for entity, targets in TARGETS.items() if targets.quote)
_ORDERS: Final = frozenset(entity for entity, targets in TARGETS.items() if targets.side)

SCENARIOS: Final[dict[str, Scenario]] = {
    s.name: s
    for s in (
        Scenario("field_rename", field_rename, 1.0, "rename a field (ask_sz -> ask_volume)"),
        Scenario("string_prices", string_prices, 1.0, 'prices as strings ("190.25")'),
        Scenario("nan_prices", nan_prices, 1.0, "a NaN literal in the raw JSON"),
        Scenario("null_bid_spike", null_bid_spike, 0.3, "bid side null (default 30%)"),
        Scenario("bool_volumes", bool_volumes, 1.0, "sizes as true"),
        Scenario("garbage", garbage, 1.0, "not JSON (bad UTF-8, noise, truncated)"),
        Scenario("tombstone", tombstone, 1.0, "null value (Kafka tombstone)"),
        Scenario("negative_price", negative_price, 1.0, "a negative price"),
        Scenario("crossed_book", integrity.crossed_book, 1.0, "bid > ask (ticks, books)", _BOOKS),
        Scenario("locked_book", integrity.locked_book, 1.0, "bid == ask (ticks, books)", _BOOKS),
        Scenario(
            "impossible_bar",
            integrity.impossible_bar,
            1.0,
            "high < low, open/close out (bars)",
            frozenset({Entity.OHLCV_BAR}),
        ),
        Scenario("sequence_gap", integrity.sequence_gap, 1.0, "seq jumps 100 ahead (ticks)", _SEQ),
        Scenario(
            "sequence_regression",
            integrity.sequence_regression,
            1.0,
            "seq steps 10 back (ticks)",
            _SEQ,
        ),
        Scenario("stale_timestamp", integrity.stale_timestamp, 1.0, "event time 1970 or 6 h old"),
        Scenario("future_timestamp", integrity.future_timestamp, 1.0, "event time 1 h ahead"),
        Scenario("naive_timestamp", integrity.naive_timestamp, 1.0, "event time without offset"),
        Scenario(
            "frozen_quote", integrity.frozen_quote, 1.0, "a symbol repeats one quote", _QUOTES
        ),
        Scenario("bad_deploy", integrity.bad_deploy, 1.0, "every field renamed (PascalCase)"),
        Scenario("unknown_side", orders.unknown_side, 1.0, 'side "hold" (orders)', _ORDERS),
        Scenario("upper_case_side", orders.upper_case_side, 1.0, 'side "BUY" (orders)', _ORDERS),
        Scenario("empty_order_id", orders.empty_order_id, 1.0, 'order_id "" (orders)', _ORDERS),
    )
}
