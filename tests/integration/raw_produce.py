"""Produce records byte for byte over the Kafka protocol, bypassing client-side encoding.

confluent-kafka turns header names into text before sending them, so it cannot produce a
header name that is not valid UTF-8; a vendor's client can. This speaks ProduceRequest v3
with one RecordBatch v2 to the partition leader, which is all such a test needs.
"""

from __future__ import annotations

import socket
import struct
import time

from confluent_kafka.admin import AdminClient

RawRecord = tuple[bytes | None, bytes | None, list[tuple[bytes, bytes | None]]]


def _crc32c_table() -> list[int]:
    table = []
    for n in range(256):
        crc = n
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc = _TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _varint(value: int) -> bytes:
    value = (value << 1) ^ (value >> 63)  # zigzag
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _field(data: bytes | None) -> bytes:
    return _varint(-1) if data is None else _varint(len(data)) + data


def record_batch(records: list[RawRecord], timestamp_ms: int) -> bytes:
    """One uncompressed RecordBatch v2 (no producer id) holding the records."""
    body = b""
    for delta, (key, value, headers) in enumerate(records):
        record = b"\x00" + _varint(0) + _varint(delta) + _field(key) + _field(value)
        record += _varint(len(headers))
        for name, header_value in headers:
            record += _varint(len(name)) + name + _field(header_value)
        body += _varint(len(record)) + record
    after_crc = struct.pack(
        ">hiqqqhii", 0, len(records) - 1, timestamp_ms, timestamp_ms, -1, -1, -1, len(records)
    )
    after_crc += body
    crc = crc32c(after_crc)
    after_length = struct.pack(">ibI", -1, 2, crc) + after_crc
    return struct.pack(">qi", 0, len(after_length)) + after_length


def produce_raw(bootstrap: str, topic: str, records: list[RawRecord], partition: int = 0) -> None:
    """Send the records to one partition with acks=all; raise if the broker refuses them."""
    metadata = AdminClient({"bootstrap.servers": bootstrap}).list_topics(topic, timeout=10)
    leader = metadata.topics[topic].partitions[partition].leader
    broker = metadata.brokers[leader]
    batch = record_batch(records, int(time.time() * 1000))
    name = topic.encode()
    body = struct.pack(">hhih", 0, 3, 1, 3) + b"raw"  # Produce v3, correlation 1, client "raw"
    body += struct.pack(">hhii", -1, -1, 30_000, 1)  # no transactional id, acks=all, 1 topic
    body += struct.pack(">h", len(name)) + name + struct.pack(">iii", 1, partition, len(batch))
    body += batch
    with socket.create_connection((broker.host, broker.port), timeout=30) as sock:
        sock.sendall(struct.pack(">i", len(body)) + body)
        size = struct.unpack(">i", _read(sock, 4))[0]
        reply = _read(sock, size)
    # correlation id, topic count, topic name, partition count, partition, error code
    name_length = struct.unpack(">h", reply[8:10])[0]
    at = 10 + name_length + 4 + 4
    error = struct.unpack(">h", reply[at : at + 2])[0]
    if error:
        raise RuntimeError(f"broker refused the raw produce: error code {error}")


def _read(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("broker closed the connection")
        data += chunk
    return data
