"""The pure core touches no clock, OS, socket or thread (import-linter cannot see the stdlib)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import stream_validator

PACKAGE = Path(stream_validator.__file__).parent
IMPURE = {"time", "os", "socket", "threading", "signal", "http", "subprocess"}
#: A module says it is pure with the word PURE (capitals) in its docstring; a package says
#: it, for every module in it, by opening its ``__init__``'s docstring with PURE.
MARK = re.compile(r"\bPURE\b")
#: Packages that are pure whatever their docstrings say; sim/ but its producer, lifecycle/
#: but the topic sampler (Kafka) and the line reader (files).
PURE_PACKAGES = ("verify", "state", "contracts", "dlq", "sim", "lifecycle")
NOT_PURE = {
    PACKAGE / "sim" / "producer.py",
    PACKAGE / "lifecycle" / "topic.py",
    PACKAGE / "lifecycle" / "lines.py",
}


def _docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text())) or ""


def _says_pure(path: Path) -> bool:
    """The module's docstring, or that of a package it is in, says PURE."""
    if MARK.search(_docstring(path)):
        return True
    return any(
        _docstring(init).startswith("PURE")
        for parent in path.parents
        if parent != PACKAGE and PACKAGE in parent.parents
        for init in [parent / "__init__.py"]
        if init.exists()
    )


def _pure_modules() -> list[Path]:
    listed = {p for d in PURE_PACKAGES for p in (PACKAGE / d).rglob("*.py")}
    marked = {p for p in PACKAGE.rglob("*.py") if _says_pure(p)}
    return sorted((listed | marked) - NOT_PURE)


PURE = _pure_modules()


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    return names


@pytest.mark.parametrize("path", PURE, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_pure_modules_import_no_io(path: Path) -> None:
    """Every module whose docstring (or whose package's) says PURE, and verify/, state/,
    contracts/, dlq/, the sim generators and the pure lifecycle modules, import no clock or
    OS modules."""
    assert not {m for m in _imports(path) if m.split(".")[0] in IMPURE}


def test_the_check_sees_an_impure_import(tmp_path: Path) -> None:
    """The check above can fail: a module importing time is flagged."""
    probe = tmp_path / "probe.py"
    probe.write_text("import time\nfrom os import path\n")
    assert {m.split(".")[0] for m in _imports(probe)} & IMPURE == {"time", "os"}


def test_the_pure_modules_are_found_by_their_docstrings() -> None:
    """Modules marked PURE outside the listed packages are checked too: the service's
    planner, its null window, the breaker's state machine, the replay planner, the offline
    summary and file state."""
    found = {str(p.relative_to(PACKAGE)) for p in PURE}
    assert {
        "service/plan/planner.py",
        "service/plan/nullwindow.py",
        "service/breaker/machine.py",
        "service/telemetry/lagstats.py",
        "replay/planner.py",
        "offline/summary.py",
        "offline/filestate.py",
    } <= found
    assert "sim/producer.py" not in found


def test_a_package_marked_pure_covers_its_modules() -> None:
    """A module is found pure through its package's ``__init__`` docstring."""
    assert _says_pure(PACKAGE / "service" / "plan" / "routestate.py")
    assert not _says_pure(PACKAGE / "service" / "loop.py")
