"""Exceptions raised by stream_validator.

Every exception the package raises on purpose derives from one root::

    StreamValidatorError
    ├── ContractError (also ValueError)      a malformed SchemaContract / FieldSpec
    │   └── ContractFileError                a contract file that cannot be loaded
    ├── DecodeError (also ValueError)        bytes that are not one JSON value
    ├── ConfigError (also ValueError)        invalid service configuration
    ├── ScenarioSpecError (also ValueError)  a bad simulator --scenario spec (sim/schedule.py)
    ├── SimulateError                        the simulator cannot produce (kafka/simproducer.py)
    └── DevBrokerError (also RuntimeError)   the local development broker (kafka/devjars.py)

Bad *records* never raise: they become violations in a report. Exceptions are for
bad setup (contracts, config) and for callers that decode bytes directly.
"""

from __future__ import annotations


class StreamValidatorError(Exception):
    """Root of every exception stream_validator raises deliberately."""


class ContractError(StreamValidatorError, ValueError):
    """A contract is malformed; raised at setup so it never silently passes records."""


class ContractFileError(ContractError):
    """A contract file cannot be read or does not describe a valid contract."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.detail = message


class DecodeError(StreamValidatorError, ValueError):
    """Bytes that cannot be decoded as a single JSON value."""


class ConfigError(StreamValidatorError, ValueError):
    """Service configuration is invalid; the message names the offending key."""
