"""The local Apache Kafka broker (KRaft, loopback only) for development, tests and CI.

Jars come from Maven Central (``jars``); ``settings`` writes the broker config,
``process`` starts and watches it, ``broker.LocalKafkaBroker`` is the handle. Never
imported by the service.
"""
