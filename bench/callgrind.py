"""Instructions counted by valgrind's callgrind, the way every callgrind bench here counts
them: one child process under ``valgrind --tool=callgrind``, its total (or the part between
two marker calls) read from the output file.

``PYTHONHASHSEED`` is fixed (0 unless the caller's environment sets it): with a random seed
every process lays out its dicts and sets differently, and the same work on the same
payloads counted about 5 % apart from one run to the next (orjson.loads alone 7,660 and
7,280 instructions a record), as much as a change being measured.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

#: Counting starts at the child's call of os.getppid() and the count is dumped at its call
#: of os.getpgrp() (``marked=True``): start-up and clean-up left out.
MARKERS = ("--zero-before=getppid", "--dump-before=getpgrp")


def instructions(
    command: Sequence[str], *, env: Mapping[str, str] | None = None, marked: bool = False
) -> int:
    """The instructions ``command`` (a Python child: ``sys.executable, script, ...``)
    executed, every thread counted; with ``marked``, only between its two marker calls."""
    return run(command, env=env, marked=marked)[0]


def run(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    marked: bool = False,
    keep: Path | None = None,
) -> tuple[int, str]:
    """``instructions`` and the child's standard output; ``keep``: callgrind's output file
    is written there (for callgrind_annotate) instead of a temporary directory."""
    child_env = dict(os.environ if env is None else env)
    child_env.setdefault("PYTHONHASHSEED", "0")
    with tempfile.TemporaryDirectory() as tmp:
        out = keep or Path(tmp) / "callgrind.out"
        valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        if marked:
            valgrind += MARKERS
        done = subprocess.run(
            [*valgrind, *command], capture_output=True, text=True, check=True, env=child_env
        )
        text = (out.with_name(out.name + ".1") if marked else out).read_text()
    found = re.search(r"^(?:summary|totals): (\d+)", text, re.MULTILINE)
    if found is None:
        raise RuntimeError(f"no instruction total in callgrind's output of {command!r}")
    return int(found.group(1)), done.stdout
