"""The package's shape: public API complete, dependencies pointing one way."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import stream_validator

PACKAGE = Path(stream_validator.__file__).parent
PURE = ("verify", "contracts")
FORBIDDEN_IN_PURE = (
    "confluent_kafka",
    "prometheus_client",
    "stream_validator.kafka",
    "stream_validator.metrics",
    "stream_validator.config",
    "stream_validator.app",
)


def imports_of(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_public_api_names() -> None:
    """The names the issues pin down are importable from the package root and in __all__."""
    for name in (
        "FieldSpec",
        "SchemaContract",
        "DataSchemaContractVerifier",
        "QuarantinedRecord",
        "SchemaContractValidationReport",
        "Violation",
    ):
        assert name in stream_validator.__all__
        assert hasattr(stream_validator, name)


def test_all_is_complete() -> None:
    """Every public name imported into the package root is listed in __all__, and vice versa."""
    public = {n for n in vars(stream_validator) if not n.startswith("_")}
    submodules = {p.stem for p in PACKAGE.iterdir()} | {p.name for p in PACKAGE.iterdir()}
    assert public - submodules == set(stream_validator.__all__) - {"__version__"}


@pytest.mark.parametrize(
    "path",
    [p for p in modules() if p.relative_to(PACKAGE).parts[0] in PURE],
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_pure_core_imports_no_io_layers(path: Path) -> None:
    """verify/ and contracts/ never import Kafka, Prometheus, config or the app."""
    bad = {m for m in imports_of(path) if m.startswith(FORBIDDEN_IN_PURE)}
    assert not bad


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_kafka_only_in_kafka_package(path: Path) -> None:
    """Only stream_validator/kafka imports confluent_kafka; only metrics.py imports prometheus."""
    rel = path.relative_to(PACKAGE)
    mods = imports_of(path)
    if rel.parts[0] != "kafka":
        assert not any(m.startswith("confluent_kafka") for m in mods)
    if rel.name != "metrics.py":
        assert not any(m.startswith("prometheus_client") for m in mods)


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_json_only_through_codec(path: Path) -> None:
    """orjson/json are imported only by codec.py."""
    if path.relative_to(PACKAGE).name == "codec.py":
        return
    assert not {"orjson", "json"} & imports_of(path)
