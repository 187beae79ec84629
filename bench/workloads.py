"""The workloads of bench/callgrind_validate.py: a contract and its payloads each.

* ``tick``: config/contracts/tick.yaml and bench_validate's ticks;
* ``rules``: the same ticks under bench/contracts/tick_rules.yaml (rules with or, not,
  in, strings and when);
* ``book``: config/contracts/orderbook_levels.yaml (two arrays of {price, size} levels)
  and snapshots of 5 to 10 levels a side; a bad one has a level with a negative price, a
  level without its size, or a top-level corruption of bench_validate's.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path

import orjson
from bench_validate import RAW_CORRUPTIONS, TICK, compact, make_payloads

HERE = Path(__file__).resolve().parent
BOOK = HERE.parent / "config" / "contracts" / "orderbook_levels.yaml"
TICK_RULES = HERE / "contracts" / "tick_rules.yaml"


def _levels(rng: random.Random, mid: float, side: int) -> list[dict[str, object]]:
    return [
        {"price": round(mid + side * 0.01 * (i + 1), 4), "size": rng.randint(1, 5000)}
        for i in range(rng.randint(5, 10))
    ]


def book_payloads(n: int, bad_fraction: float, seed: int = 7) -> list[bytes]:
    """Order-book snapshots, ``bad_fraction`` of them broken."""
    rng = random.Random(seed)
    out: list[bytes] = []
    for i in range(n):
        mid = rng.uniform(10, 500)
        record: dict[str, object] = {
            "symbol": f"SYM{i % 500:03d}",
            "exchange": "XNAS",
            "snapshot_ts": f"2026-11-30T14:{i // 60000 % 60:02d}:{i // 1000 % 60:02d}"
            f".{i % 1000:03d}000+00:00",
            "bids": _levels(rng, mid, -1),
            "asks": _levels(rng, mid, 1),
        }
        if rng.random() >= bad_fraction:
            out.append(orjson.dumps(record))
            continue
        kind = rng.randrange(3)
        levels = record["bids" if rng.random() < 0.5 else "asks"]
        assert isinstance(levels, list)
        if kind == 0:
            levels[rng.randrange(len(levels))]["price"] = -1.0
        elif kind == 1:
            del levels[rng.randrange(len(levels))]["size"]
        else:
            corrupt = rng.choice(list(RAW_CORRUPTIONS.values()))
            out.append(corrupt(orjson.dumps(record)))
            continue
        out.append(orjson.dumps(record))
    return [compact(raw) for raw in out]


def _ticks(n: int, bad_fraction: float) -> list[bytes]:
    return make_payloads(n, bad_fraction)[0]


WORKLOADS: dict[str, tuple[Path, Callable[[int, float], list[bytes]]]] = {
    "tick": (TICK, _ticks),
    "rules": (TICK_RULES, _ticks),
    "book": (BOOK, book_payloads),
}
