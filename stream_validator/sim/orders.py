"""Order-feed drift scenarios: string values a contract's ``allowed`` and lengths refuse.

PURE, like ``drift`` (which registers them and documents what the verifier reports). They
apply to the order entity only: its ``side`` is an enum (``allowed: [buy, sell]``) and its
``order_id`` must not be empty (``min_length: 1``); before contracts could say so, each of
these records passed as valid.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any, Final

from stream_validator.codec import encode_json
from stream_validator.sim.integrity import SymbolMemory

if TYPE_CHECKING:
    from stream_validator.sim.drift import DriftTargets

Record = dict[str, Any]

#: Sides a broken feed sends that are not an order side of the contract.
UNKNOWN_SIDES: Final = ("hold", "sell_short", "cross")


def _field(name: str | None) -> str:
    assert name is not None, "only the order entity gets the order scenarios"
    return name


def unknown_side(
    record: Record, targets: DriftTargets, rng: random.Random, memory: SymbolMemory
) -> bytes:
    """The side is a value outside the enum ("hold", "sell_short", "cross": drawn)."""
    record[_field(targets.side)] = rng.choice(UNKNOWN_SIDES)
    return encode_json(record)


def upper_case_side(
    record: Record, targets: DriftTargets, rng: random.Random, memory: SymbolMemory
) -> bytes:
    """The side in capitals ("BUY", "SELL"): allowed values compare exactly."""
    name = _field(targets.side)
    record[name] = record[name].upper()
    return encode_json(record)


def empty_order_id(
    record: Record, targets: DriftTargets, rng: random.Random, memory: SymbolMemory
) -> bytes:
    """The order id is the empty string: the order cannot be amended, cancelled or matched."""
    record[_field(targets.order_id)] = ""
    return encode_json(record)
