"""Structured JSON logging to stderr, with secret values scrubbed from every line."""

from __future__ import annotations

import logging
import sys
import time
from typing import IO, Any

from stream_validator.codec import encode_json

LOGGER_NAME = "stream_validator"
_RESERVED = frozenset(vars(logging.LogRecord("", 0, "", 0, "", (), None)).keys()) | {
    "message",
    "asctime",
}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg and any ``extra`` fields."""

    def __init__(self, secrets: list[str] | None = None) -> None:
        super().__init__()
        self._secrets = sorted((s for s in secrets or [] if s), key=len, reverse=True)

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _RESERVED and not key.startswith("_"):
                entry[key] = value
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        line = encode_json(entry).decode("utf-8")
        for secret in self._secrets:
            line = line.replace(secret, "***")
        return line


def configure_logging(
    level: str = "INFO", *, secrets: list[str] | None = None, stream: IO[str] | None = None
) -> logging.Logger:
    """Route the package's logs to one JSON handler on stderr (or the given stream)."""
    logger = logging.getLogger(LOGGER_NAME)
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter(secrets))
    logger.addHandler(handler)
    logger.setLevel(level.upper())
    logger.propagate = False
    return logger
