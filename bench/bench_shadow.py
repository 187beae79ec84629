"""The cost of a shadow contract on the service's hot path, in instructions per record.

Run: .venv/bin/python bench/bench_shadow.py [--records 10000] [--batches 5,500]

The scripted service loop of bench/profile_batches.py (valid ticks arriving BATCH at a time
on the fake broker, metrics fed, callgrind counting the loop only) runs once per route set-up:

- ``none``: no ``shadow_contract`` (the loop builds no shadow machinery);
- ``equal``: a shadow whose content equals the live contract (a promoted candidate): the
  evaluator compares the contracts once and judges nothing;
- ``candidate``: the live contract with another version and one more bound: every record
  is judged twice, and none is judged differently (the common case of a candidate);
- ``renamed``: ask_sz renamed to ask_volume, so every record differs (newly quarantined):
  the worst case, each record counted, tallied and kept as an example.

It prints Ir per record for each, and the extra Ir per record against ``none``. Instruction
counts are stable from run to run, unlike CPU time on a shared machine.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from profile_batches import callgrind

HERE = Path(__file__).resolve().parent
TICK = (HERE.parent / "config" / "contracts" / "tick.yaml").read_text()
VARIANTS = {
    "none": None,
    "equal": TICK,
    "candidate": TICK.replace('version: "1"', 'version: "1-candidate"').replace(
        "max_value: 1000000000", "max_value: 999999999"
    ),
    "renamed": TICK.replace("name: ask_sz", "name: ask_volume"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--records", type=int, default=10_000)
    parser.add_argument("--batches", default="5,500", help="batch sizes, comma-separated")
    args = parser.parse_args()
    sizes = [int(s) for s in args.batches.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        files: dict[str, str | None] = {}
        for name, text in VARIANTS.items():
            if text is None:
                files[name] = None
                continue
            path = Path(tmp) / f"{name}.yaml"
            path.write_text(text)
            files[name] = str(path)
        print(f"\n{args.records:,} valid ticks through the service loop on the fake broker\n")
        print("| records per batch | shadow | Ir per record | extra Ir per record |")
        print("|---:|---|---:|---:|")
        for size in sizes:
            base = 0.0
            for name, path in files.items():
                ir, _, _ = callgrind(args.records, size, Path(tmp), path)
                per_record = ir / args.records
                base = base or per_record
                extra = "" if name == "none" else f"{per_record - base:+,.0f}"
                print(f"| {size} | {name} | {per_record:,.0f} | {extra} |", flush=True)


if __name__ == "__main__":
    main()
