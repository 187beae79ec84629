"""Replay: re-validate quarantined DLQ records and send the fixed ones on.

``selection`` and ``planner`` are pure (which records, and what becomes of each);
``runner`` reads the DLQ range and produces, chunk by chunk, through the Kafka adapter
(``clients`` builds its clients, ``positions`` finds where to read); ``report`` summarises
a run.
"""
