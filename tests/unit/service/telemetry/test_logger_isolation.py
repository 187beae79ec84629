"""Tests leave the package logger as they found it (tests/conftest.py restores it)."""

from __future__ import annotations

import io
import logging

from stream_validator.service.telemetry.logs import LOGGER_NAME, configure_logging


def test_a_test_configures_logging_onto_a_stream_it_then_closes() -> None:
    """What run_service does under capsys: a handler on a stream closed at the test's end."""
    stream = io.StringIO()
    configure_logging("INFO", stream=stream)
    stream.close()
    assert logging.getLogger(LOGGER_NAME).handlers


def test_the_next_test_finds_the_package_logger_untouched() -> None:
    """The previous test's handler is gone and logs propagate again: a log call from this
    test (or a service thread) never reaches the closed stream."""
    logger = logging.getLogger(LOGGER_NAME)
    assert not any(
        isinstance(h, logging.StreamHandler) and getattr(h.stream, "closed", False)
        for h in logger.handlers
    )
    assert logger.propagate
    logging.getLogger(f"{LOGGER_NAME}.service").info("no ValueError from a closed stream")
