"""PURE: a registry route's batch, decoded already (``registry.decoder``), judged by the
contract like a JSON one.

The decoded records go through the verifier's full rules as records (``add_record``): the
same checks as JSON, on the values the format decoded to (Avro ``long`` an int, a
``timestamp-millis`` an aware datetime, ...; docs/service/formats.md). A value that did not
decode is quarantined as ``undecodable`` with the decoder's reason; a tombstone as with JSON.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from stream_validator.codec import encode_json
from stream_validator.records import SourceRecord
from stream_validator.registry.outcome import Decoded, DecodeResult, SchemaRef, judge_decoded
from stream_validator.verify import DataSchemaContractVerifier, SchemaContractValidationReport

#: Distinct schemas named in one batch event (a batch rarely carries more than two).
MAX_EVENT_SCHEMAS = 5


def validate_decoded(
    verifier: DataSchemaContractVerifier,
    results: Sequence[DecodeResult | None],
    values: Sequence[bytes | None],
    now: datetime | None,
) -> SchemaContractValidationReport:
    """The report of a decoded batch, record ``i`` being ``results[i]`` (``values[i]`` its
    original bytes, kept as the evidence of one that did not decode)."""
    batch = verifier.start_batch(now=now)
    for result, value in zip(results, values, strict=True):
        judge_decoded(batch, result, value)
    return batch.finish()


def schema_of(result: DecodeResult | None) -> SchemaRef | None:
    """The writer schema of one value, when its framing named one."""
    return None if result is None else result.schema


def event_schemas(results: Sequence[DecodeResult | None]) -> list[dict[str, Any]]:
    """The batch event's ``schemas``: each writer schema seen (id, version) with its count of
    records, the most frequent first, at most MAX_EVENT_SCHEMAS."""
    seen: Counter[SchemaRef] = Counter(
        result.schema for result in results if result is not None and result.schema is not None
    )
    return [
        {**ref.as_dict(), "records": count} for ref, count in seen.most_common(MAX_EVENT_SCHEMAS)
    ]


def state_records(
    records: Sequence[SourceRecord], results: Sequence[DecodeResult | None]
) -> list[SourceRecord]:
    """The records as the per-symbol state reads them: a decoded value as its JSON (datetimes
    in ISO 8601, which the state reads as event times); the others as they came (the state
    never feeds an undecodable record)."""
    return [
        record._replace(value=encode_json(result.record)) if type(result) is Decoded else record
        for record, result in zip(records, results, strict=True)
    ]
