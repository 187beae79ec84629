"""The thin Kafka adapter: the only package besides the dev broker (``devbroker``) that imports
``confluent_kafka``.

``ports`` is its interface (consumer, producer with transactions, admin; plain values and
``KafkaClientError`` only); ``confluent`` implements it over librdkafka and ``fake`` in
memory for unit tests. ``clients`` is the service's and replay's one client factory, ``io``
the one produce loop (backpressure and per-record delivery outcomes), ``transactions`` the one
transaction helper (deadlines via ``deadline``), ``topics`` creates topics, ``messages`` turns
consumed messages into ``SourceRecord`` values and ``reader`` reads a topic range (the DLQ).
"""
