"""The site builds with --strict, and its API reference shows the package's __all__."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import stream_validator
from tests.docs.pages import ROOT

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built as scripts/test.sh builds it, into a temporary directory."""
    out = tmp_path_factory.mktemp("site")
    mkdocs = Path(sys.executable).parent / "mkdocs"
    subprocess.run(
        [str(mkdocs), "build", "--strict", "--quiet", "--site-dir", str(out)],
        cwd=ROOT,
        check=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    return out


def test_the_api_reference_documents_every_public_name(site: Path) -> None:
    """Each name of stream_validator.__all__ has its entry on the Python API page."""
    html = (site / "api" / "index.html").read_text(encoding="utf-8")
    documented = set(re.findall(r'id="stream_validator\.(\w+)"', html))
    assert set(stream_validator.__all__) - {"__version__"} <= documented


def test_the_generated_tables_reach_the_html(site: Path) -> None:
    """The hook ran: the built pages hold the generated tables, not their markers."""
    endpoints = (site / "service" / "endpoints" / "index.html").read_text(encoding="utf-8")
    assert "DEADLINE" in endpoints and "exit-codes:" not in endpoints
    metrics = (site / "operations" / "metrics" / "index.html").read_text(encoding="utf-8")
    assert "counter" in metrics and "<!-- metrics -->" not in metrics


def test_the_build_writes_nothing_into_the_repository(site: Path) -> None:
    """No site/ directory appears in the checkout (it is built elsewhere)."""
    assert site.exists() and not (ROOT / "site").exists()
