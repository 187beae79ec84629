"""An Avro route's values read by the native core: the JSON text of each datum, per writer
schema compiled once (``avroplan``), with fastavro deciding every value the core cannot.

``NativeAvro.decode_batch`` gives what ``RecordDecoder.decode_batch`` gives, with a
``Transcoded`` (the datum's JSON text) in place of a ``Decoded`` record where the native
core read the value; the JSON text is judged by the native verdict core, as a JSON route's
payload is. The rest goes through the Python decoder, whose results are final: a value
framed by a header or a GUID, a schema id seen for the first time (its decode fetches and
parses the writer schema, as before), a schema ``avroplan`` refuses (decided once per id),
and each value the core declines (corrupt or truncated bytes, NaN or infinite floats, a
timestamp Python cannot hold, a JSON text past the route's ``max_payload_bytes``), so
undecodable reasons and the values a contract sees are exactly fastavro's.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, Final

from stream_validator import _native
from stream_validator.contracts.model import SchemaContract
from stream_validator.records import SourceRecord
from stream_validator.registry.avroplan import UnsupportedSchema, plan_program, timestamp_fields
from stream_validator.registry.outcome import DecodeResult, SchemaRef, Transcoded
from stream_validator.registry.wire import MAGIC_ID, VALUE_SCHEMA_ID_HEADER

log = logging.getLogger(__name__)

#: The Confluent prefix: magic byte 0 and the schema id as 4 bytes.
PREFIX: Final = 5


class NativeAvro:
    """The native reading of one Avro route (its contract and payload limit)."""

    __slots__ = ("_contract", "_judged", "_limit", "_plans", "_refused", "refusals")

    def __init__(self, contract: Callable[[], SchemaContract], max_payload_bytes: int) -> None:
        """``contract``: the route's contract now (a reload may change it, and with it which
        timestamps ``avroplan`` admits: the plans are compiled anew then)."""
        self._contract = contract
        self._judged: SchemaContract | None = None
        self._refused: frozenset[str] = frozenset()
        self._limit = max_payload_bytes
        #: schema id -> its plan, or None where fastavro reads that schema.
        self._plans: dict[int, Any] = {}
        #: schema id -> why the native core does not read it (for logs and tests).
        self.refusals: dict[int, str] = {}

    def knows(self, schema_id: int) -> bool:
        """True once the writer schema ``schema_id`` was judged (``learn``)."""
        return schema_id in self._plans

    def reads(self, schema_id: int) -> bool:
        """True when the native core reads values of writer schema ``schema_id``."""
        return self._plans.get(schema_id) is not None

    def learn(self, schema_id: int, parsed: Any) -> None:
        """Compile the fastavro-parsed writer schema ``schema_id``, or note why not."""
        try:
            self._plans[schema_id] = _native.AvroPlan(plan_program(parsed, self._refused))
        except (UnsupportedSchema, ValueError, TypeError, KeyError) as exc:
            self._plans[schema_id] = None
            self.refusals[schema_id] = str(exc)
            log.info("Avro schema id %d is decoded by fastavro, not natively: %s", schema_id, exc)

    def decode_batch(
        self,
        records: Sequence[SourceRecord],
        python: Callable[[SourceRecord], DecodeResult | None],
        parsed: Callable[[int], Any],
        versioned: Callable[[SchemaRef, str], SchemaRef],
    ) -> list[DecodeResult | None]:
        """Each record's value decoded, in order: natively where a plan reads it, else by
        ``python`` (the Python decoder's ``decode``). ``parsed``: the writer schema of an
        id that ``python`` fetched (None when it did not); ``versioned``: a ref with its
        version under the record's subject."""
        contract = self._contract()
        if contract is not self._judged:
            refused = timestamp_fields(contract)
            if refused != self._refused or self._judged is None:
                self._plans.clear()
                self.refusals.clear()
                self._refused = refused
            self._judged = contract
        out: list[DecodeResult | None] = [None] * len(records)
        groups: dict[int, list[int]] = {}
        for index, record in enumerate(records):
            value = record.value
            if (
                value is None
                or len(value) <= PREFIX
                or value[0] != MAGIC_ID
                or any(name == VALUE_SCHEMA_ID_HEADER for name, _ in record.headers)
            ):
                out[index] = python(record)
                continue
            schema_id = int.from_bytes(value[1:PREFIX], "big")
            if schema_id not in self._plans:
                out[index] = python(record)  # fetches the schema, as before
                writer = parsed(schema_id)
                if writer is not None:
                    self.learn(schema_id, writer)
                continue
            if self._plans[schema_id] is None:
                out[index] = python(record)
                continue
            groups.setdefault(schema_id, []).append(index)
        for schema_id, indices in groups.items():
            texts = self._plans[schema_id].transcode(
                [records[i].value for i in indices], PREFIX, self._limit
            )
            ref = SchemaRef(schema_id)
            for index, text in zip(indices, texts, strict=True):
                record = records[index]
                if text is None:
                    out[index] = python(record)
                else:
                    out[index] = Transcoded(text, versioned(ref, record.topic))
        return out
