"""Everything that talks to Kafka: the only package that imports ``confluent_kafka``.

``devjars`` and ``devbroker`` assemble and run a real single-node Apache Kafka broker
(KRaft, loopback only) from Maven Central jars, for development, tests and CI without Docker.
"""
