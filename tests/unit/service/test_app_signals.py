"""The run command's signal watcher: SIGHUP asks for a contract reload, SIGTERM stops."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from stream_validator.service import app
from stream_validator.service.app import _watch_signals


class FakeService:
    """What the watcher calls on the service."""

    def __init__(self) -> None:
        self.reload_requested = threading.Event()
        self.stopped = threading.Event()

    @property
    def stopping(self) -> bool:
        return self.stopped.is_set()

    def request_reload(self) -> None:
        self.reload_requested.set()

    def stop(self) -> None:
        self.stopped.set()


def test_sighup_requests_a_reload_and_does_not_stop_the_service(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The wakeup fd carries SIGHUP: a reload is requested, the loop keeps running; a later
    SIGTERM still stops it (and arms the shutdown deadline)."""
    deadlines: list[float] = []
    armed = threading.Event()

    def arm(deadline_s: float) -> None:  # instead of a timer that would os._exit the tests
        deadlines.append(deadline_s)
        armed.set()

    monkeypatch.setattr(app, "_start_watchdog", arm)
    read_fd, write_fd = os.pipe()
    service = FakeService()
    # A daemon thread blocked on the pipe, as in the service.
    watcher = threading.Thread(target=_watch_signals, args=(read_fd, service, 3600.0), daemon=True)
    watcher.start()
    os.write(write_fd, bytes([signal.SIGHUP]))
    assert service.reload_requested.wait(5)
    assert not service.stopped.is_set()
    os.write(write_fd, bytes([signal.SIGTERM]))
    assert service.stopped.wait(5) and armed.wait(5)
    assert deadlines == [3600.0]


def test_the_watcher_ends_when_the_pipe_is_closed() -> None:
    """EOF on the wakeup pipe (its write end closed) ends the watcher instead of spinning on
    empty reads forever (a busy loop burning a core before the fix)."""
    read_fd, write_fd = os.pipe()
    service = FakeService()
    watcher = threading.Thread(target=_watch_signals, args=(read_fd, service, 3600.0), daemon=True)
    watcher.start()
    os.close(write_fd)
    watcher.join(5)
    try:
        assert not watcher.is_alive()
        assert not service.stopped.is_set()
    finally:
        os.close(read_fd)
