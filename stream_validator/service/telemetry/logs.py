"""Structured JSON logging to stderr, with secret values scrubbed from every line.

Secrets are removed from every string (keys and values, at any depth) BEFORE JSON
encoding: encoding escapes a ``"`` or ``\\`` inside a password, after which the raw
value no longer appears in the line. Every entry is bounded too (strings, lists and
mappings are cut, saying how much was left out), so no payload-derived value can
produce a huge line.
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Mapping
from itertools import islice
from typing import IO, Any

from stream_validator.codec import encode_json, payload_to_text

LOGGER_NAME = "stream_validator"
MAX_STRING_CHARS = 4096
MAX_TRACEBACK_CHARS = 32768
MAX_ITEMS = 200
_MAX_DEPTH = 8
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
        clean = self._clean(entry, 0)
        if record.exc_info:
            text = self._scrub(self.formatException(record.exc_info))
            clean["exc"] = _cut(text, MAX_TRACEBACK_CHARS)
        return encode_json(clean).decode("utf-8")

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def _clean(self, value: object, depth: int) -> Any:
        """A JSON-ready, bounded copy of a value with every secret replaced by '***'."""
        if value is None or isinstance(value, bool | int | float):
            return value
        if isinstance(value, str):
            return _cut(self._scrub(value), MAX_STRING_CHARS)
        if depth >= _MAX_DEPTH:
            return "..."
        if isinstance(value, Mapping):
            out = {
                self._clean(str(k), depth + 1): self._clean(v, depth + 1)
                for k, v in islice(value.items(), MAX_ITEMS)
            }
            if len(value) > MAX_ITEMS:
                out["..."] = f"{len(value) - MAX_ITEMS} more entries"
            return out
        if isinstance(value, list | tuple | set | frozenset):
            items = sorted(value, key=repr) if isinstance(value, set | frozenset) else value
            kept = [self._clean(v, depth + 1) for v in islice(items, MAX_ITEMS)]
            if len(value) > MAX_ITEMS:
                kept.append(f"... {len(value) - MAX_ITEMS} more items")
            return kept
        if isinstance(value, bytes | bytearray | memoryview):
            return self._clean(payload_to_text(bytes(value))[0], depth)
        return self._clean(repr(value), depth)


def _cut(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text) - limit} more characters)"


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
