"""The thin Kafka adapter: the only runtime package that imports ``confluent_kafka``.

``clients`` builds every client from a service config, ``topics`` checks and creates
topics, ``transactions`` runs transactional calls with deadlines (``deadline``),
``messages`` turns consumed messages into ``SourceRecord`` values and ``reader`` reads a
topic range (the DLQ).
"""
