"""The value types of the DLQ feature: source records, envelope context, DLQ records."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from stream_validator.records import Headers, SourceRecord
from stream_validator.verify import Violation

ENVELOPE_VERSION = 1
HEADER_PREFIX = "sv.dlq."
#: Names the form of a DLQ record: ``envelope`` (JSON value) or ``headers`` (original value).
FORMAT_HEADER = "sv.dlq.format"

DlqForm = Literal["envelope", "headers"]


@dataclass(frozen=True, slots=True)
class EnvelopeContext:
    """What the service knows about where and when a record was validated."""

    route: str
    contract_name: str
    contract_version: str
    consumer_group: str
    validator_version: str
    validated_at: str
    replay_count: int = 0
    #: The writer schema of a registry-format record (``schema`` in the envelope): its id,
    #: GUID (when its header named one) and version under the record's subject.
    schema_id: int | None = None
    schema_guid: str | None = None
    schema_version: int | None = None


class DlqRecord(NamedTuple):
    """The record to produce to the DLQ topic for one quarantined record (a NamedTuple, as
    ``SourceRecord``: one is built per DLQ record, a frozen dataclass took twice as
    long)."""

    key: bytes | None
    value: bytes | None
    headers: Headers
    form: DlqForm
    #: True when the payload, key or headers are only partly kept (not replayable).
    truncated: bool


def headers_sha256(headers: Sequence[tuple[str, bytes | None]]) -> str:
    """A digest of a header list: per header, 4-byte lengths then bytes (-1: null value)."""
    digest = hashlib.sha256()
    for name, value in headers:
        raw = name.encode("utf-8", "surrogatepass")
        digest.update(len(raw).to_bytes(4, "big") + raw)
        if value is None:
            digest.update(b"\xff\xff\xff\xff")
        else:
            digest.update(len(value).to_bytes(4, "big") + value)
    return digest.hexdigest()


# The names of the headers ``dlq_headers`` writes.
_FORMAT = HEADER_PREFIX + "format"
_VERSION = HEADER_PREFIX + "envelope.version"
_TOPIC = HEADER_PREFIX + "source.topic"
_PARTITION = HEADER_PREFIX + "source.partition"
_OFFSET = HEADER_PREFIX + "source.offset"
_CONTRACT = HEADER_PREFIX + "contract"
_CONTRACT_VERSION = HEADER_PREFIX + "contract.version"
_KIND = HEADER_PREFIX + "violation.kind"
_ROUTE = HEADER_PREFIX + "route"
_REPLAYS = HEADER_PREFIX + "replay.count"
_SCHEMA_ID = HEADER_PREFIX + "schema.id"
_SCHEMA_VERSION = HEADER_PREFIX + "schema.version"
_VERSION_VALUE = str(ENVELOPE_VERSION).encode()


def dlq_headers(
    record: SourceRecord, violations: Sequence[Violation], context: EnvelopeContext, form: DlqForm
) -> Headers:
    """The ``sv.dlq.*`` headers both forms carry (the headers form adds more).

    Built once per DLQ record, so written out rather than through a mapping: in a vendor
    incident every record of a batch takes this path.
    """
    headers: Headers = [
        (_FORMAT, form.encode()),
        (_VERSION, _VERSION_VALUE),
        (_TOPIC, record.topic.encode()),
        (_PARTITION, str(record.partition).encode()),
        (_OFFSET, str(record.offset).encode()),
        (_CONTRACT, context.contract_name.encode()),
        (_CONTRACT_VERSION, context.contract_version.encode()),
        (_KIND, str(violations[0].kind).encode() if violations else b""),
        (_ROUTE, context.route.encode()),
        (_REPLAYS, str(context.replay_count).encode()),
    ]
    if context.schema_id is not None:  # a registry-format record's writer schema
        headers.append((_SCHEMA_ID, str(context.schema_id).encode()))
        if context.schema_version is not None:
            headers.append((_SCHEMA_VERSION, str(context.schema_version).encode()))
    return headers


#: Written by a replay on every record it sends: how often that record has been replayed
#: (sent on or requeued), this time included.
REPLAY_COUNT_HEADER = "sv.replay.count"


def replayed_count(headers: Sequence[tuple[str, bytes | None]]) -> int:
    """The record's last ``sv.replay.count`` header as a number (0 when absent or invalid)."""
    for name, value in reversed(headers):
        if name == REPLAY_COUNT_HEADER:
            if value is not None and value.isdigit() and len(value) <= 9:
                return int(value)
            return 0
    return 0
