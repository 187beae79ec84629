"""One source for the version: pyproject.toml's [project] version."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import stream_validator

ROOT = Path(__file__).resolve().parents[2]


def test_the_package_version_is_pyprojects() -> None:
    """stream_validator.__version__ is the version pyproject.toml declares."""
    with (ROOT / "pyproject.toml").open("rb") as handle:
        declared = tomllib.load(handle)["project"]["version"]
    assert stream_validator.__version__ == declared


def test_the_version_is_not_written_in_the_package() -> None:
    """__init__.py reads the version from the installed metadata, never a literal copy."""
    source = (ROOT / "stream_validator" / "__init__.py").read_text(encoding="utf-8")
    assert 'metadata.version("stream-validator")' in source
    assert f'"{stream_validator.__version__}"' not in source


def test_the_image_builds_with_pyprojects_version_by_default() -> None:
    """The Dockerfile's default VERSION build argument (its OCI version label) is not a
    second version that could drift."""
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    (default,) = re.findall(r"^ARG VERSION=(\S+)$", dockerfile, re.MULTILINE)
    assert default == stream_validator.__version__
