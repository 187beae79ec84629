# Type stubs of the native core (native/src/lib.rs), built by maturin as stream_validator._native.

from collections.abc import Hashable, Sequence
from datetime import datetime
from typing import Self

from stream_validator.state.events import SymbolEvent

def build_version() -> str: ...

class SymbolState:
    """Per-symbol state (native/src/state/); see state.native for the Python face."""

    def __new__(
        cls,
        spec: object,
        event_type: object,
        kinds: object,
        epoch: object,
        epoch_naive: object,
        micro: object,
    ) -> Self: ...
    @property
    def evictions(self) -> int: ...
    @property
    def holes(self) -> int: ...
    @property
    def holes_given_up(self) -> int: ...
    def __len__(self) -> int: ...
    def observe(
        self,
        partition: Hashable,
        symbol: str,
        *,
        seq: int | None = None,
        event_time: float | datetime | None = None,
        quote: Sequence[object] | None = None,
    ) -> tuple[SymbolEvent, ...]: ...
    def observe_columns(
        self,
        partitions: Sequence[Hashable],
        keys: Sequence[str],
        seqs: Sequence[int | None],
        times: Sequence[float | datetime | None],
        quotes: Sequence[tuple[object, ...] | None] | None = None,
    ) -> list[tuple[int, tuple[SymbolEvent, ...]]]: ...
    def drop(self, partition: Hashable) -> int: ...
