"""Contract model (FieldSpec, SchemaContract), its consistency checks and file loading."""

from stream_validator.contracts.check import check_contract, contract_problems
from stream_validator.contracts.loader import contract_from_mapping, load_contract
from stream_validator.contracts.model import SUPPORTED_TYPES, FieldSpec, SchemaContract

__all__ = [
    "SUPPORTED_TYPES",
    "FieldSpec",
    "SchemaContract",
    "check_contract",
    "contract_from_mapping",
    "contract_problems",
    "load_contract",
]
