"""CHANGELOG.md keeps the Keep a Changelog form."""

from __future__ import annotations

import re

from tests.docs.pages import ROOT

CHANGELOG = ROOT / "CHANGELOG.md"
KINDS = {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}


def headings() -> list[tuple[int, str]]:
    text = CHANGELOG.read_text(encoding="utf-8")
    return [(len(m.group(1)), m.group(2)) for m in re.finditer(r"^(#+) (.+)$", text, re.M)]


def test_the_changelog_opens_with_an_unreleased_section() -> None:
    """One title, then [Unreleased] first among the releases."""
    levels = headings()
    assert levels[0] == (1, "Changelog")
    releases = [title for level, title in levels if level == 2]
    assert releases[0] == "[Unreleased]"
    for title in releases[1:]:
        assert re.fullmatch(r"\[\d+\.\d+\.\d+\] - \d{4}-\d{2}-\d{2}", title), title


def test_the_changelog_groups_changes_by_kind() -> None:
    """Every third-level heading is one of Keep a Changelog's kinds, once per release."""
    seen: list[str] = []
    for level, title in headings()[1:]:
        if level == 2:
            seen = []
        else:
            assert level == 3 and title in KINDS and title not in seen, title
            seen.append(title)
