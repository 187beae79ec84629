"""Simulated messages written in the Schema Registry wire format (``simulate --format avro``).

Wraps a ``Simulator``: each message's JSON record is written as Avro under the contract's
schema (``avroschema``), registered in the registry under ``<topic>-value`` by
confluent-kafka's ``AvroSerializer``. A record that cannot be written (garbage bytes, a
tombstone, a string in a number field) goes out as it came, unframed, as a producer that
bypasses its serializer would send it: the service quarantines it as ``undecodable``.
"""

from __future__ import annotations

from typing import Any

from stream_validator.codec import decode_json
from stream_validator.contracts.model import SchemaContract
from stream_validator.errors import DecodeError
from stream_validator.registry.encoder import avro_writer
from stream_validator.sim.avroschema import avro_record, avro_schema
from stream_validator.sim.producer import MessageSource
from stream_validator.sim.simulator import SimMessage


class AvroFramedSimulator:
    """A Simulator whose messages are Avro in the wire format where they can be."""

    def __init__(
        self, sim: MessageSource, contract: SchemaContract, client: Any, topic: str
    ) -> None:
        """``client``: a confluent-kafka SchemaRegistryClient (``registry.client``)."""
        self._sim = sim
        self._contract = contract
        self._write = avro_writer(client, avro_schema(contract), topic)
        self.unframed = 0

    def next(self, elapsed: float) -> SimMessage:
        """The simulator's next message, its value framed Avro when it can be written."""
        message = self._sim.next(elapsed)
        framed = self._frame(message.value)
        if framed is None:
            self.unframed += 1
            return message
        return message._replace(value=framed)

    def _frame(self, value: bytes | None) -> bytes | None:
        if value is None:
            return None
        try:
            record: Any = avro_record(self._contract, decode_json(value))
        except DecodeError:
            return None
        if record is None:
            return None
        try:
            return self._write(record)
        except (ValueError, TypeError, OverflowError):  # not writable under the schema
            return None
