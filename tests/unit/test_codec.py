"""The JSON chokepoint: decoding errors and payload text round trips."""

from __future__ import annotations

import pytest

from stream_validator import DecodeError
from stream_validator.codec import decode_json, encode_json, payload_to_text, text_to_payload


def test_decode_error_is_a_value_error() -> None:
    """Bad JSON raises DecodeError (a ValueError) carrying the decoder's reason."""
    with pytest.raises(ValueError, match=r"unexpected|invalid"):
        decode_json(b"{nope")
    with pytest.raises(DecodeError):
        decode_json(b"NaN")


@pytest.mark.parametrize("raw", [b"plain text", "caf\u00e9".encode(), b"\xff\x00\x01", b""])
def test_payload_text_round_trip(raw: bytes) -> None:
    """UTF-8 payloads stay text, others become base64, and both decode back exactly."""
    text, encoding = payload_to_text(raw)
    assert encoding == ("base64" if raw == b"\xff\x00\x01" else "utf-8")
    assert text_to_payload(text, encoding) == raw


def test_text_to_payload_rejects_bad_input() -> None:
    """Unknown encodings and broken base64 are DecodeErrors."""
    with pytest.raises(DecodeError):
        text_to_payload("abc", "rot13")
    with pytest.raises(DecodeError):
        text_to_payload("@@@", "base64")


def test_encode_json_handles_bytes_and_sets() -> None:
    """encode_json stringifies bytes and sorts sets instead of failing."""
    assert encode_json({"b": b"hi", "s": {"y", "x"}}, sort_keys=True) == b'{"b":"hi","s":["x","y"]}'
