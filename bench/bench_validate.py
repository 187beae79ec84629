"""Throughput of validate_payloads next to plain decoding and other validators, in one run.

Run: taskset -c 1 .venv/bin/python bench/bench_validate.py [--records 100000] [--repeat 5]
(the references need the bench extra: pip install -e '.[bench]')

For each variant (the tick contract, the tick contract without its datetime field, and a
40-field contract, each with 1 % and with 10 % bad records) it prints records per CPU
second, best of `repeat` runs taken round-robin, and the ratio to `orjson.loads` on the
same bytes in the same run (then all ratios of `validate_payloads` in one table):

* orjson.loads: decode to dicts, no checks;
* msgspec Struct: decode each payload into a Struct generated from the contract (types,
  bounds via Meta, unknown fields forbidden), stopping at the first error;
* msgspec batch array: the valid payloads, 500 at a time, decoded as one JSON array;
* pydantic strict model_validate_json;
* validate_payloads, and `stream-validator validate`'s file path (validate_jsonl, with the
  cyclic collector tuned as the command tunes it).

Then the cost of the tick contract's record rules and require_timezone (`--rules-cost`
alone): validate_payloads time with them against the same contract without them.

Speed targets live here, never in unit tests.
"""

from __future__ import annotations

import argparse
import functools
import io
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import orjson

from stream_validator import DataSchemaContractVerifier, FieldSpec, SchemaContract, load_contract
from stream_validator.gcpolicy import collector_tuned
from stream_validator.offline import validate_jsonl

TICK = Path(__file__).resolve().parents[1] / "config" / "contracts" / "tick.yaml"
MICRO_BATCH = 500

Record = dict[str, object]

