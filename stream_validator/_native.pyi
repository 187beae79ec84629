# Type stubs of the native core (native/src/lib.rs), built by maturin as stream_validator._native.

from collections.abc import Callable, Hashable, Mapping, Sequence
from datetime import datetime
from typing import Any, Self, TypeVar

from stream_validator.state.events import SymbolEvent

T = TypeVar("T")

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
    def observe_scanned(
        self,
        partitions: Sequence[Hashable],
        rows: StateRows,
        indices: Sequence[int],
        distrust: Mapping[int, int],
        read: Callable[[int], tuple[Any, ...] | None],
    ) -> list[tuple[int, tuple[SymbolEvent, ...]]]: ...
    def observe_rows(
        self,
        partition: Hashable,
        rows: StateRows,
        unfed: list[int],
        distrust: list[tuple[int, int]],
        read: Callable[[int], tuple[Any, ...] | None],
        first: int = 0,
    ) -> list[tuple[SymbolEvent, ...]]: ...
    def take_scanned(self) -> tuple[int, tuple[SymbolEvent, ...]]: ...
    def drop(self, partition: Hashable) -> int: ...

class StateRows:
    """The state's fields of each payload as the verdict scan read them (state/rows.rs)."""

    def __init__(self, key: int, seq: int, time: int, quotes: list[int], /) -> None: ...
    def __len__(self) -> int: ...
    def clear(self) -> None: ...
    def truncate(self, len: int, /) -> None: ...
    def extend_absent(self, count: int, /) -> None: ...

def native_enabled() -> bool: ...

class VerdictPlan:
    """A flat contract compiled for the native verdict (built by verify.rustcore)."""

    def __init__(self, spec: tuple[object, ...], /) -> None: ...
    def learn(self, verdicts: list[tuple[int, str, bool]], /) -> None: ...
    def scan(
        self,
        payloads: list[object],
        windows: list[tuple[int | None, int | None]],
        max_bytes: int,
        rows: StateRows | None = None,
        /,
        types: ReportTypes | None = None,
        base: int = 0,
        start: int = 0,
        stop: int | None = None,
    ) -> tuple[Any, ...]: ...

class ReportTypes:
    """The report types a scan builds bad records' objects of (verdict/built.rs)."""

    def __init__(self, violation: type, quarantined: type, kinds: list[Any], /) -> None: ...

class ScannedLines:
    """The records of one ``scan_lines`` call, as spans of its block (offline.rs)."""

    def __len__(self) -> int: ...
    def __getitem__(self, at: int, /) -> bytes: ...
    def line(self, at: int, /) -> int: ...
    def dlq_lines(self, first_line: int, quarantined: dict[int, Any], /) -> list[bytes | None]: ...
    def runs(self, left_out: list[int], /) -> list[tuple[int, int]] | None: ...
    def join(self, left_out: list[int], /) -> bytes: ...

def scan_lines(
    plan: VerdictPlan,
    data: bytes,
    start: int,
    end: int,
    tail: bool,
    cut_first: bool,
    take: int,
    windows: list[tuple[int | None, int | None]],
    max_bytes: int,
    rows: StateRows | None = None,
    types: ReportTypes | None = None,
    base: int = 0,
    tracker: SymbolState | None = None,
    partition: Hashable | None = None,
    /,
) -> tuple[int, int, int, ScannedLines, tuple[Any, ...]]: ...

class AvroPlan:
    """An Avro writer schema compiled for the native transcoder (built by registry.avronative)."""

    def __init__(self, program: tuple[str, Any], /) -> None: ...
    def transcode(
        self, values: list[bytes | None], prefix: bytes, limit: int, /
    ) -> tuple[list[bytes | None], list[int]]: ...

class AckCounter:
    """A batch's produce loop and delivery bookkeeping: counts acknowledgements natively
    (``silent``: the client reports failures only; native/src/delivery.rs)."""

    def __init__(self, on_failure: Any, convert: Any, silent: bool = False, /) -> None: ...
    @property
    def acked(self) -> int: ...
    @property
    def undecided(self) -> int: ...
    def __call__(self, error: Any, message: Any, /) -> None: ...
    def settle(self, failure: Any, /) -> None: ...
    def produce_one(
        self, produce: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None, /
    ) -> None: ...
    def produce_batch(
        self,
        produce: Any,
        records: list[Any],
        start: int,
        cls: type[Any],
        at: tuple[int, int, int, int, int],
        stop_on: tuple[type[BaseException], ...],
        /,
    ) -> int: ...

def partition_runs(records: list[Any], at: tuple[int, int], /) -> list[tuple[int, int]]:
    """[start, end) of each run of consecutive records of one (topic, partition)."""

def delivered_columns(
    outputs: list[Any], clean: str, at: tuple[int, int], acked_at: float, /
) -> tuple[list[int], list[float]]:
    """The non-clean outputs' indices and the clean ones' latencies (native/src/records.rs)."""

def clean_outputs(
    cls: type[T],
    kind: str,
    topic: str,
    records: list[Any],
    at: tuple[int, int, int, int],
    tail: tuple[Any, ...],
    /,
) -> list[T]:
    """``[cls(kind, topic, r[at[0]], r[at[1]], r[at[2]], r[at[3]], r, *tail) for r in
    records]`` for a tuple subclass ``cls``, each allocated once (native/src/records.rs)."""
