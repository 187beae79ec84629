"""What decoding one registry-format value gave: a record, or why it is undecodable. PURE."""

from __future__ import annotations

from typing import Any, NamedTuple


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


class Undecodable(NamedTuple):
    """A value that cannot be decoded (no magic byte, unknown schema id, bytes that do not
    fit the schema): it goes to the DLQ as ``undecodable`` with ``reason``."""

    reason: str
    schema: SchemaRef | None


DecodeResult = Decoded | Undecodable
