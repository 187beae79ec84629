"""The per-symbol state's costs: hostile holes, bytes per symbol, the healthy per-record path.

Run: taskset -c 1 .venv/bin/python bench/bench_state.py [--holes 400000] [--symbols 100000]
     [--records 200000] [--repeat 5] [--only holes|memory|healthy]

* holes: one symbol (max_holes: --max-holes) under a window wide enough to hold
  everything (10**12), one jump of 10**9 and then HOLES random late numbers inside it,
  fed in batches of 500 through ``observe_columns`` (the service's path): seconds in all,
  and µs a record for the last tenth (where the holes are most numerous).
* memory: SYMBOLS symbols on one (topic, partition) after one record each (seq and a
  float event time, the partition key a fresh tuple per record as the service reads it):
  tracemalloc's bytes held by the tracker, per symbol.
* healthy: RECORDS records of 1,000 symbols round-robin, each the next seq, a later time
  and a new quote (tick.yaml's state): best-of-REPEAT ns a record through
  ``observe_columns``; ``--datetimes``: the times aware datetimes (tick.yaml's event_ts).

* rss: like memory, but the growth of the process's resident set, with each key a fresh
  str as decoded from a payload (so a tracker that keeps its own copy of the key is charged
  for it, and one holding the str object is charged for that): the figure that compares
  the native tracker, whose memory tracemalloc cannot see. Run one tracker per process
  (``--only rss --native-only`` / without), each in a fresh interpreter; ``--tick``:
  tick.yaml's state (aware datetimes, a three-field quote).

``--module`` names another module with a ``SymbolStateTracker`` (e.g. a copy of an older
state/tracker.py on PYTHONPATH) to measure it side by side in the same run; ``--native`` adds
the native tracker (``state.native``), ``--native-only`` measures it alone.

Per-record CPU in instructions (repeatable on a busy machine), start-up subtracted:
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        .venv/bin/python bench/bench_state.py --only healthy --records N --repeat 1 [--native-only]
with ``--baseline`` (a tracker that does nothing: the bench's own rows and calls) in place of
``--native-only`` for the same N: (total(tracker) - total(baseline)) / N instructions a record.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import random
import time
import tracemalloc
from datetime import UTC, datetime, timedelta
from types import ModuleType, SimpleNamespace
from typing import Any

from stream_validator.contracts.statespec import SymbolStateSpec

BATCH = 500
_EPOCH = datetime(2026, 11, 30, tzinfo=UTC)


def bench_holes(module: ModuleType, holes: int, max_holes: int) -> tuple[float, float]:
    """Seconds for a jump and ``holes`` random late numbers; µs a record for the last tenth."""
    spec = SymbolStateSpec(sequence_window=10**12, resync_after=None, max_holes=max_holes)
    tracker = module.SymbolStateTracker(spec)
    rng = random.Random(7)
    seqs = [1, 10**9, *(rng.randrange(2, 10**9) for _ in range(holes))]
    n = len(seqs)
    start = time.perf_counter()
    tail_start = start
    for at in range(0, n, BATCH):
        if at >= n - n // 10 and tail_start == start:
            tail_start = time.perf_counter()
            tail_from = at
        chunk = seqs[at : at + BATCH]
        m = len(chunk)
        tracker.observe_columns([0] * m, ["AAPL"] * m, chunk, [None] * m)
    end = time.perf_counter()
    return end - start, (end - tail_start) / (n - tail_from) * 1e6


def bench_memory(module: ModuleType, symbols: int) -> float:
    """Bytes held by the tracker per symbol after one record each."""
    names = [f"S{i:07d}" for i in range(symbols)]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    tracker = module.SymbolStateTracker(SymbolStateSpec(event_time_field="ts"))
    for at in range(0, symbols, BATCH):
        keys = names[at : at + BATCH]
        m = len(keys)
        partitions = [("md.ticks.raw", int("0")) for _ in range(m)]  # fresh, as read
        seqs = [1_000_000 + i for i in range(m)]
        times = [1_764_000_000.0 + i for i in range(m)]
        tracker.observe_columns(partitions, keys, seqs, times)
        del partitions, seqs, times, keys
    gc.collect()
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    assert len(tracker) == symbols
    return held / symbols


class _Baseline:
    """A tracker that does nothing: what the benches cost around the tracker."""

    def __init__(self, spec: SymbolStateSpec) -> None:
        self.spec = spec

    def observe_columns(self, *columns: object) -> list[object]:
        return []


def _rss() -> int:
    """Resident bytes of this process now."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        return int(statm.read().split()[1]) * 4096


