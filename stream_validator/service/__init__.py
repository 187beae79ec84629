"""The streaming service: consume, validate per route, produce to clean or DLQ, commit.

``loop`` runs the consume loop, ``pipeline`` (pure) turns a micro-batch into planned
outputs, ``app`` wires the loop to metrics (``metrics``), the health server (``health``)
and logging (``logs``); ``state`` is what ``/status`` shows.
"""
