"""Throughput of validate_payloads on generated ticks, next to plain orjson.loads.

Run: .venv/bin/python bench/bench_validate.py [--records 100000] [--repeat 5]

Prints records/s of both on the same bytes in the same run, and their ratio
(how many times slower validation is than decoding alone). Speed targets live
here, never in unit tests.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import orjson

from stream_validator import DataSchemaContractVerifier, load_contract

TICK = Path(__file__).resolve().parents[1] / "config" / "contracts" / "tick.yaml"

# Ten-plus corruption kinds, each turning a good tick into a bad payload.
CORRUPTIONS = {
    "missing_field": lambda r: _drop(r, "price"),
    "renamed_field": lambda r: _rename(r, "ask_sz", "ask_volume"),
    "string_price": lambda r: {**r, "price": str(r["price"])},
    "bool_size": lambda r: {**r, "size": True},
    "float_size": lambda r: {**r, "size": 1.5},
    "negative_price": lambda r: {**r, "price": -1.0},
    "huge_price": lambda r: {**r, "price": 1e12},
    "null_symbol": lambda r: {**r, "symbol": None},
    "bad_timestamp": lambda r: {**r, "event_ts": "yesterday"},
    "not_an_object": lambda r: [r["symbol"], r["price"]],
}
RAW_CORRUPTIONS = {
    "nan_literal": lambda b: b.replace(b'"price":', b'"price":NaN,"x":', 1),
    "garbage": lambda b: b"\xff\xfe" + b[:10],
    "truncated": lambda b: b[: len(b) // 2],
}


def _drop(record: dict[str, object], key: str) -> dict[str, object]:
    return {k: v for k, v in record.items() if k != key}


def _rename(record: dict[str, object], old: str, new: str) -> dict[str, object]:
    return {(new if k == old else k): v for k, v in record.items()}


def make_payloads(n: int, bad_fraction: float, seed: int = 7) -> tuple[list[bytes], Counter[str]]:
    rng = random.Random(seed)
    symbols = [f"SYM{i:03d}" for i in range(500)]
    kinds = list(CORRUPTIONS) + list(RAW_CORRUPTIONS)
    injected: Counter[str] = Counter()
    out: list[bytes] = []
    for seq in range(n):
        mid = rng.uniform(10, 500)
        record: dict[str, object] = {
            "symbol": rng.choice(symbols),
            "exchange": "XNAS",
            "event_ts": f"2026-11-30T14:{seq // 60000 % 60:02d}:{seq // 1000 % 60:02d}"
            f".{seq % 1000:03d}000+00:00",
            "seq": seq,
            "price": round(mid, 4),
            "size": rng.randint(1, 5000),
            "bid": round(mid - 0.01, 4),
            "ask": round(mid + 0.01, 4),
            "bid_sz": rng.randint(1, 50),
            "ask_sz": rng.randint(1, 50),
        }
        if rng.random() < bad_fraction:
            kind = rng.choice(kinds)
            injected[kind] += 1
            if kind in CORRUPTIONS:
                out.append(orjson.dumps(CORRUPTIONS[kind](record)))
            else:
                out.append(RAW_CORRUPTIONS[kind](orjson.dumps(record)))
        else:
            out.append(orjson.dumps(record))
    return out, injected


def best_rate(fn: Callable[[list[bytes]], object], payloads: list[bytes], repeat: int) -> float:
    """Records/s of the fastest of `repeat` runs (the least disturbed by the machine)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(payloads)
        times.append(time.perf_counter() - start)
    return len(payloads) / min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--bad-fraction", type=float, default=0.01)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    payloads, injected = make_payloads(args.records, args.bad_fraction)
    verifier = DataSchemaContractVerifier(load_contract(TICK))
    report = verifier.validate_payloads(payloads)

    def decode_all(batch: list[bytes]) -> None:
        loads = orjson.loads
        for raw in batch:
            try:  # noqa: SIM105 - suppress() costs a context manager per record
                loads(raw)
            except orjson.JSONDecodeError:
                pass

    validate_rate = best_rate(verifier.validate_payloads, payloads, args.repeat)
    decode_rate = best_rate(decode_all, payloads, args.repeat)
    print(
        f"records: {len(payloads):,}  injected bad: {sum(injected.values())} "
        f"of {len(injected)} kinds  quarantined: {report.quarantined_count}"
    )
    print(f"violation kinds seen: {dict(sorted(report.counts_by_kind().items()))}")
    print(f"orjson.loads only:   {decode_rate:>12,.0f} records/s (best of {args.repeat})")
    print(f"validate_payloads:   {validate_rate:>12,.0f} records/s (best of {args.repeat})")
    print(f"ratio validate/decode time: {decode_rate / validate_rate:.2f}x")


if __name__ == "__main__":
    main()
