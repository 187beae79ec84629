"""Records in the Schema Registry wire format: Avro, Protobuf and JSON Schema values decoded
into plain records for the contract checks.

``wire`` reads where a value's schema id is (the 5-byte prefix, or a ``__value_schema_id``
header) and ``outcome`` holds what decoding a value gave; both are pure, so the service's
planner may read them. ``client`` builds confluent-kafka's ``SchemaRegistryClient`` from the
``schema_registry`` config section; ``decoder`` decodes a route's values through
confluent-kafka's own deserializers (``protobuf``: from the registered schema, no generated
class), telling a registry that cannot answer (``RegistryUnavailableError``: the batch waits)
from a value that cannot be decoded (``undecodable``: the DLQ). The records, the conversions
and what a contract cannot express are documented in docs/service/formats.md.
"""
