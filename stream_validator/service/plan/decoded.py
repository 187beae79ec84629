"""PURE: a registry route's batch, decoded already (``registry.decoder``), judged by the
contract like a JSON one.

The decoded records go through the verifier's full rules as records (``add_record``): the
same checks as JSON, on the values the format decoded to (Avro ``long`` an int, a
``timestamp-millis`` an aware datetime, ...; docs/service/formats.md). An Avro value the
native core read (``Transcoded``) is judged as its JSON text, like a JSON route's payload
(``add_payloads``: the native verdict core), the text being one whose reading is that
record. A value that did not decode is quarantined as ``undecodable`` with the decoder's
reason; a tombstone as with JSON.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from stream_validator.codec import encode_json
from stream_validator.records import SourceRecord
from stream_validator.registry.outcome import (
    Decoded,
    DecodeResult,
    SchemaRef,
    Transcoded,
    judge_decoded,
)
from stream_validator.verify import DataSchemaContractVerifier, SchemaContractValidationReport

if TYPE_CHECKING:
    from stream_validator._native import StateRows

#: Distinct schemas named in one batch event (a batch rarely carries more than two).
MAX_EVENT_SCHEMAS = 5

_ALL_TRANSCODED = {Transcoded}
# A result's first field (a Transcoded's text) and its second (every result's schema).
_first: Callable[[Any], bytes] = itemgetter(0)
_second: Callable[[Any], Any] = itemgetter(1)


def validate_decoded(
    verifier: DataSchemaContractVerifier,
    results: Sequence[DecodeResult | None],
    values: Sequence[bytes | None],
    now: datetime | None,
    rows: StateRows | None = None,
) -> SchemaContractValidationReport:
    """The report of a decoded batch, record ``i`` being ``results[i]`` (``values[i]`` its
    original bytes, kept as the evidence of one that did not decode). ``rows``: a
    ``StateRows``, given one row per record (absent where the native core did not read it)."""
    batch = verifier.start_batch(now=now)
    if set(map(type, results)) == _ALL_TRANSCODED:  # the common batch, in one call (read in C)
        batch.add_payloads(list(map(_first, results)), rows=rows)
        return batch.finish()
    run: list[bytes] = []  # consecutive Transcoded texts, judged in one native call
    for result, value in zip(results, values, strict=True):
        if type(result) is Transcoded:
            run.append(result.text)
            continue
        if run:
            batch.add_payloads(run, rows=rows)
            run = []
        if rows is not None:
            rows.extend_absent(1)
        judge_decoded(batch, result, value)
    if run:
        batch.add_payloads(run, rows=rows)
    return batch.finish()


def schema_of(result: DecodeResult | None) -> SchemaRef | None:
    """The writer schema of one value, when its framing named one."""
    return None if result is None else result.schema


def event_schemas(results: Sequence[DecodeResult | None]) -> list[dict[str, Any]]:
    """The batch event's ``schemas``: each writer schema seen (id, version) with its count of
    records, the most frequent first, at most MAX_EVENT_SCHEMAS."""
    seen: Counter[SchemaRef | None] = Counter(map(_second, filter(None, results)))  # in C
    seen.pop(None, None)
    return [
        {**ref.as_dict(), "records": count}
        for ref, count in seen.most_common(MAX_EVENT_SCHEMAS)
        if ref is not None
    ]


def state_records(
    records: Sequence[SourceRecord], results: Sequence[DecodeResult | None]
) -> list[SourceRecord]:
    """The records as the per-symbol state reads them: a decoded value as its JSON (datetimes
    in ISO 8601, which the state reads as event times; a transcoded one's text is that JSON);
    the others as they came (the state never feeds an undecodable record)."""
    return [
        record._replace(value=encode_json(result.record))
        if type(result) is Decoded
        else record._replace(value=result.text)
        if type(result) is Transcoded
        else record
        for record, result in zip(records, results, strict=True)
    ]
