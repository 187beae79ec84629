"""The command line: ``stream-validator <command> ...`` (see ``main``)."""

from stream_validator.cli.main import main

__all__ = ["main"]
