"""The per-symbol state in the native core (``native/src/state/``), behind the Python API.

``NativeSymbolStateTracker`` is ``SymbolStateTracker`` with its state kept in Rust: the
same methods (``observe``, ``observe_columns``, ``observe_record``, ``read``, ``drop``,
``evictions``, ``holes``, ``holes_given_up``, ``len``) give the same events, in the same
order, with the same texts and counts, and the same evictions
(tests/unit/native/test_state_differential.py compares them). It makes Python objects only
for the events it returns. A key is held once, as UTF-8, in a slab chained in LRU order.

The one difference: a sequence number beyond ±2**64 is not checked (the Python reference
takes any int); no feed numbers that far.

``symbol_state_tracker`` picks the implementation: native unless told not to or the
extension is missing its ``SymbolState``. ``native_wanted`` reads the switch of the whole
native core, ``SV_NATIVE=0``, from an environment the caller passes (this module stays
pure: no ``os``).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Final, cast

from stream_validator.contracts.statespec import SymbolStateSpec
from stream_validator.state.distrust import TRUSTED
from stream_validator.state.events import SymbolEvent, SymbolEventKind
from stream_validator.state.tracker import SymbolStateTracker

try:
    from stream_validator._native import SymbolState as _NativeState
except ImportError:  # an extension built before the state was native
    _NativeState = None  # type: ignore[assignment,misc]

__all__ = [
    "NativeSymbolStateTracker",
    "native_state_available",
    "native_wanted",
    "symbol_state_tracker",
]

#: Environment switch of the native core: "0" runs the Python reference everywhere.
SWITCH: Final = "SV_NATIVE"
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH_NAIVE: Final = datetime(1970, 1, 1)  # naive times subtract from it
_MICRO: Final = timedelta(microseconds=1)


def native_wanted(environ: Mapping[str, str]) -> bool:
    """The native core is wanted: the environment does not say ``SV_NATIVE=0``."""
    return environ.get(SWITCH, "1").strip() != "0"  # as native_enabled() reads it


def native_state_available() -> bool:
    """The extension holds the native state."""
    return _NativeState is not None


if TYPE_CHECKING or _NativeState is not None:

    class NativeSymbolStateTracker(_NativeState):
        """``SymbolStateTracker`` with its state in Rust (see the module docstring)."""

        spec: SymbolStateSpec

        def __new__(cls, spec: SymbolStateSpec) -> NativeSymbolStateTracker:
            return super().__new__(
                cls, spec, SymbolEvent, SymbolEventKind, _EPOCH, _EPOCH_NAIVE, _MICRO
            )

        def __init__(self, spec: SymbolStateSpec) -> None:
            self.spec = spec
            # Reading a record's values is the reference's own code (no state in it).
            self.read = SymbolStateTracker(spec).read

        def observe_record(
            self,
            partition: object,
            record: Mapping[str, object],
            distrust: frozenset[str] = TRUSTED,
        ) -> tuple[SymbolEvent, ...]:
            """``observe`` with the values ``read`` finds in a record (none: no events)."""
            values = self.read(record, distrust)
            if values is None:
                return ()
            symbol, seq, event_time, quote = values
            return self.observe(partition, symbol, seq=seq, event_time=event_time, quote=quote)


def symbol_state_tracker(spec: SymbolStateSpec, native: bool = True) -> SymbolStateTracker:
    """The tracker of a contract's state: native unless ``native`` is False (see
    ``native_wanted``) or the extension has no native state.

    Typed as the reference: the native class has its methods, with the same results.
    """
    if native and _NativeState is not None:
        return cast(SymbolStateTracker, NativeSymbolStateTracker(spec))
    return SymbolStateTracker(spec)
