"""Samples as payloads: the lines of a JSON-lines file (bounded in length), and each payload
folded into the observations (``observe``) or counted as no record, with its reason.

The reasons a payload is no record are a closed set (``Skip``): they name the line's
problem, never its content.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from enum import StrEnum
from typing import IO

from stream_validator.codec import decode_json
from stream_validator.errors import DecodeError
from stream_validator.lifecycle.observe import SampleObservations
from stream_validator.verify.dupkeys import duplicate_keys, no_duplicates_possible

#: ``--max-payload-bytes``' default, as ``validate``'s: a longer line is no record.
DEFAULT_MAX_LINE_BYTES = 1_048_576
_READ = 1 << 16


class Skip(StrEnum):
    """Why a payload is no record (the verifier would quarantine it under any contract)."""

    BLANK = "blank line"
    TOMBSTONE = "null value (a Kafka tombstone)"
    OVERSIZED = "longer than the payload limit"
    UNDECODABLE = "not one JSON value (undecodable)"
    NOT_AN_OBJECT = "JSON but not an object"
    DUPLICATE_KEY = "an object with a key written twice"


def read_lines(stream: IO[bytes], limit: int) -> Iterator[bytes | None]:
    """The lines of a binary stream without their endings (a trailing CR dropped); a line
    longer than ``limit`` bytes is None, and is never held whole."""
    while True:
        line = stream.readline(limit + 2)  # the line, its \r\n, and one byte to tell
        if not line:
            return
        if line.endswith(b"\n"):
            body = line[:-1]
            if body.endswith(b"\r"):
                body = body[:-1]
            yield body if len(body) <= limit else None
            continue
        if len(line) <= limit:  # the last line, without an ending
            yield line
            return
        while line and not line.endswith(b"\n"):  # skip the rest of the long line
            line = stream.readline(_READ)
        yield None


def fold(sample: SampleObservations, payloads: Iterable[bytes | None], first: int = 1) -> int:
    """Fold payloads in (the ``read_lines`` None: oversized; numbered from ``first`` in
    the skip report); return the next number."""
    number = first
    for payload in payloads:
        reason = _problem(sample, payload)
        if reason is not None:
            sample.skip(reason, number)
        number += 1
    return number


def fold_values(sample: SampleObservations, values: Iterable[bytes | None], first: int = 1) -> int:
    """Fold Kafka values in: None is a tombstone there, not an oversized line."""
    number = first
    for value in values:
        if value is None:
            sample.skip(Skip.TOMBSTONE, number)
        else:
            reason = _problem(sample, value)
            if reason is not None:
                sample.skip(reason, number)
        number += 1
    return number


def _problem(sample: SampleObservations, payload: bytes | None) -> Skip | None:
    """Add the payload's record; or say why it is none."""
    if payload is None:
        return Skip.OVERSIZED
    if not payload or payload.isspace():
        return Skip.BLANK
    try:
        record = decode_json(payload)
    except DecodeError:
        return Skip.UNDECODABLE
    if not isinstance(record, dict):
        return Skip.NOT_AN_OBJECT
    if not no_duplicates_possible(payload, len(record)) and duplicate_keys(payload):
        return Skip.DUPLICATE_KEY
    sample.add(record)
    return None
