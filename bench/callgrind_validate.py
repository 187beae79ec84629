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
  the issue's target: >= 0.8x ``validate_payloads``). Its in-memory input and outputs are
  copied byte by byte in user space (the input's reads, the outputs' writes and BytesIO's
  reallocations, ~600 instructions a line, some of it varying with the heap's layout), as
  is the ``join`` that builds the input;
* clifile: the same on files, as the command runs: the input written by the parent before
  counting, read with ``offline.open_input``, the valid lines and DLQ entries written to
  files (the kernel's copies are not counted: callgrind counts user space only).

Needs valgrind on PATH. Prints one line per variant and bad fraction, then the ratios
to orjson.loads (the issue's targets: >= 3.0x at 1 % bad, >= 1.5x at 10 % bad).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import callgrind

SMALL, LARGE = 10_000, 30_000
VARIANTS = ("orjson", "native", "python", "cli", "clifile")


def child(workload: str, variant: str, bad: float, n: int, path: str | None = None) -> None:
    """Build LARGE payloads, then process the first ``n`` with ``variant`` (``clifile``:
    the file at ``path``, its lines those payloads)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    if variant == "clifile":
        assert path is not None
        from workloads import WORKLOADS

        from stream_validator import DataSchemaContractVerifier, load_contract
        from stream_validator.gcpolicy import collector_tuned
        from stream_validator.offline.runner import open_input, validate_jsonl

        verifier = DataSchemaContractVerifier(load_contract(WORKLOADS[workload][0]))
        with (
            open_input(path) as source,
            Path(path + ".valid").open("wb") as out,
            Path(path + ".dlq").open("wb") as dlq,
            collector_tuned(),
        ):
            summary = validate_jsonl(verifier, source, valid_out=out, dlq_out=dlq)
        assert summary.lines == n
        return
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
    if variant != "clifile":
        return callgrind.instructions(
            [sys.executable, __file__, "--child", workload, variant, str(bad), str(n)]
        )
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from workloads import WORKLOADS

    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "input.jsonl")
        rows = WORKLOADS[workload][1](LARGE, bad)[:n]
        Path(path).write_bytes(b"".join(row + b"\n" for row in rows))
        return callgrind.instructions(
            [sys.executable, __file__, "--child", workload, variant, str(bad), str(n), path]
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bad", type=float, nargs="+", default=[0.01, 0.10])
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--workload", default="tick", choices=("tick", "rules", "book"))
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        workload, variant, bad, n, *path = args.child
        child(workload, variant, float(bad), int(n), *path)
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
        for cli in ("cli", "clifile"):
            if cli in per and "native" in per:
                ratio = per["native"] / per[cli]
                print(f"bad {bad:.0%}  {cli:7s} {ratio:.2f}x validate_payloads")


if __name__ == "__main__":
    main()
