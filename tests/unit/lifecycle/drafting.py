"""Shared helpers of the lifecycle tests: a draft from payload lines, and its file read back."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from stream_validator.codec import encode_json
from stream_validator.contracts import SchemaContract, contract_from_mapping
from stream_validator.lifecycle.draftyaml import render_draft
from stream_validator.lifecycle.infer import Draft, InferOptions, infer_contract
from stream_validator.lifecycle.lines import fold
from stream_validator.lifecycle.observe import SampleObservations
from stream_validator.yamlfile import read_yaml


def lines_of(records: Sequence[object]) -> list[bytes]:
    """Each value as one JSON line (without its newline)."""
    return [encode_json(record) for record in records]


def draft_of(lines: Sequence[bytes], **options: object) -> tuple[Draft, SampleObservations]:
    """The draft of these payloads (``options``: InferOptions' fields)."""
    sample = SampleObservations()
    fold(sample, lines)
    return infer_contract(sample, InferOptions(**options)), sample  # type: ignore[arg-type]


def reloaded(draft: Draft, margin: Fraction = Fraction(1, 10)) -> SchemaContract:
    """The draft rendered as a contract file and loaded back as check-contract loads it."""
    text = render_draft(draft, "sample.jsonl", margin)
    document, duplicates = read_yaml(text)
    assert duplicates == []
    return contract_from_mapping(document, source="draft")
