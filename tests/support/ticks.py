"""Shared contracts for the unit tests."""

from __future__ import annotations

import pytest

from stream_validator import DataSchemaContractVerifier, FieldSpec, SchemaContract


def tick_contract(**overrides: object) -> SchemaContract:
    """The seed spec's TickContract: price float > 0, volume int >= 0, symbol str."""
    fields = [
        FieldSpec("price", float, min_value=1e-9),
        FieldSpec("volume", int, min_value=0),
        FieldSpec("symbol", str),
    ]
    options: dict[str, object] = {"name": "tick", "fields": fields}
    options.update(overrides)
    return SchemaContract(**options)  # type: ignore[arg-type]


@pytest.fixture
def tick_verifier() -> DataSchemaContractVerifier:
    """A verifier for the seed spec's TickContract."""
    return DataSchemaContractVerifier(tick_contract())


def good_tick(i: int = 0) -> dict[str, object]:
    """A tick that satisfies tick_contract()."""
    return {"price": 100.0 + i, "volume": i, "symbol": f"SYM{i % 7}"}
