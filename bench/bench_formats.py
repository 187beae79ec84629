"""An Avro route against the JSON route on the same records: the work per record, side by side.

Run: .venv/bin/python bench/bench_formats.py [--records 20000] [--repeat 5]
     [--callgrind [--only native]]

The records are the tick of ``tests/support/registryformats.py`` (nine fields: strings, a
double, a float, a long, an int, an enum, a nullable string and two timestamps), the size
varied per record, checked by its contract (``TICK_CONTRACT``). The JSON route's work is
``validate_payloads`` on the JSON bytes (timestamps as ISO 8601 text); the Avro route's is what
the service does for it, both ways: *native* (the service's default: ``RecordDecoder`` with
``NativeAvro``, each datum read by the native core into JSON text that the native verdict core
judges) and *fastavro* (``SV_NATIVE=0``: confluent-kafka's AvroDeserializer path, the schema
cached after the first record, as the real client caches it, then the contract's rules on the
decoded dicts); ``service.plan.decoded.validate_decoded`` judges both. The decode alone is a row
too, and each route's whole planning step (``RouteProcessor.plan`` of one batch: verdicts, null
window, outputs), which is what the service does per batch between consuming and producing.

Default: CPU seconds per record (``time.process_time``, best of ``--repeat``, the variants
round-robin, so waiting for a core does not count). ``--callgrind``: instructions per record,
counted by valgrind callgrind as in ``instructions_per_record.py``: (count for 3N records -
for N) / 2N around one call, with the cyclic collector frozen and off, so set-up cancels.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import callgrind

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from stream_validator.codec import encode_json  # noqa: E402
from stream_validator.config.model import RouteConfig, SchemaRegistryConfig  # noqa: E402
from stream_validator.contracts.loader import load_contract  # noqa: E402
from stream_validator.records import SourceRecord  # noqa: E402
from stream_validator.registry.avronative import NativeAvro  # noqa: E402
from stream_validator.registry.client import registry_client  # noqa: E402
from stream_validator.registry.decoder import RecordDecoder  # noqa: E402
from stream_validator.registry.outcome import Transcoded  # noqa: E402
from stream_validator.service.plan.decoded import validate_decoded  # noqa: E402
from stream_validator.service.plan.planner import RouteProcessor  # noqa: E402
from stream_validator.verify import DataSchemaContractVerifier  # noqa: E402
from tests.support.registryformats import TICK, TICK_CONTRACT, serializer  # noqa: E402

TOPIC = "md.ticks.avro"


def workloads(records: int) -> dict[str, Callable[[], Any]]:
    """name -> one call over ``records`` records (the set-up done here, outside the call)."""
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as file:
        file.write(TICK_CONTRACT)
    contract = load_contract(Path(file.name))
    os.unlink(file.name)
    ticks = [{**TICK, "size": 1 + i % 5000, "symbol": f"S{i % 500}"} for i in range(records)]
    as_json = [
        encode_json({**t, "ts": t["ts"].isoformat(), "recv": t["recv"].isoformat()}) for t in ticks
    ]
    client = registry_client(SchemaRegistryConfig(url="mock://bench"))
    write = serializer("avro", client)
    avro = [SourceRecord(TOPIC, 0, i, None, write(TOPIC, t)[0], [], 0) for i, t in enumerate(ticks)]
    values = [r.value for r in avro]
    decoder = RecordDecoder("avro", client)
    native = RecordDecoder("avro", client, NativeAvro(lambda: contract, 1_048_576))
    verifier = DataSchemaContractVerifier(contract)
    decoder.decode_batch(avro[:1])  # the schema fetched and cached, as after a first batch
    native.decode_batch(avro[:1])  # and compiled for the native core

    def json_route() -> Any:
        return verifier.validate_payloads(as_json)

    def avro_route() -> Any:
        return validate_decoded(verifier, decoder.decode_batch(avro), values, None)

    def avro_decode() -> Any:
        return decoder.decode_batch(avro)

    def native_route() -> Any:
        return validate_decoded(verifier, native.decode_batch(avro), values, None)

    def native_decode() -> Any:
        return native.decode_batch(avro)

    route = RouteConfig("ticks", "tick.yaml", contract, "clean", "dlq", (TOPIC,))
    json_records = [r._replace(value=v) for r, v in zip(avro, as_json, strict=True)]
    processors = [
        RouteProcessor(route, consumer_group="g", max_message_bytes=1_048_576, null_window=500)
        for _ in range(3)
    ]
    at = "2026-12-03T12:00:00+00:00"

    def json_plan() -> Any:  # what the service does per batch, Kafka aside
        return processors[0].plan(json_records, validated_at=at)

    def avro_plan() -> Any:
        return processors[1].plan(avro, validated_at=at, decoded_values=decoder.decode_batch(avro))

    def native_plan() -> Any:
        return processors[2].plan(avro, validated_at=at, decoded_values=native.decode_batch(avro))

    report = avro_route()
    assert report.valid_count == records, report.quarantined_records[:1]
    assert native_route().valid_count == records
    assert all(type(r) is Transcoded for r in native_decode())  # not fastavro's
    assert json_route().valid_count == records
    assert sum(o.kind == "clean" for o in avro_plan().outputs) == records
    assert sum(o.kind == "clean" for o in native_plan().outputs) == records
    return {
        "json route: verify": json_route,
        "avro route, native: decode + verify": native_route,
        "avro route, fastavro: decode + verify": avro_route,
        "avro decode only, native": native_decode,
        "avro decode only, fastavro": avro_decode,
        "json route: plan the batch": json_plan,
        "avro route, native: decode + plan the batch": native_plan,
        "avro route, fastavro: decode + plan the batch": avro_plan,
    }


def cpu_per_record(records: int, repeat: int) -> dict[str, float]:
    loads = workloads(records)
    best = dict.fromkeys(loads, float("inf"))
    for _ in range(repeat):
        for name, call in loads.items():
            gc.collect()
            start = time.process_time()
            call()
            best[name] = min(best[name], time.process_time() - start)
    return {name: seconds / records for name, seconds in best.items()}


def measured(name: str, records: int) -> None:
    """One call of one workload between callgrind's markers (run under callgrind)."""
    call = workloads(records)[name]
    gc.collect()
    gc.freeze()
    gc.disable()
    os.getppid()  # callgrind --zero-before: counting starts here
    call()
    os.getpgrp()  # callgrind --dump-before: and ends here
    gc.enable()


