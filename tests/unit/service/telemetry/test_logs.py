"""JSON logs: one object per line, extra fields kept, secrets scrubbed."""

from __future__ import annotations

import io
import json

from stream_validator.service.telemetry.logs import configure_logging


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


def test_secrets_with_quotes_and_backslashes_are_scrubbed() -> None:
    """A secret that JSON escapes (\" or \\) is removed before encoding, at any depth."""
    stream = io.StringIO()
    secret = 'p"a\\ss'
    logger = configure_logging("INFO", secrets=[secret], stream=stream)
    logger.info("auth failed", extra={"error": f"bad {secret}", "nested": {"k": [secret]}})
    line = stream.getvalue()
    assert json.loads(line)["error"] == "bad ***" and json.loads(line)["nested"] == {"k": ["***"]}
    assert json.dumps(secret)[1:-1] not in line


def test_a_log_line_stays_small_with_90000_unique_keys() -> None:
    """Payload-derived collections in a log entry are cut: 90,000 names give a small line."""
    stream = io.StringIO()
    logger = configure_logging("INFO", stream=stream)
    names = {f"field_{i:05d}_{'x' * 200}" for i in range(90_000)}
    logger.info("batch", extra={"unknown_fields": names, "by_field": dict.fromkeys(names, 1)})
    line = stream.getvalue()
    assert len(line) < 200_000
    entry = json.loads(line)
    assert entry["unknown_fields"][-1] == "... 89800 more items"
    assert entry["by_field"]["..."] == "89800 more entries"
