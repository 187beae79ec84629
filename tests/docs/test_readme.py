"""README.md stays a short front page whose links, commands and examples hold."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import yaml

from stream_validator.config.settings import config_from_mapping
from tests.docs.pages import ROOT

README = ROOT / "README.md"
MAX_LINES = 200
_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def readme() -> str:
    return README.read_text(encoding="utf-8")


def fenced(language: str) -> list[str]:
    """The README's code blocks in ``language``."""
    return re.findall(rf"```{language}\n(.*?)```", readme(), re.DOTALL)


def test_the_readme_has_at_most_200_lines() -> None:
    """The README is a front page; everything else lives in docs/."""
    assert len(readme().splitlines()) <= MAX_LINES


def test_every_relative_link_of_the_readme_resolves() -> None:
    """Each link that is not a URL names a file of the repository (and a heading, if any)."""
    links = [link for link in _LINK.findall(readme()) if not re.match(r"[a-z]+://", link)]
    assert links, "the README links into the docs"
    for link in links:
        target, _, anchor = link.partition("#")
        path = (README.parent / target).resolve()
        assert path.is_file(), link
        if anchor:
            headings = re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), re.MULTILINE)
            slugs = {re.sub(r"[^a-z0-9 -]", "", h.lower()).replace(" ", "-") for h in headings}
            assert anchor in slugs, link


def test_the_readme_points_into_every_docs_section() -> None:
    """Each top-level page and folder of docs/ is linked from the README."""
    linked = {
        Path(link.partition("#")[0]).parts[1]
        for link in _LINK.findall(readme())
        if link.startswith("docs/")
    }
    wanted = {p.name for p in (ROOT / "docs").iterdir() if not p.name.startswith("_")}
    assert wanted - {"index.md"} <= linked


def test_the_test_command_is_the_one_ci_runs() -> None:
    """The README's test command is exactly what .ci/run runs."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^bash scripts/test\.sh\b", ci, re.MULTILINE)
    (commands,) = [block for block in fenced("sh") if "scripts/test.sh" in block]
    assert re.search(r"^bash scripts/test\.sh\s+#", commands, re.MULTILINE)
    assert re.search(r"^bash scripts/demo\.sh\s+#", commands, re.MULTILINE)


def test_the_python_example_runs_and_prints_what_the_readme_says() -> None:
    """The ten-line API example runs; it reports the crossed book, the empty symbol with the
    missing fields, and the tombstone."""
    (example,) = fenced("python")
    assert len(example.splitlines()) <= 12
    out = subprocess.run(
        [sys.executable, "-c", example], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert [line.split()[0] for line in out] == ["0", "1", "2"]
    assert "crossed_book" in out[0]
    assert "symbol" in out[1] and out[1].count("missing required field") == 3
    assert "tombstone" in out[2]


def test_the_config_example_loads() -> None:
    """The ten-line config example is a valid service config (its contract path read from
    config/, where the example's contracts/ folder is)."""
    (example,) = fenced("yaml")
    assert len(example.splitlines()) <= 12
    config = config_from_mapping(yaml.safe_load(example), base_dir=ROOT / "config")
    (route,) = config.routes
    assert route.circuit_breaker is not None
    assert str(route.circuit_breaker.action) == "pause"
