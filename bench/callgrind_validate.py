"""Instructions per record of validate_payloads (native core and Python path) and of
orjson.loads alone, counted by valgrind's callgrind: repeatable on a busy machine.

Run: .venv/bin/python bench/callgrind_validate.py [--bad 0.01 0.10] [--variants ...]
[--workload tick|rules|book]

Each figure is (instructions for 30,000 records - instructions for 10,000) / 20,000, so
start-up, imports and building the payloads cancel: every run builds the same 30,000
payloads and only how many of them are processed differs. Workloads (bench/workloads.py):
the tick contract as shipped on bench_validate's ticks (the default), the ticks under
rules with or/in/when (``rules``), order-book snapshots with nested levels (``book``).
Variants:

* orjson: ``orjson.loads`` of each payload;
* native: ``validate_payloads`` through the Rust verdict core (the default);
* python: ``validate_payloads`` with the core off (``native=False``: the msgspec fast path
  and the Python rules, as before the core);
* cli: ``stream-validator validate`` on the payloads as a JSON-lines file (``validate_jsonl``
  in memory, the contract's per-symbol state kept, valid lines and DLQ entries written;
  the issue's target: >= 0.8x ``validate_payloads``).

Needs valgrind on PATH. Prints one line per variant and bad fraction, then the ratios
to orjson.loads (the issue's targets: >= 3.0x at 1 % bad, >= 1.5x at 10 % bad).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import callgrind

SMALL, LARGE = 10_000, 30_000
VARIANTS = ("orjson", "native", "python", "cli")


def child(workload: str, variant: str, bad: float, n: int) -> None:
    """Build LARGE payloads, then process the first ``n`` with ``variant``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import orjson
    from workloads import WORKLOADS

    from stream_validator import DataSchemaContractVerifier, load_contract

    contract, make = WORKLOADS[workload]
    rows = make(LARGE, bad)[:n]
    if variant == "orjson":
        loads = orjson.loads
        for raw in rows:
            try:  # noqa: SIM105 (suppress() would add a context manager to each count)
                loads(raw)
            except orjson.JSONDecodeError:
                pass
        return
    if variant == "cli":
        import io

        from stream_validator.gcpolicy import collector_tuned
        from stream_validator.offline.runner import validate_jsonl

        text = b"\n".join(rows) + b"\n"
        verifier = DataSchemaContractVerifier(load_contract(contract))
        out, dlq = io.BytesIO(), io.BytesIO()
        with collector_tuned():  # as the command runs it
            summary = validate_jsonl(verifier, io.BytesIO(text), valid_out=out, dlq_out=dlq)
        assert summary.lines == n
        return
    verifier = DataSchemaContractVerifier(load_contract(contract), native=variant == "native")
    if variant == "native":
        assert verifier._rust is not None, f"the core did not plan {contract.name}"
    report = verifier.validate_payloads(rows)
    assert report.total_records == n


def instructions(workload: str, variant: str, bad: float, n: int) -> int:
    return callgrind.instructions(
        [sys.executable, __file__, "--child", workload, variant, str(bad), str(n)]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bad", type=float, nargs="+", default=[0.01, 0.10])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--workload", default="tick", choices=("tick", "rules", "book"))
    parser.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        workload, variant, bad, n = args.child
        child(workload, variant, float(bad), int(n))
        return
    for bad in args.bad:
        per: dict[str, float] = {}
        for variant in args.variants:
            small = instructions(args.workload, variant, bad, SMALL)
            large = instructions(args.workload, variant, bad, LARGE)
            per[variant] = (large - small) / (LARGE - SMALL)
            print(
                f"bad {bad:.0%}  {variant:7s} {per[variant]:9,.0f} instructions/record", flush=True
            )
        if "orjson" in per:
            for variant, cost in per.items():
                if variant != "orjson":
                    print(f"bad {bad:.0%}  {variant:7s} {per['orjson'] / cost:.2f}x orjson.loads")
        if "cli" in per and "native" in per:
            print(f"bad {bad:.0%}  cli     {per['native'] / per['cli']:.2f}x validate_payloads")


if __name__ == "__main__":
    main()
