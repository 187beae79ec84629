"""Replay: re-validate quarantined DLQ records and send the fixed ones on.

``selection`` and ``planner`` are pure (which records, and what becomes of each);
``runner`` reads the DLQ range and produces; ``report`` summarises a run.
"""