# Ten-plus corruption kinds, each turning a good tick into a bad payload.
CORRUPTIONS: dict[str, Callable[[Record], object]] = {
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
RAW_CORRUPTIONS: dict[str, Callable[[bytes], bytes]] = {
    "nan_literal": lambda b: b.replace(b'"price":', b'"price":NaN,"x":', 1),
    "garbage": lambda b: b"\xff\xfe" + b[:10],
    "truncated": lambda b: b[: len(b) // 2],
}


def _drop(record: Record, key: str) -> Record:
    return {k: v for k, v in record.items() if k != key}


def _rename(record: Record, old: str, new: str) -> Record:
    return {(new if k == old else k): v for k, v in record.items()}


def tick_record(rng: random.Random, seq: int, symbols: list[str]) -> Record:
    """Tick number ``seq`` of a feed that cycles through the symbols, as a real feed does
    per instrument: each symbol's own ``seq`` goes up by one, event time goes forward (so
    tick.yaml's per-symbol state sees a healthy feed), and bench/harness.py's ``fill`` keys
    record number ``seq`` by the same symbol every time."""
    mid = rng.uniform(10, 500)
    return {
        "symbol": symbols[seq % len(symbols)],
        "exchange": "XNAS",
        "event_ts": f"2026-11-30T14:{seq // 60000 % 60:02d}:{seq // 1000 % 60:02d}"
        f".{seq % 1000:03d}000+00:00",
        "seq": seq // len(symbols),
        "price": round(mid, 4),
        "size": rng.randint(1, 5000),
        "bid": round(mid - 0.01, 4),
        "ask": round(mid + 0.01, 4),
        "bid_sz": rng.randint(1, 50),
        "ask_sz": rng.randint(1, 50),
    }


def make_payloads(
    n: int,
    bad_fraction: float,
    seed: int = 7,
    *,
    drop: tuple[str, ...] = (),
) -> tuple[list[bytes], Counter[str]]:
    """Ticks (without the fields in `drop`), `bad_fraction` of them corrupted."""
    rng = random.Random(seed)
    symbols = [f"SYM{i:03d}" for i in range(500)]
    kinds = [
        k for k in list(CORRUPTIONS) + list(RAW_CORRUPTIONS) if k != "bad_timestamp" or not drop
    ]
    injected: Counter[str] = Counter()
    out: list[bytes] = []
    for seq in range(n):
        record = tick_record(rng, seq, symbols)
        for name in drop:
            del record[name]
        if rng.random() < bad_fraction:
            kind = rng.choice(kinds)
            injected[kind] += 1
            if kind in CORRUPTIONS:
                out.append(orjson.dumps(CORRUPTIONS[kind](record)))
            else:
                out.append(RAW_CORRUPTIONS[kind](orjson.dumps(record)))
        else:
            out.append(orjson.dumps(record))
    return [compact(raw) for raw in out], injected


def compact(raw: bytes) -> bytes:
    """A copy of ``raw`` in an allocation of its own size, as a Kafka consumer's
    ``Message.value()`` hands it out. ``orjson.dumps`` returns its bytes in a buffer of about
    4 KB, so payloads kept from it each sit on a page of their own; that slowed every
    decoder reading them (orjson.loads by about 30 %) and by different amounts."""
    return bytes(memoryview(raw))


def wide_contract() -> SchemaContract:
    """40 fields: floats and ints with bounds, strings, bools, a few nullable, a datetime."""
    fields = [FieldSpec("ts", datetime)]
    for i in range(39):
        kind = i % 4
        if kind == 0:
            fields.append(FieldSpec(f"f{i}", float, min_value=0.0, max_value=1e6))
        elif kind == 1:
            fields.append(FieldSpec(f"i{i}", int, min_value=0, is_nullable=i % 8 == 1))
        elif kind == 2:
            fields.append(FieldSpec(f"s{i}", str))
        else:
            fields.append(FieldSpec(f"b{i}", bool))
    return SchemaContract("wide", fields, max_allowed_null_pct=5.0)


def wide_payloads(n: int, bad_fraction: float, seed: int = 7) -> tuple[list[bytes], Counter[str]]:
    """Wide records; bad ones get one of the generic corruptions below."""
    rng = random.Random(seed)
    contract = wide_contract()
    injected: Counter[str] = Counter()
    out: list[bytes] = []
    for seq in range(n):
        record: Record = {"ts": f"2026-11-30T14:00:{seq % 60:02d}.{seq % 1000:03d}000+00:00"}
        for spec in contract.fields[1:]:
            tp = spec.expected_type
            record[spec.name] = (
                round(rng.uniform(0, 1e6), 3)
                if tp is float
                else rng.randint(0, 10**6)
                if tp is int
                else rng.choice(["alpha", "beta", "gamma"])
                if tp is str
                else rng.random() < 0.5
            )
        raw = orjson.dumps(record)
        if rng.random() < bad_fraction:
            kind = rng.choice(["missing", "type", "bound", "garbage", "truncated", "unknown"])
            injected[kind] += 1
            name = rng.choice(contract.fields[1:]).name
            if kind == "missing":
                raw = orjson.dumps(_drop(record, name))
            elif kind == "type":
                raw = orjson.dumps({**record, name: [1]})
            elif kind == "bound":
                raw = orjson.dumps({**record, "f0": -5.0})
            elif kind == "garbage":
                raw = b"\xff" + raw[:20]
            elif kind == "truncated":
                raw = raw[: len(raw) // 2]
            else:
                raw = orjson.dumps({**record, "extra": 1, name: None})
        out.append(compact(raw))
    return out, injected


# --- references -------------------------------------------------------------------


def _bounds(spec: FieldSpec) -> dict[str, Any]:
    out = {}
    if spec.min_value is not None:
        out["ge"] = spec.min_value
    if spec.max_value is not None:
        out["le"] = spec.max_value
    return out


def msgspec_decoders(contract: SchemaContract) -> tuple[Callable[[bytes], Any], Callable[..., Any]]:
    import msgspec

    fields = []
    for i, spec in enumerate(contract.fields):
        tp: Any = spec.expected_type
        bounds = _bounds(spec)
        if spec.expected_type is int:
            bounds = {k: int(v) for k, v in bounds.items()}
        if bounds:
            tp = Annotated[tp, msgspec.Meta(**bounds)]
        fields.append((f"f{i}", tp | None if spec.is_nullable else tp))
    struct = msgspec.defstruct(
        "Ref",
        fields,
        rename={f"f{i}": s.name for i, s in enumerate(contract.fields)},
        forbid_unknown_fields=True,
        gc=False,
    )
    return msgspec.json.Decoder(struct).decode, msgspec.json.Decoder(list[struct]).decode


def pydantic_validator(contract: SchemaContract) -> Callable[[bytes], Any]:
    from pydantic import ConfigDict, Field, create_model

    fields: dict[str, Any] = {}
    for i, spec in enumerate(contract.fields):
        tp: Any = spec.expected_type
        tp = Annotated[
            tp | None if spec.is_nullable else tp, Field(alias=spec.name, **_bounds(spec))
        ]
        fields[f"f{i}"] = (tp, ...)
    model = create_model(  # type: ignore[call-overload]
        "Ref", __config__=ConfigDict(strict=True, extra="forbid"), **fields
    )
    validate: Callable[[bytes], Any] = model.model_validate_json
    return validate


def best_rates(cases: list[tuple[str, Callable[[], object], int]], repeat: int) -> list[float]:
    """Records per CPU second of each case, the fastest of `repeat` runs (the least
    disturbed by the machine). CPU time of this process, not wall time, so that waiting
    for a core another process holds does not count; and runs go round-robin over the
    cases, so that every case sees the same spells of load (caches, frequency) and the
    ratios of one run stay comparable on a shared machine."""
    best = [float("inf")] * len(cases)
    for _ in range(repeat):
        for i, (_, fn, _) in enumerate(cases):
            start = time.process_time()
            fn()
            best[i] = min(best[i], time.process_time() - start)
    return [n / t for (_, _, n), t in zip(cases, best, strict=True)]


def cli_validate(verifier: DataSchemaContractVerifier, text: bytes) -> None:
    """``validate_jsonl`` as ``stream-validator validate`` runs it: inside
    ``collector_tuned`` (whose ``gc.collect`` at entry is timed too), outputs written."""
    with collector_tuned():
        validate_jsonl(verifier, io.BytesIO(text), valid_out=io.BytesIO(), dlq_out=io.BytesIO())


def each(fn: Callable[[bytes], Any], errors: tuple[type[Exception], ...]) -> Callable[..., None]:
    def run(payloads: list[bytes]) -> None:
        for raw in payloads:
            try:  # noqa: SIM105 - suppress() costs a context manager per record
                fn(raw)
            except errors:
                pass

    return run


@dataclass
class Variant:
    name: str
    contract: SchemaContract
    payloads: list[bytes]
    injected: Counter[str]


def run_variant(variant: Variant, repeat: int) -> list[tuple[str, float]]:
    payloads = variant.payloads
    n = len(payloads)
    verifier = DataSchemaContractVerifier(variant.contract)
    report = verifier.validate_payloads(payloads)
    valid = [payloads[i] for i in report.valid_indices]
    decode_all = each(orjson.loads, (orjson.JSONDecodeError,))
    cases: list[tuple[str, Callable[[], object], int]] = [
        ("orjson.loads alone (decode to dicts, no checks)", lambda: decode_all(payloads), n)
    ]
    missing: list[str] = []
    try:
        import msgspec

        one, batch = msgspec_decoders(variant.contract)

        def decodes(raw: bytes) -> bool:
            try:
                one(raw)
            except msgspec.DecodeError:
                return False
            return True

        valid = [raw for raw in valid if decodes(raw)]  # e.g. drift: valid, not for a Struct
        per_record = each(one, (msgspec.DecodeError,))
        arrays = [
            b"[" + b",".join(valid[i : i + MICRO_BATCH]) + b"]"
            for i in range(0, len(valid), MICRO_BATCH)
        ]

        def decode_arrays() -> None:
            for array in arrays:
                batch(array)

        cases += [
            ("msgspec Struct per record (stops at first error)", lambda: per_record(payloads), n),
            (
                f"msgspec batch array of {MICRO_BATCH} (valid records only)",
                decode_arrays,
                len(valid),
            ),
        ]
    except ImportError:
        missing.append("msgspec (not installed)")
    try:
        import pydantic

        strict = each(pydantic_validator(variant.contract), (pydantic.ValidationError,))
        cases.append(("pydantic strict model_validate_json", lambda: strict(payloads), n))
    except ImportError:
        missing.append("pydantic (not installed: pip install -e '.[bench]')")
    text = b"\n".join(payloads) + b"\n"
    cases += [
        ("**validate_payloads**", lambda: verifier.validate_payloads(payloads), n),
        (
            "validate_jsonl (`stream-validator validate`, file path)",
            lambda: cli_validate(verifier, text),
            n,
        ),
    ]
    rows = list(zip([label for label, _, _ in cases], best_rates(cases, repeat), strict=True))
    rows += [(label, 0.0) for label in missing]
    print(
        f"\n### {variant.name}: {n:,} records, {sum(variant.injected.values()):,} injected bad"
        f" of {len(variant.injected)} kinds, {report.quarantined_count:,} quarantined"
    )
    base = rows[0][1]
    print("\n| | rec/CPU-s | vs `orjson.loads` |\n|---|---|---|")
    for label, rate in rows:
        ratio = f"{rate / base:.2f}" if rate else "-"
        print(f"| {label} | {rate / 1e6:.2f} M | {ratio} |")
    return rows


def rules_cost(records: int, repeat: int) -> None:
    """The cost of the tick contract's record rules (#14 budget: at most 10 % of
    validate_payloads time), and of require_timezone, against the same contract without
    them, on the same payloads, round-robin in one run."""
    tick = load_contract(TICK)
    no_tz = tuple(replace(s, require_timezone=False) for s in tick.fields)
    variants = {
        "tick as shipped (rules + require_timezone)": tick,
        "tick, require_timezone only": replace(tick, rules=()),
        "tick, rules only": replace(tick, fields=no_tz),
        "tick without either (before #14)": replace(tick, fields=no_tz, rules=()),
    }
    print(f"\n### record rules: {', '.join(r.name for r in tick.rules)}")
    print("\n| bad | variant | rec/CPU-s | time vs without either |\n|---|---|---|---|")
    for bad in (0.01, 0.10):
        payloads, _ = make_payloads(records, bad)
        verifiers = {name: DataSchemaContractVerifier(c) for name, c in variants.items()}
        cases: list[tuple[str, Callable[[], object], int]] = [
            (name, functools.partial(v.validate_payloads, payloads), records)
            for name, v in verifiers.items()
        ]
        rates = best_rates(cases, repeat)
        base = rates[-1]
        for (name, _, _), rate in zip(cases, rates, strict=True):
            cost = base / rate - 1
            print(f"| {bad:.0%} | {name} | {rate / 1e6:.2f} M | {cost:+.1%} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--rules-cost", action="store_true", help="only the cost of the tick contract's rules"
    )
    args = parser.parse_args()
    if args.rules_cost:
        rules_cost(args.records, args.repeat)
        return
    tick = load_contract(TICK)
    no_datetime = SchemaContract(
        "tick_no_ts", tuple(s for s in tick.fields if s.expected_type is not datetime)
    )
    variants = []
    for bad in (0.01, 0.10):
        label = f"{bad:.0%} bad"
        variants += [
            Variant(f"tick, {label}", tick, *make_payloads(args.records, bad)),
            Variant(
                f"tick without its datetime field, {label}",
                no_datetime,
                *make_payloads(args.records, bad, drop=("event_ts",)),
            ),
            Variant(
                f"40-field contract, {label}", wide_contract(), *wide_payloads(args.records, bad)
            ),
        ]
    summary = []
    for variant in variants:
        rows = dict(run_variant(variant, args.repeat))
        base = rows["orjson.loads alone (decode to dicts, no checks)"]
        summary.append((variant.name, rows["**validate_payloads**"] / base))
    print("\n| variant | `validate_payloads` vs `orjson.loads` |\n|---|---|")
    for name, ratio in summary:
        print(f"| {name} | {ratio:.2f} |")
    rules_cost(args.records, args.repeat)


if __name__ == "__main__":
    main()
