"""The docs site as the tests read it: its pages, its table hook and Markdown tables."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
HOOK = DOCS / "_hooks" / "tables.py"


def tables_hook() -> ModuleType:
    """docs/_hooks/tables.py, the module mkdocs loads from ``hooks:``."""
    name = "stream_validator_docs_tables"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HOOK)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def pages() -> dict[str, str]:
    """Every page of the site (not the hooks, not other helpers' incoming notes), by path."""
    return {
        str(path.relative_to(DOCS)): path.read_text(encoding="utf-8")
        for path in sorted(DOCS.rglob("*.md"))
        if not path.relative_to(DOCS).parts[0].startswith("_")
    }


def page(relative: str) -> str:
    return (DOCS / relative).read_text(encoding="utf-8")


def table_rows(markdown: str, header: str) -> list[list[str]]:
    """The rows of the Markdown table whose header line starts with ``header``, as cells."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows


def code(cell: str) -> str:
    """The text of a cell written as one code span."""
    match = re.fullmatch(r"`([^`]*)`", cell)
    assert match, cell
    return match.group(1)
