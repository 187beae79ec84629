# Type stubs of the native core (native/src/lib.rs), built by maturin as stream_validator._native.

from typing import Any

def build_version() -> str: ...
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
        /,
    ) -> tuple[list[tuple[Any, ...]], list[int], list[int], int, list[tuple[int, str]]]: ...
