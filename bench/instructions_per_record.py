"""Instructions per record of ``validate_payloads``, counted by valgrind callgrind.

Run: .venv/bin/python bench/instructions_per_record.py [--contract FILE] [--tree DIR]
[--pads 0,1,2,3]

The payloads are bench_validate's ticks (``make_payloads(60000, bad_fraction)``, 1 % and
10 % bad). Each figure is (instructions for 30,000 records - for 10,000) / 20,000, each
count taken by callgrind between two marker calls around one ``validate_payloads`` call
on a fresh verifier (``--zero-before=getppid --dump-before=getpgrp``), with the cyclic
collector frozen and off around it, so start-up cancels and no collection lands in one
run but not the other. The heap layout at the start still moves a figure by up to about
40 instructions (where the allocator finds room for a list that grows, how many pools a
free empties): each figure is taken once per ``--pad`` (objects left alive before the
measured call, a different layout each) and the mean is printed with the spread.

``--tree``: validate with the stream_validator package of another checkout (for example
``git archive COMMIT | tar -x -C DIR``), with this venv, the same payloads and the same
contract, so two commits compare fairly.
"""

from __future__ import annotations

import argparse
import gc
import os
import pickle
import statistics
import sys
import tempfile
from pathlib import Path

import callgrind

HERE = Path(__file__).resolve().parent
TICK = HERE.parent / "config" / "contracts" / "tick.yaml"
SIZES = (10_000, 30_000)


def measured_run(pickled: Path, contract: Path, records: int, pad: int) -> None:
    """One validate_payloads call between the markers (run under callgrind)."""
    from stream_validator import DataSchemaContractVerifier, load_contract

    payloads = pickle.loads(pickled.read_bytes())[:records]
    keep = (  # a different heap layout per pad, kept alive through the measured call
        [object() for _ in range(pad * 97)],
        [b"x" * (pad * 37 % 4000 + 1) for _ in range(pad * 11)],
        bytearray(pad * 100_003),
    )
    verifier = DataSchemaContractVerifier(load_contract(contract))
    gc.collect()
    gc.freeze()
    gc.disable()
    os.getppid()  # callgrind --zero-before: counting starts here
    verifier.validate_payloads(payloads)
    os.getpgrp()  # callgrind --dump-before: and ends here
    gc.enable()
    del keep


def instructions(tree: Path | None, args: list[str]) -> int:
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    return callgrind.instructions([sys.executable, __file__, "--run", *args], env=env, marked=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--contract", type=Path, default=TICK)
    parser.add_argument("--tree", type=Path, help="a checkout whose package is validated")
    parser.add_argument("--pads", default="0,1,2,3", help="heap layouts, comma-separated")
    parser.add_argument("--run", action="store_true", help="one measured call (internal)")
    parser.add_argument("--payloads", type=Path)
    parser.add_argument("--records", type=int)
    parser.add_argument("--pad", type=int, default=0)
    args = parser.parse_args()
    if args.run:
        measured_run(args.payloads, args.contract, args.records, args.pad)
        return
    sys.path.insert(0, str(HERE))
    from bench_validate import make_payloads

    pads = [int(p) for p in args.pads.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        print("| bad | instructions a record (mean) | spread over pads | per pad |")
        print("|---:|---:|---:|---|")
        for fraction in (0.01, 0.10):
            pickled = Path(tmp) / f"payloads-{fraction}.pkl"
            pickled.write_bytes(pickle.dumps(make_payloads(60_000, fraction)[0]))
            figures = []
            for pad in pads:
                counts = [
                    instructions(
                        args.tree,
                        [
                            f"--payloads={pickled}",
                            f"--contract={args.contract}",
                            f"--records={n}",
                            f"--pad={pad}",
                        ],
                    )
                    for n in SIZES
                ]
                figures.append((counts[1] - counts[0]) / (SIZES[1] - SIZES[0]))
            print(
                f"| {fraction:.0%} | {statistics.mean(figures):,.1f}"
                f" | {max(figures) - min(figures):,.1f}"
                f" | {', '.join(f'{f:,.1f}' for f in figures)} |"
            )


if __name__ == "__main__":
    main()
