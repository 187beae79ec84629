"""What decoding one registry-format value gave: a record, or why it is undecodable. PURE."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from stream_validator.verify import Violation, ViolationKind
from stream_validator.verify.malformed import tombstone

if TYPE_CHECKING:
    from stream_validator.verify.batch import BatchAccumulator
    from stream_validator.verify.report import QuarantinedRecord


class SchemaRef(NamedTuple):
    """The writer schema of a value: its registry id (or GUID) and, when the registry lists
    it under the value's subject, its version there."""

    id: int | None
    guid: str | None = None
    version: int | None = None

    def as_dict(self) -> dict[str, Any]:
        """The envelope's ``schema`` object (only what is known)."""
        out: dict[str, Any] = {"id": self.id}
        if self.guid is not None:
            out["guid"] = self.guid
        out["version"] = self.version
        return out


class Decoded(NamedTuple):
    """A value decoded under its writer schema: the record the contract checks."""

    record: dict[str, Any]
    schema: SchemaRef


class Transcoded(NamedTuple):
    """An Avro value the native core read (``registry.avronative``): its datum as the JSON
    text whose orjson reading is the record fastavro gives (timestamps as ISO 8601 text,
    admitted only where the contract judges both alike: ``registry.avroplan``)."""

    text: bytes
    schema: SchemaRef


class Undecodable(NamedTuple):
    """A value that cannot be decoded (no magic byte, unknown schema id, bytes that do not
    fit the schema): it goes to the DLQ as ``undecodable`` with ``reason``."""

    reason: str
    schema: SchemaRef | None


DecodeResult = Decoded | Transcoded | Undecodable


def judge_decoded(
    batch: BatchAccumulator, result: DecodeResult | None, value: bytes | None
) -> QuarantinedRecord | None:
    """Add one decoded value to a verifier's batch, as the service and replay both judge it:
    a record through the contract's checks, an undecodable one quarantined as
    ``undecodable`` with its reason (``value``, the original bytes, its evidence), a
    tombstone (None) as with JSON. Its QuarantinedRecord, or None when valid."""
    if result is None:
        return batch.add_rejected(None, tombstone())
    if isinstance(result, Decoded):
        return batch.add_record(result.record)
    if isinstance(result, Transcoded):
        return batch.add_payload(result.text)
    return batch.add_rejected(value, Violation(None, ViolationKind.UNDECODABLE, result.reason))
