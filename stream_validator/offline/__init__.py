"""Offline validation of JSON-lines files against a contract: no Kafka involved.

``runner.validate_jsonl`` runs it; ``summary`` holds the totals (pure), ``filestate`` the
per-symbol state over a file, ``lines`` the reading of the input in blocks. Its DLQ line
format is ``dlq.jsonlines``.
"""

from stream_validator.offline.runner import open_input, validate_jsonl
from stream_validator.offline.summary import FileSummary, render_summary

__all__ = ["FileSummary", "open_input", "render_summary", "validate_jsonl"]
