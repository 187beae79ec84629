"""stream_validator: schema-contract validation for Kafka market-data feeds.

The public API is listed in ``__all__``; everything else is internal.
"""

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

__version__ = "0.1.0"

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
