"""PURE per-symbol state of a market-data stream: sequence, event time, frozen quotes.

A contract's ``state`` section (``contracts.statespec``) configures it; the service and the
offline ``validate`` feed it the records the verifier judged. Modules:

* ``tracker``: ``SymbolStateTracker``, the state per (partition, symbol), bounded;
* ``sequence``: the sequence check's rarer cases (gaps, regressions, bounded holes);
* ``entry``: what the tracker holds per symbol;
* ``eventtime``: event times as the state reads and compares them;
* ``events``: ``SymbolEvent``, its kinds, and ``EventTally`` (counts per batch);
* ``distrust``: which parts of the state a quarantined record may still feed;
* ``feed``: ``StateFeed``, feeding payloads or the verifier's Structs in batches;
* ``views``: the few fields the feed reads of a payload, and their getters.
"""

from stream_validator.state.distrust import TRUSTED, UNFED, distrusted
from stream_validator.state.events import EventTally, SymbolEvent, SymbolEventKind
from stream_validator.state.eventtime import EventTime, event_moment, event_seconds
from stream_validator.state.feed import StateFeed
from stream_validator.state.tracker import SymbolStateTracker

__all__ = [
    "TRUSTED",
    "UNFED",
    "EventTally",
    "EventTime",
    "StateFeed",
    "SymbolEvent",
    "SymbolEventKind",
    "SymbolStateTracker",
    "distrusted",
    "event_moment",
    "event_seconds",
]
