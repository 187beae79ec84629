"""JSON logs: one object per line, extra fields kept, secrets scrubbed."""

from __future__ import annotations

import io
import json

from stream_validator.logs import configure_logging


def test_json_lines_with_extra_fields_and_scrubbing() -> None:
    """A log call becomes one JSON line with its extra fields; secret values become ***."""
    stream = io.StringIO()
    logger = configure_logging("INFO", secrets=["hunter2"], stream=stream)
    logger.info("connect failed", extra={"error": "auth with hunter2 refused", "route": "r"})
    logger.debug("hidden")
    (line,) = stream.getvalue().splitlines()
    entry = json.loads(line)
    assert entry["msg"] == "connect failed" and entry["route"] == "r"
    assert entry["error"] == "auth with *** refused"
    assert entry["level"] == "INFO" and entry["ts"].endswith("Z")
