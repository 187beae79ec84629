"""PURE validation core: records in, a report out. No Kafka, no Prometheus, no I/O."""

from stream_validator.verify.batch import BatchAccumulator
from stream_validator.verify.report import (
    FlaggedViolation,
    QuarantinedRecord,
    SchemaContractValidationReport,
    Violation,
    ViolationKind,
)
from stream_validator.verify.verifier import DataSchemaContractVerifier

__all__ = [
    "BatchAccumulator",
    "DataSchemaContractVerifier",
    "FlaggedViolation",
    "QuarantinedRecord",
    "SchemaContractValidationReport",
    "Violation",
    "ViolationKind",
]
