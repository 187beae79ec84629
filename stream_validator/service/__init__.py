"""The streaming service: consume, validate per route, produce to clean or DLQ, commit.

``loop`` runs consume -> plan -> submit -> report; ``pipeline`` (pure) turns a micro-batch
into planned outputs; the committer (``commit``: at-least-once, ``transactional``:
exactly-once, built by ``setup``) delivers them through ``outputs`` and commits, returning an
``Outcome`` that ``reporting`` turns into batch events, ``/status`` counters and metrics
hooks. ``app`` wires the loop to metrics (``metrics``), the health server (``health``) and
logging (``logs``); ``state`` is what ``/status`` shows.
"""