def bench_rss(module: ModuleType, symbols: int, tick: bool = False) -> float:
    """Resident bytes the process grew by per symbol after one record each (fresh keys);
    ``tick``: tick.yaml's state (aware datetimes, a quote of three floats) instead of a
    seq and epoch seconds."""
    spec = SymbolStateSpec(event_time_field="ts")
    if tick:
        spec = SymbolStateSpec(
            event_time_field="ts",
            max_time_regression_s=1.0,
            quote_fields=("price", "bid", "ask"),
            frozen_max_updates=20,
            frozen_max_s=60.0,
        )
    tracker = module.SymbolStateTracker(spec)
    gc.collect()
    before = _rss()
    for at in range(0, symbols, BATCH):
        m = min(BATCH, symbols - at)
        keys = [f"S{i:07d}" for i in range(at, at + m)]  # fresh, as decoded
        partitions = [("md.ticks.raw", int("0")) for _ in range(m)]
        seqs = [1_000_000 + i for i in range(m)]
        quotes = None
        if tick:
            times: list[Any] = [_EPOCH + timedelta(microseconds=i) for i in range(m)]
            quotes = [(100.0 + i, 99.5 + i, 100.5 + i) for i in range(m)]
        else:
            times = [1_764_000_000.0 + i for i in range(m)]
        tracker.observe_columns(partitions, keys, seqs, times, quotes)
        del partitions, seqs, times, keys, quotes
    gc.collect()
    grown = _rss() - before
    assert len(tracker) == symbols
    return grown / symbols


def bench_healthy(module: ModuleType, records: int, repeat: int, aware: bool = False) -> float:
    """Best-of-``repeat`` ns a record on a healthy feed of 1,000 symbols (``aware``: the
    event times are aware datetimes, as tick.yaml's ``event_ts``, not epoch seconds)."""
    spec = SymbolStateSpec(
        event_time_field="ts",
        max_time_regression_s=0.0,
        quote_fields=("bid", "ask"),
        frozen_max_updates=500,
    )
    symbols = [f"S{i:04d}" for i in range(1000)]
    rows = []
    for i in range(records):
        n = i // 1000
        moment: object = _EPOCH + timedelta(milliseconds=i) if aware else 1e9 + i
        rows.append((("t", 0), symbols[i % 1000], n + 1, moment, (float(n), float(n) + 0.5)))
    batches = []
    for at in range(0, records, BATCH):
        chunk = rows[at : at + BATCH]
        batches.append([list(column) for column in zip(*chunk, strict=True)])
    best = float("inf")
    for _ in range(repeat):
        tracker = module.SymbolStateTracker(spec)
        start = time.process_time()
        for partitions, keys, seqs, times, quotes in batches:
            assert not tracker.observe_columns(partitions, keys, seqs, times, quotes)
        best = min(best, time.process_time() - start)
    return best / records * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--holes", type=int, default=400_000)
    parser.add_argument("--symbols", type=int, default=100_000)
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--max-holes", type=int, default=SymbolStateSpec().max_holes)
    parser.add_argument("--only", choices=("holes", "memory", "healthy", "rss"))
    parser.add_argument("--module", action="append", default=[])
    parser.add_argument("--native", action="store_true", help="also the native tracker")
    parser.add_argument("--native-only", action="store_true", help="the native tracker alone")
    parser.add_argument("--tick", action="store_true", help="rss: tick.yaml's state")
    parser.add_argument("--datetimes", action="store_true", help="healthy: aware event times")
    parser.add_argument("--baseline", action="store_true", help="a tracker doing nothing alone")
    args = parser.parse_args()
    modules: list[Any] = []
    if not args.native_only:
        names = ["stream_validator.state.tracker", *args.module]
        modules += [importlib.import_module(name) for name in names]
    if args.native or args.native_only:
        from stream_validator.state.native import NativeSymbolStateTracker

        native = SimpleNamespace(__name__="native", SymbolStateTracker=NativeSymbolStateTracker)
        modules.append(native)
    if args.baseline:
        modules = [SimpleNamespace(__name__="baseline", SymbolStateTracker=_Baseline)]
    for module in modules:
        name = module.__name__
        if args.only in (None, "healthy"):
            ns = bench_healthy(module, args.records, args.repeat, args.datetimes)
            times = "aware datetimes" if args.datetimes else "epoch seconds"
            print(f"{name}: healthy {ns:.0f} ns a record, {times} (best of {args.repeat})")
        if args.only in (None, "memory") and name != "native":  # tracemalloc sees no Rust
            per = bench_memory(module, args.symbols)
            print(f"{name}: memory {per:.0f} B a symbol ({args.symbols} symbols)")
        if args.only == "rss":
            per = bench_rss(module, args.symbols, args.tick)
            shape = "tick.yaml's state" if args.tick else "seq and epoch seconds"
            print(f"{name}: rss {per:.0f} B a symbol ({args.symbols} symbols, {shape})")
        if args.only in (None, "holes"):
            seconds, tail = bench_holes(module, args.holes, args.max_holes)
            print(
                f"{name}: holes {seconds:.1f} s for {args.holes} late numbers"
                f" (max_holes {args.max_holes}); {tail:.1f} µs a record in the last tenth"
            )


if __name__ == "__main__":
    main()
