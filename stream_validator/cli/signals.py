"""How a command turns SIGINT/SIGTERM into a graceful stop (``run`` has its own, a wakeup-fd
watcher in ``service.app``)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def stop_on_signals(request_stop: Callable[[], object]) -> Iterator[None]:
    """Call ``request_stop`` on SIGINT/SIGTERM while inside; restore the handlers after.

    Python delivers signals to the main thread only, so elsewhere (a test running a command
    in a thread) this does nothing.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(_signum: int, _frame: FrameType | None) -> None:
        request_stop()

    previous = {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS}
    try:
        yield
    finally:
        for signum, old in previous.items():
            signal.signal(signum, old)
