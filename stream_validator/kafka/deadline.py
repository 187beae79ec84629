"""Calls into librdkafka that the service bounds itself.

Some librdkafka calls can wait without limit although a timeout is passed (librdkafka 2.x:
``send_offsets_to_transaction`` after the transaction coordinator's broker restarted). Such a
call runs on a worker thread and the caller waits for it with its own deadline; on expiry the
caller gets ``errors.CallTimeoutError`` and must abandon the client object, whose worker stays
blocked.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

from stream_validator.errors import CallTimeoutError

T = TypeVar("T")


class DeadlineCaller:
    """Runs calls on worker threads with a deadline; counts workers still stuck."""

    def __init__(self) -> None:
        self._workers: list[threading.Thread] = []

    def call(self, what: str, operation: Callable[[], T], deadline_s: float) -> T:
        """operation() on a worker thread; CallTimeoutError when it has not returned by the
        deadline."""
        outcome: list[T] = []
        failure: list[BaseException] = []
        done = threading.Event()

        def run() -> None:
            try:
                outcome.append(operation())
            except BaseException as exc:  # handed to the caller, re-raised there
                failure.append(exc)
            finally:
                done.set()

        worker = threading.Thread(target=run, name=f"sv-{what}", daemon=True)
        worker.start()
        if not done.wait(deadline_s):
            self._workers.append(worker)
            raise CallTimeoutError(f"{what} did not return within {deadline_s:.0f}s")
        if failure:
            raise failure[0]
        return outcome[0]

    @property
    def stuck(self) -> int:
        """Workers that timed out and are still blocked in librdkafka."""
        self._workers = [w for w in self._workers if w.is_alive()]
        return len(self._workers)
