"""The market-data simulator's PURE core: realistic records plus scheduled vendor drift.

No Kafka, no clock, no files: ``stream_validator.cli.simulate`` (``stream-validator
simulate``) wraps it with a producer, pacing and signals. A seed fixes every record;
the caller passes the elapsed time of each message.

    >>> sim = Simulator("tick", symbols=5, seed=7, schedule=Schedule.parse(["garbage@n10+2"]))
    >>> [m.scenario for m in sim.take(12)][-3:]
    ['clean', 'garbage', 'garbage']

Modules: ``market`` (random-walk mid prices), ``records`` (clean tick / orderbook_snapshot /
ohlcv_bar / order records), ``drift`` (the named scenarios and what the verifier reports for
each), ``integrity`` (the market-data integrity scenarios and their per-symbol memory),
``orders`` (the order-feed scenarios: a side outside its enum, an empty order id),
``schedule`` (the ``NAME[@WINDOW][:FRACTION]`` spec grammar, documented there),
``simulator`` (ties them up).
"""

from stream_validator.errors import ScenarioSpecError
from stream_validator.sim.drift import SCENARIOS, TARGETS, DriftTargets, Scenario
from stream_validator.sim.records import Entity
from stream_validator.sim.schedule import ScenarioWindow, Schedule, parse_spec
from stream_validator.sim.simulator import (
    CLEAN,
    DEFAULT_START,
    SCENARIO_HEADER,
    SimMessage,
    Simulator,
)

__all__ = [
    "CLEAN",
    "DEFAULT_START",
    "SCENARIOS",
    "SCENARIO_HEADER",
    "TARGETS",
    "DriftTargets",
    "Entity",
    "Scenario",
    "ScenarioSpecError",
    "ScenarioWindow",
    "Schedule",
    "SimMessage",
    "Simulator",
    "parse_spec",
]
