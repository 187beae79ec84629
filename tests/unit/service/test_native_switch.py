"""SV_NATIVE: the service keeps its per-symbol state natively unless the environment says 0."""

from __future__ import annotations

import pytest

from stream_validator.state.native import NativeSymbolStateTracker, native_state_available
from stream_validator.state.tracker import SymbolStateTracker

from .fakeservice import Harness, service_config


@pytest.mark.skipif(not native_state_available(), reason="extension without state")
@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, NativeSymbolStateTracker), ("1", NativeSymbolStateTracker), ("0", SymbolStateTracker)],
)
def test_the_environment_picks_the_state_tracker(
    monkeypatch: pytest.MonkeyPatch, value: str | None, expected: type
) -> None:
    """No SV_NATIVE or 1: the native tracker; SV_NATIVE=0: the Python reference."""
    if value is None:
        monkeypatch.delenv("SV_NATIVE", raising=False)
    else:
        monkeypatch.setenv("SV_NATIVE", value)
    harness = Harness(service_config())
    state = harness.service._processors["ticks"].state
    assert state is not None
    assert type(state.tracker) is expected
