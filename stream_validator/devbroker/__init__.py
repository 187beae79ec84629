"""The local Apache Kafka broker (KRaft, loopback only) for development, tests and CI.

Jars come from Maven Central (``jars``); ``settings`` writes the broker config and its
command line, ``process`` probes Java, the process and the machine, and
``broker.LocalKafkaBroker`` starts, watches and stops it. Never
imported by the service.
"""
