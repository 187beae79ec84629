"""Fixtures shared across the test packages, loaded once."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from stream_validator.service.telemetry.logs import LOGGER_NAME

pytest_plugins = ["tests.support.ticks", "tests.support.symbolstate"]


@pytest.fixture(autouse=True)
def _package_logger_restored() -> Iterator[None]:
    """configure_logging (``run_service`` calls it) gives the package logger a handler on
    the stderr of that moment, which under capsys is a stream closed when the test ends, and
    stops propagation. Left so, every later test logs into the closed stream, and a service
    thread's log call then raises ValueError and kills the thread (it happened in CI:
    test_breaker_resume's runner died). So the logger is put back after each test."""
    logger = logging.getLogger(LOGGER_NAME)
    handlers, level, propagate = list(logger.handlers), logger.level, logger.propagate
    yield
    logger.handlers[:] = handlers
    logger.setLevel(level)
    logger.propagate = propagate
