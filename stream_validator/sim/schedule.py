"""Scenario specs: which drift to inject, when, and into what share of the records.

Grammar (one spec per ``--scenario``; no spaces)::

    SPEC     = NAME [ "@" WINDOW ] [ ":" FRACTION ]
    WINDOW   = START [ "+" LENGTH ]          one window
             | "every" PERIOD "+" LENGTH     a window of LENGTH at each multiple of PERIOD
    START, PERIOD, LENGTH =
               NUMBER UNIT                   time since the run started; UNIT is ms, s, m or h
             | "n" INTEGER                   message count (0-based message index); the "n"
                                             may be left off LENGTH in a count window
    FRACTION = NUMBER in (0, 1]              share of the window's messages that get the drift

Without ``@WINDOW`` the scenario runs for the whole run; without ``+LENGTH`` a window lasts
to the end of the run. Without ``:FRACTION`` a scenario hits all records of its window, except
null_bid_spike, which hits 30% of them (a realistic fast-market spike). Windows are half-open:
``n1000+100`` covers messages 1000 to 1099, ``10s+5s`` the time from 10 s up to 15 s.

Examples::

    garbage:0.01                  1% of all messages are garbage
    field_rename@10s+5s           every message from 10 s to 15 s after the start
    nan_prices@every30s+3s        3 s of NaN prices at 30 s, 60 s, 90 s, ...
    string_prices@10s+5s:0.5      half of the messages from 10 s to 15 s
    field_rename@n1000+100        messages 1000 to 1099 (deterministic: tests, benchmarks)
    tombstone@everyn500+5         messages 500-504, 1000-1004, ...

When windows overlap, a message gets at most one scenario: specs are tried in the order
given and the first whose window is open and whose fraction draw hits wins. Count windows
make a run reproducible given ``--seed``; time windows depend on the clock.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from stream_validator.errors import ScenarioSpecError
from stream_validator.sim.drift import SCENARIOS

_SPEC: Final = re.compile(r"(?P<name>[a-z_]+)(?:@(?P<window>[^:]*))?(?::(?P<fraction>.*))?")
_WINDOW: Final = re.compile(r"(?P<every>every)?(?P<start>[^+]*)(?:\+(?P<length>.*))?")
_TIME: Final = re.compile(r"(?P<number>\d+(?:\.\d+)?)(?P<unit>ms|s|m|h)")
_COUNT: Final = re.compile(r"n?(?P<number>\d+)")
_UNIT_SECONDS: Final = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


@dataclass(frozen=True, slots=True)
class ScenarioWindow:
    """One parsed spec: a scenario, when it is on, and the share of records it hits.

    ``by_count`` says whether start/length/period count messages or seconds; a None
    length lasts to the end of the run, a None period means a single window.
    """

    scenario: str
    fraction: float
    by_count: bool = False
    start: float = 0.0
    length: float | None = None
    period: float | None = None

    def is_open(self, index: int, elapsed: float) -> bool:
        """Whether message ``index``, produced ``elapsed`` seconds into the run, is inside."""
        at = float(index) if self.by_count else elapsed
        if self.period is not None:
            if at < self.period:
                return False
            at %= self.period
        elif at < self.start:
            return False
        else:
            at -= self.start
        return self.length is None or at < self.length


def parse_spec(text: str) -> ScenarioWindow:
    """Parse one ``NAME[@WINDOW][:FRACTION]`` spec; raise ScenarioSpecError with the reason."""
    match = _SPEC.fullmatch(text.strip())
    if match is None:
        raise _error(text, "expected NAME[@WINDOW][:FRACTION], e.g. field_rename@10s+5s:0.5")
    name = match["name"]
    scenario = SCENARIOS.get(name)
    if scenario is None:
        raise _error(text, f"unknown scenario {name!r} (known: {', '.join(SCENARIOS)})")
    fraction = scenario.default_fraction
    if match["fraction"] is not None:
        fraction = _fraction(text, match["fraction"])
    if match["window"] is None:
        return ScenarioWindow(name, fraction)
    return _window(text, name, fraction, match["window"])


def _window(text: str, name: str, fraction: float, window: str) -> ScenarioWindow:
    match = _WINDOW.fullmatch(window)
    assert match is not None, "the pattern matches any string"
    by_count, start = _point(text, match["start"], "start" if not match["every"] else "period")
    length: float | None = None
    if match["length"] is not None:
        length_by_count, length = _point(text, match["length"], "length", by_count)
        if length_by_count != by_count:
            raise _error(text, "start and length must both be times or both message counts")
        if length <= 0:
            raise _error(text, "length must be positive")
    if not match["every"]:
        return ScenarioWindow(name, fraction, by_count, start, length)
    if length is None:
        raise _error(text, "'every' needs a length, e.g. every30s+3s")
    if start <= 0:
        raise _error(text, "the period of 'every' must be positive")
    if length > start:
        raise _error(text, "the length of an 'every' window must not exceed its period")
    return ScenarioWindow(name, fraction, by_count, start, length, period=start)


def _point(text: str, part: str, what: str, count_default: bool = False) -> tuple[bool, float]:
    """Parse a time or a count; a bare integer is a count only where ``count_default``."""
    time = _TIME.fullmatch(part)
    if time is not None:
        return False, float(time["number"]) * _UNIT_SECONDS[time["unit"]]
    count = _COUNT.fullmatch(part)
    if count is not None and (part.startswith("n") or count_default):
        return True, float(int(count["number"]))
    raise _error(
        text,
        f"bad {what} {part!r}: a time needs a unit (10s, 500ms, 2m, 1h), "
        "a message count an n prefix (n1000)",
    )


def _fraction(text: str, part: str) -> float:
    try:
        value = float(part)
    except ValueError:
        raise _error(text, f"fraction {part!r} is not a number") from None
    if not 0.0 < value <= 1.0:
        raise _error(text, f"fraction must be in (0, 1], got {part}")
    return value


def _error(text: str, reason: str) -> ScenarioSpecError:
    return ScenarioSpecError(f"bad scenario spec {text!r}: {reason}")


@dataclass(frozen=True, slots=True)
class Schedule:
    """The parsed specs of a run, in the order given."""

    windows: tuple[ScenarioWindow, ...] = ()

    @classmethod
    def parse(cls, specs: Sequence[str]) -> Schedule:
        """Parse every spec; raise ScenarioSpecError on the first bad one."""
        return cls(tuple(parse_spec(spec) for spec in specs))

    def pick(self, index: int, elapsed: float, rng: random.Random) -> str | None:
        """The scenario message ``index`` gets, or None for a clean message."""
        for window in self.windows:
            if window.is_open(index, elapsed) and (
                window.fraction >= 1.0 or rng.random() < window.fraction
            ):
                return window.scenario
        return None
