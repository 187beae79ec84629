"""Fixtures shared across the test packages, loaded once."""

pytest_plugins = ["tests.support.ticks"]
