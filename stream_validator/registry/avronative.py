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
from itertools import repeat
from operator import itemgetter
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

# SourceRecord's fields read in C, and a NamedTuple built without its Python __new__.
_value = itemgetter(SourceRecord._fields.index("value"))
_headers = itemgetter(SourceRecord._fields.index("headers"))
_new_tuple = tuple.__new__


class NativeAvro:
    """The native reading of one Avro route (its contract and payload limit)."""

    __slots__ = ("_contract", "_judged", "_last", "_limit", "_plans", "_refused", "refusals")

    def __init__(self, contract: Callable[[], SchemaContract], max_payload_bytes: int) -> None:
        """``contract``: the route's contract now (a reload may change it, and with it which
        timestamps ``avroplan`` admits: the plans are compiled anew then)."""
        self._contract = contract
        self._judged: SchemaContract | None = None
        self._refused: frozenset[str] = frozenset()
        self._limit = max_payload_bytes
        #: The framing prefix and plan last used: tried first on the next batch.
        self._last: tuple[bytes, Any] | None = None
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
                self._last = None
                self._refused = refused
            self._judged = contract
        if not records:
            return []
        last = self._last
        if last is None or any(map(_headers, records)):
            out: list[DecodeResult | None] = [None] * len(records)
            self._general(records, range(len(records)), out, python, parsed, versioned)
            return out
        # The common batch: every value under the writer schema of the last batch, read in
        # one native call; what it declines takes the general way.
        prefix, plan = last
        texts, declined = plan.transcode(list(map(_value, records)), prefix, self._limit)
        topic = records[0].topic
        ref = versioned(SchemaRef(int.from_bytes(prefix[1:], "big")), topic)
        out = list(map(_new_tuple, repeat(Transcoded), zip(texts, repeat(ref))))
        if declined or any(record.topic != topic for record in records):
            others = [i for i, r in enumerate(records) if texts[i] is None or r.topic != topic]
            self._general(records, others, out, python, parsed, versioned)
        return out

    def _general(
        self,
        records: Sequence[SourceRecord],
        indices: Sequence[int],
        out: list[DecodeResult | None],
        python: Callable[[SourceRecord], DecodeResult | None],
        parsed: Callable[[int], Any],
        versioned: Callable[[SchemaRef, str], SchemaRef],
    ) -> None:
        """``out[i]`` for each of ``indices``: grouped by framing prefix, each group read in
        one native call where a plan reads it, the rest by ``python``."""
        plans = self._plans
        groups: dict[bytes, list[int]] = {}
        for index in indices:
            record = records[index]
            value = record.value
            if (
                value is None
                or len(value) <= PREFIX
                or value[0] != MAGIC_ID
                or any(name == VALUE_SCHEMA_ID_HEADER for name, _ in record.headers)
            ):
                out[index] = python(record)
                continue
            prefix = value[:PREFIX]
            group = groups.get(prefix)
            if group is not None:
                group.append(index)
                continue
            schema_id = int.from_bytes(prefix[1:], "big")
            if schema_id not in plans:
                out[index] = python(record)  # fetches the schema, as before
                writer = parsed(schema_id)
                if writer is not None:
                    self.learn(schema_id, writer)
            elif plans[schema_id] is None:
                out[index] = python(record)
            else:
                groups[prefix] = [index]
        for prefix, members in groups.items():
            schema_id = int.from_bytes(prefix[1:], "big")
            plan = plans[schema_id]
            self._last = (prefix, plan)
            texts, _ = plan.transcode([records[i].value for i in members], prefix, self._limit)
            refs: dict[str, SchemaRef] = {}  # by topic: the version is the subject's
            for index, text in zip(members, texts, strict=True):
                record = records[index]
                if text is None:
                    out[index] = python(record)
                    continue
                ref = refs.get(record.topic)
                if ref is None:
                    ref = refs[record.topic] = versioned(SchemaRef(schema_id), record.topic)
                out[index] = Transcoded(text, ref)
