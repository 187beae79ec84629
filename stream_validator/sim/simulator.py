"""The Simulator: market + record builder + drift schedule -> Kafka-ready messages. PURE.

The caller owns the clock: each ``next`` call says how many seconds into the run the
message is produced, which sets the record's event time and opens or closes time windows.
Two RNGs seeded from one seed keep the market path identical with and without drift.
A scenario that does not apply to the entity leaves its messages clean. Per symbol, the
Simulator keeps what the stateful scenarios remember (``integrity.SymbolMemory``): after a
sequence_gap the symbol's later records, clean ones too, carry the shifted numbering.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Final, NamedTuple

from stream_validator.codec import encode_json
from stream_validator.sim.drift import SCENARIOS, TARGETS
from stream_validator.sim.integrity import SymbolMemory, carry
from stream_validator.sim.market import Market
from stream_validator.sim.records import Entity, builder_for
from stream_validator.sim.schedule import Schedule

#: The header naming what a message carries: "clean" or the drift scenario's name.
SCENARIO_HEADER: Final = "sv-sim-scenario"
CLEAN: Final = "clean"
#: Event times start here unless the caller says otherwise (a Monday's US open).
DEFAULT_START: Final = datetime(2026, 1, 5, 14, 30, tzinfo=UTC)


class SimMessage(NamedTuple):
    """One message to produce: key (the symbol), value (None: tombstone), headers."""

    key: bytes
    value: bytes | None
    headers: list[tuple[str, bytes]]

    @property
    def scenario(self) -> str:
        """The scenario named in the ``sv-sim-scenario`` header."""
        return dict(self.headers)[SCENARIO_HEADER].decode()


class Simulator:
    """Generates messages of one entity for a symbol universe, deterministic given a seed."""

    __slots__ = (
        "_applicable",
        "_builder",
        "_drift_rng",
        "_market",
        "_memory",
        "_start_us",
        "_targets",
        "count",
        "schedule",
    )

    def __init__(
        self,
        entity: Entity | str = Entity.TICK,
        *,
        symbols: int = 10,
        seed: int | None = None,
        schedule: Schedule | None = None,
        start: datetime = DEFAULT_START,
    ) -> None:
        entity = Entity(entity)
        if start.tzinfo is None:
            raise ValueError("start must be timezone-aware")
        root = random.Random(seed)
        market_rng = random.Random(root.getrandbits(64))
        self._drift_rng = random.Random(root.getrandbits(64))
        self._start_us = _epoch_us(start)
        self._market = Market(symbols, market_rng)
        self._builder = builder_for(entity, market_rng, self._start_us)
        self._targets = TARGETS[entity]
        self._applicable = frozenset(n for n, s in SCENARIOS.items() if entity in s.entities)
        self._memory: dict[str, SymbolMemory] = {}
        self.schedule = schedule or Schedule()
        self.count = 0

    def next(self, elapsed: float) -> SimMessage:
        """The next message, produced ``elapsed`` seconds after the start of the run."""
        instrument = self._market.step()
        # Event times rise strictly per symbol even if two messages share a clock reading.
        ts_us = max(self._start_us + round(elapsed * 1_000_000), instrument.last_ts_us + 1)
        instrument.last_ts_us = ts_us
        record = self._builder.build(instrument, ts_us)
        scenario = self.schedule.pick(self.count, elapsed, self._drift_rng)
        self.count += 1
        if scenario not in self._applicable:
            scenario = CLEAN
        # A symbol has a memory once a scenario hit it; until then carrying it is a no-op.
        memory = self._memory.get(instrument.symbol)
        if memory is not None:
            carry(record, self._targets, memory, scenario)
        if scenario == CLEAN:
            value: bytes | None = encode_json(record)
        else:
            if memory is None:
                memory = self._memory[instrument.symbol] = SymbolMemory()
            apply = SCENARIOS[scenario].apply
            value = apply(record, self._targets, self._drift_rng, memory)
        headers = [(SCENARIO_HEADER, scenario.encode())]
        return SimMessage(instrument.symbol.encode(), value, headers)

    def take(self, count: int, *, interval: float = 0.001) -> Iterator[SimMessage]:
        """The next ``count`` messages on a simulated clock ``interval`` seconds apart."""
        first = self.count
        for i in range(first, first + count):
            yield self.next(i * interval)


def _epoch_us(moment: datetime) -> int:
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
