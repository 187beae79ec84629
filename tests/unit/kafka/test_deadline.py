"""Calls the service bounds itself: results and errors pass through, a stuck call times out."""

from __future__ import annotations

import threading

import pytest

from stream_validator.errors import CallTimeoutError, StreamValidatorError
from stream_validator.kafka.deadline import DeadlineCaller


def test_result_and_exception_pass_through() -> None:
    """A call that returns gives its result; one that raises raises the same exception."""
    caller = DeadlineCaller()
    assert caller.call("add", lambda: 1 + 1, 5.0) == 2
    with pytest.raises(KeyError):
        caller.call("fail", lambda: {}["x"], 5.0)
    assert caller.stuck == 0


def test_stuck_call_raises_call_timeout_and_is_counted_until_it_returns() -> None:
    """A call still blocked at its deadline raises CallTimeoutError and counts as stuck until
    done."""
    caller = DeadlineCaller()
    release = threading.Event()
    with pytest.raises(CallTimeoutError, match="blocked did not return"):
        caller.call("blocked", release.wait, 0.01)
    assert caller.stuck == 1
    release.set()
    caller._workers[0].join()
    assert caller.stuck == 0


def test_a_call_timeout_is_in_the_exception_tree() -> None:
    """The timeout a stuck call raises is a StreamValidatorError (and a TimeoutError), so
    the command line's handler of the package's errors catches it too."""
    caller = DeadlineCaller()
    release = threading.Event()
    with pytest.raises(CallTimeoutError) as info:
        caller.call("blocked", release.wait, 0.01)
    release.set()
    assert isinstance(info.value, StreamValidatorError)
    assert isinstance(info.value, TimeoutError)
