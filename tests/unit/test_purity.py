"""The pure core touches no clock, OS, socket or thread (import-linter cannot see the stdlib)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import stream_validator

PACKAGE = Path(stream_validator.__file__).parent
IMPURE = {"time", "os", "socket", "threading", "signal", "http", "subprocess"}
PURE = sorted(
    [p for d in ("verify", "state", "contracts", "dlq") for p in (PACKAGE / d).glob("*.py")]
    + [p for p in (PACKAGE / "sim").glob("*.py") if p.name != "producer.py"]
    + [PACKAGE / "offline" / "summary.py", PACKAGE / "offline" / "filestate.py"]
)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    return names


@pytest.mark.parametrize("path", PURE, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_pure_modules_import_no_io(path: Path) -> None:
    """verify/, state/, contracts/, dlq/, the sim generators and the offline summary
    import no clock or OS modules."""
    assert not {m for m in _imports(path) if m.split(".")[0] in IMPURE}


def test_the_check_sees_an_impure_import(tmp_path: Path) -> None:
    """The check above can fail: a module importing time is flagged."""
    probe = tmp_path / "probe.py"
    probe.write_text("import time\nfrom os import path\n")
    assert {m.split(".")[0] for m in _imports(probe)} & IMPURE == {"time", "os"}