def instructions(name: str, records: int) -> int:
    command = [sys.executable, __file__, "--run", name, "--records", str(records)]
    return callgrind.instructions(command, marked=True)


def wanted(name: str, only: str | None) -> bool:
    """A workload ``--only`` keeps (the JSON rows, the baselines, always)."""
    return only is None or name.startswith("json") or any(p in name for p in only.split(","))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--callgrind", action="store_true")
    parser.add_argument(
        "--only", help="comma-separated parts of workload names: run only those (and the JSON rows)"
    )
    parser.add_argument("--run", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        measured(args.run, args.records)
        return
    if args.callgrind:
        n = max(args.records // 4, 500)
        figures = {
            name: (instructions(name, 3 * n) - instructions(name, n)) / (2 * n)
            for name in workloads(10)
            if wanted(name, args.only)
        }
        unit, shown = "instructions/record", {k: f"{v:,.0f}" for k, v in figures.items()}
    else:
        figures = cpu_per_record(args.records, args.repeat)
        unit, shown = "µs CPU/record", {k: f"{v * 1e6:.2f}" for k, v in figures.items()}
    print(f"| workload | {unit} | throughput vs the JSON route's same step |")
    print("|---|---:|---:|")
    for name, value in figures.items():
        base = figures["json route: plan the batch" if "plan" in name else "json route: verify"]
        print(f"| {name} | {shown[name]} | {base / value:.2f}x |")


if __name__ == "__main__":
    main()
