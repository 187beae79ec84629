"""Instructions per record of the broker peers (pass-through, the service), by callgrind.

Run: KAFKA_BOOTSTRAP_SERVERS=... .venv/bin/python bench/callgrind_peers.py
     [--peers passthrough,passthrough-reported,service] [--sizes 5000,25000]
     [--tree DIR ...] [--keep DIR]

Wall-clock CPU time means little on a shared machine; instructions do not move with the
load. Each peer (bench/peers.py, the same processes bench_peers.py times) consumes the
first N ticks (~1 % bad) of one pre-loaded 4-partition topic with a fresh group, under
valgrind callgrind, every thread counted (librdkafka's included). The figure is
(Ir for the larger N - Ir for the smaller N) / the difference in records handled (a peer
stops between batches, a little past N, and says how far it went): start-up, imports and the
group join cancel. ``--tree DIR``: also run the service from the checkout DIR (its own
bench/peers.py and package, this venv), e.g. ``git archive COMMIT | tar -x -C DIR``.

Under valgrind a peer runs ~50 times slower, so its batches are as full as at full speed;
time-driven work (librdkafka's timers, the service's 50 ms status poll) is counted a little
more than at full speed, for every peer alike.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from pathlib import Path

import callgrind
from harness import HERE, create_topics, fill, topic_safe


def instructions(
    peer: str, bootstrap: str, source: str, records: int, tree: Path | None, keep: Path | None
) -> tuple[int, int]:
    """Run one peer under callgrind over ``records`` records; its total instructions and the
    records it handled (``keep``: callgrind's output file goes there)."""
    suffix = f"{topic_safe(peer)}-{records}-{time.time_ns()}"
    clean, dlq, group = f"cg-clean-{suffix}", f"cg-dlq-{suffix}", f"cg-{suffix}"
    create_topics(bootstrap, [clean, dlq], 4, True)
    env = dict(os.environ)
    script = HERE / "peers.py"
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
        script = tree / "bench" / "peers.py"
    env.pop("BENCH_CPU_MARK", None)
    command = [sys.executable, str(script), peer, bootstrap, source, clean, dlq, group]
    count, stdout = callgrind.run([*command, str(records)], env=env, keep=keep)
    # A peer stops between batches, past ``records``: the records it handled in all (a
    # peer that does not say so: ``records``).
    handled = re.findall(r"^(\d+) records handled in all$", stdout, re.M)
    return count, int(handled[-1]) if handled else records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--peers", default="passthrough,service")
    parser.add_argument("--sizes", default="5000,25000")
    parser.add_argument(
        "--tree", type=Path, action="append", default=[], help="also the service from DIR"
    )
    parser.add_argument(
        "--keep", type=Path, help="keep the callgrind files in this directory (callgrind_annotate)"
    )
    args = parser.parse_args()
    bootstrap = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
    small, large = (int(s) for s in args.sizes.split(","))
    from bench_validate import make_payloads

    source = f"cg-src-{time.time_ns()}"
    create_topics(bootstrap, [source], 4, False)
    fill(bootstrap, source, make_payloads(large, 0.01)[0])
    runs: list[tuple[str, Path | None]] = [(p, None) for p in args.peers.split(",")]
    runs += [("service", tree.resolve()) for tree in args.tree]
    rows = []
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    for index, (peer, tree) in enumerate(runs):
        name = peer if tree is None else f"{peer} from {tree}"
        print(f"==> {name}", file=sys.stderr, flush=True)
        counts = [
            instructions(
                peer,
                bootstrap,
                source,
                n,
                tree,
                args.keep / f"cg.{index}.{peer}.{n}" if args.keep is not None else None,
            )
            for n in (small, large)
        ]
        (ir_small, n_small), (ir_large, n_large) = counts
        rows.append((name, (ir_large - ir_small) / (n_large - n_small)))
    base = next((ir for name, ir in rows if name == "passthrough"), None)
    print(f"\nIr per record, ({large:,} - {small:,} records), every thread counted\n")
    print("| peer | Ir per record | vs pass-through |")
    print("|---|---:|---:|")
    for name, ir in rows:
        ratio = f"{ir / base:.2f}x" if base else "-"
        print(f"| {name} | {ir:,.0f} | {ratio} |")


if __name__ == "__main__":
    main()
