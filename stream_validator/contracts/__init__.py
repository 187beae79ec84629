"""Contract model (FieldSpec, SchemaContract), its consistency checks and file loading."""

from stream_validator.contracts.check import check_contract, contract_problems
from stream_validator.contracts.loader import (
    contract_from_mapping,
    contract_from_text,
    load_contract,
)
from stream_validator.contracts.model import SUPPORTED_TYPES, FieldSpec, SchemaContract
from stream_validator.contracts.rulespec import RuleAction, RuleSpec, parse_rules

__all__ = [
    "SUPPORTED_TYPES",
    "FieldSpec",
    "RuleAction",
    "RuleSpec",
    "SchemaContract",
    "check_contract",
    "contract_from_mapping",
    "contract_from_text",
    "contract_problems",
    "load_contract",
    "parse_rules",
]
