"""An in-memory Kafka broker and its clients, for unit tests (see ``broker``)."""

from stream_validator.kafka.fake.admin import FakeAdmin
from stream_validator.kafka.fake.broker import FakeBroker, Faults, abortable, fatal
from stream_validator.kafka.fake.consumer import FakeConsumer, FakeGroupMetadata
from stream_validator.kafka.fake.producer import FakeProducer

__all__ = [
    "FakeAdmin",
    "FakeBroker",
    "FakeConsumer",
    "FakeGroupMetadata",
    "FakeProducer",
    "Faults",
    "abortable",
    "fatal",
]
