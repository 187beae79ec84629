"""The public API: complete and listed in __all__ (import rules: [tool.importlinter])."""

from __future__ import annotations

from pathlib import Path

import stream_validator

PACKAGE = Path(stream_validator.__file__).parent


def test_public_api_names() -> None:
    """The names the issues pin down are importable from the package root and in __all__."""
    for name in (
        "FieldSpec",
        "SchemaContract",
        "DataSchemaContractVerifier",
        "QuarantinedRecord",
        "SchemaContractValidationReport",
        "Violation",
        "RuleSpec",
        "RuleAction",
    ):
        assert name in stream_validator.__all__
        assert hasattr(stream_validator, name)


def test_all_is_complete() -> None:
    """Every public name imported into the package root is listed in __all__, and vice versa."""
    public = {n for n in vars(stream_validator) if not n.startswith("_")}
    submodules = {p.stem for p in PACKAGE.iterdir()} | {p.name for p in PACKAGE.iterdir()}
    assert public - submodules == set(stream_validator.__all__) - {"__version__"}
