"""Helpers and fixtures shared by the unit tests (fixtures load via tests/conftest.py)."""
