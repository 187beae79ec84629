"""stream_validator: schema-contract validation for Kafka market-data feeds.

The public API is listed in ``__all__``; everything else is internal.
"""

from importlib import metadata as _metadata

from stream_validator.contracts import (
    FieldSpec,
    RuleAction,
    RuleSpec,
    SchemaContract,
    check_contract,
    contract_from_mapping,
    load_contract,
)
from stream_validator.errors import (
    ConfigError,
    ContractError,
    ContractFileError,
    DecodeError,
    StreamValidatorError,
)
from stream_validator.verify import (
    BatchAccumulator,
    DataSchemaContractVerifier,
    FlaggedViolation,
    QuarantinedRecord,
    SchemaContractValidationReport,
    Violation,
    ViolationKind,
)

try:
    #: ``[project] version`` of pyproject.toml, the one place the version is written.
    __version__: str = _metadata.version("stream-validator")
except _metadata.PackageNotFoundError:  # a source tree on sys.path that was never installed
    __version__ = "0+unknown"

__all__ = [
    "BatchAccumulator",
    "ConfigError",
    "ContractError",
    "ContractFileError",
    "DataSchemaContractVerifier",
    "DecodeError",
    "FieldSpec",
    "FlaggedViolation",
    "QuarantinedRecord",
    "RuleAction",
    "RuleSpec",
    "SchemaContract",
    "SchemaContractValidationReport",
    "StreamValidatorError",
    "Violation",
    "ViolationKind",
    "__version__",
    "check_contract",
    "contract_from_mapping",
    "load_contract",
]
