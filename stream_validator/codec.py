"""The one place that decodes and encodes JSON (orjson, and msgspec for typed decoding).

orjson rejects invalid UTF-8, NaN/Infinity literals, numbers that overflow a
double and nesting deeper than 1024 (from 3.9.15), which is exactly what the
verifier wants to report as ``undecodable``. msgspec decodes straight into the
verifier's generated Structs (its fast path); it refuses the same inputs.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import msgspec
import orjson

from stream_validator.errors import DecodeError

PAYLOAD_ENCODING_UTF8 = "utf-8"
PAYLOAD_ENCODING_BASE64 = "base64"

JSONDecodeError = orjson.JSONDecodeError
#: The raw decoder for the verifier's hot path (raises JSONDecodeError); everything
#: else should call decode_json.
loads_raw = orjson.loads
#: Raised by a typed decoder for malformed JSON and for values that do not fit the type.
NativeDecodeError = msgspec.DecodeError


def typed_decoder(tp: Any) -> Callable[[bytes], Any]:
    """A decoder of JSON straight into ``tp`` (e.g. a msgspec Struct), for the fast path."""
    decode: Callable[[bytes], Any] = msgspec.json.Decoder(tp).decode
    return decode


def decode_json(data: bytes | bytearray | memoryview | str) -> Any:
    """Decode one JSON value; raise DecodeError with orjson's reason."""
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise DecodeError(str(exc)) from exc


def encode_json(value: Any, *, sort_keys: bool = False) -> bytes:
    """Encode a value as compact UTF-8 JSON; non-JSON types are stringified."""
    option = orjson.OPT_SORT_KEYS if sort_keys else 0
    return orjson.dumps(value, default=_fallback, option=option)


def _fallback(value: object) -> object:
    if isinstance(value, bytes | bytearray | memoryview):
        return payload_to_text(bytes(value))[0]
    if isinstance(value, set | frozenset):
        return sorted(value, key=repr)
    return repr(value)


def payload_to_text(payload: bytes) -> tuple[str, str]:
    """Return (text, encoding): the payload as UTF-8 text when it is, else base64."""
    try:
        return payload.decode("utf-8"), PAYLOAD_ENCODING_UTF8
    except UnicodeDecodeError:
        return base64.b64encode(payload).decode("ascii"), PAYLOAD_ENCODING_BASE64


def text_to_payload(text: str, encoding: str) -> bytes:
    """Invert payload_to_text; raise DecodeError on an unknown encoding or bad base64."""
    if encoding == PAYLOAD_ENCODING_UTF8:
        return text.encode("utf-8")
    if encoding == PAYLOAD_ENCODING_BASE64:
        try:
            return base64.b64decode(text.encode("ascii"), validate=True)
        except (ValueError, UnicodeEncodeError) as exc:
            raise DecodeError(f"invalid base64 payload: {exc}") from exc
    raise DecodeError(f"unknown payload encoding {encoding!r}")
