"""Every DLQ record fits the message limit, and every payload up to max_payload_bytes stays
replayable byte for byte (envelope form, else headers form); only larger ones are cut."""

from __future__ import annotations

import hashlib
import json
import os

from hypothesis import given
from hypothesis import strategies as st

from stream_validator.dlq.budget import record_fits, record_size
from stream_validator.records import OutputRecord, SourceRecord
from stream_validator.replay.planner import Envelope, Outcome, ReplayPlanner
from stream_validator.replay.selection import Selection
from stream_validator.service.plan.planner import RouteProcessor
from tests.support.ticks import tick_processor

LIMIT = 1_048_576
MAX_PAYLOAD = LIMIT - 48_576


def processor() -> RouteProcessor:
    return tick_processor(max_message_bytes=LIMIT, max_payload_bytes=MAX_PAYLOAD)


def quarantine(
    value: bytes | None,
    key: bytes | None = b"k",
    headers: list[tuple[str, bytes | None]] | None = None,
) -> tuple[SourceRecord, OutputRecord]:
    """Run one record through the route; it must end in the DLQ."""
    source = SourceRecord("src", 3, 77, key, value, headers or [("h", b"1")], 1_700_000_000_000)
    (output,) = processor().plan([source], validated_at="t").outputs
    assert output.kind == "dlq"
    return source, output


def produced_bytes(output: OutputRecord) -> int:
    """What librdkafka checks against message.max.bytes, with 5-byte length varints."""
    headers = sum(len(n.encode()) + len(v or b"") + 10 for n, v in output.headers)
    return len(output.key or b"") + len(output.value or b"") + headers + 5


def replay_view(output: OutputRecord) -> Envelope:
    """What replay reads back from the produced DLQ record (it must be replayable)."""
    dlq = SourceRecord("dlq", 0, 0, output.key, output.value, output.headers, 1)
    planner = ReplayPlanner(Selection(), processor().verifier)
    (decision,) = planner.decide([dlq])
    assert decision.outcome is not Outcome.UNREPLAYABLE, decision.detail
    assert decision.envelope is not None
    return decision.envelope


def assert_recovered(source: SourceRecord, output: OutputRecord) -> None:
    original = replay_view(output).original
    assert original.value == source.value
    assert original.key == source.key
    assert original.headers == source.headers
    assert (original.topic, original.partition, original.offset) == ("src", 3, 77)
    assert original.timestamp_ms == source.timestamp_ms


def test_500_kb_key_fits_and_is_recoverable() -> None:
    """A 500 KB binary key (stored once as the record key) fits and is replayable as it was."""
    source, output = quarantine(b"junk", key=os.urandom(500_000))
    assert produced_bytes(output) <= LIMIT
    assert_recovered(source, output)


def test_key_larger_than_the_limit_is_cut_and_flagged() -> None:
    """A key alone over the limit: the DLQ record still fits, key flagged with length + sha256."""
    key = b"K" * (LIMIT + 10)
    _, output = quarantine(b"junk", key=key)
    assert produced_bytes(output) <= LIMIT
    envelope = json.loads(output.value or b"")
    assert envelope["key_truncated"] is True
    assert envelope["key_length"] == len(key)
    assert envelope["key_sha256"] == hashlib.sha256(key).hexdigest()
    assert key.decode().startswith(envelope["key"])
    assert envelope["payload"] == "junk"


def test_huge_binary_headers_fit_and_are_recoverable() -> None:
    """Headers that base64 past the limit in an envelope are kept byte for byte."""
    headers: list[tuple[str, bytes | None]] = [(f"h{i}", os.urandom(150_000)) for i in range(6)]
    source, output = quarantine(b"junk", headers=headers)
    assert produced_bytes(output) <= LIMIT
    assert_recovered(source, output)


def test_headers_over_the_limit_are_cut_and_flagged() -> None:
    """30,000 headers (1.4 MB) still give a DLQ record within the limit, with their count."""
    headers: list[tuple[str, bytes | None]] = [(f"h{i}", b"v" * 40) for i in range(30_000)]
    _, output = quarantine(b"junk", headers=headers)
    assert produced_bytes(output) <= LIMIT
    envelope = json.loads(output.value or b"")
    assert envelope["headers_truncated"] is True and envelope["headers_count"] == 30_000
    assert envelope["headers"] == [
        [n, v.decode(), "utf-8"] for n, v in headers[: len(envelope["headers"])]
    ]  # type: ignore[union-attr]


def test_escaping_payload_below_max_payload_bytes_is_recoverable() -> None:
    """A payload of control characters (6 bytes each in JSON) is replayable byte for byte."""
    payload = b'{"x":"' + b"\x00" * (MAX_PAYLOAD - 8) + b'"}'
    source, output = quarantine(payload)
    assert produced_bytes(output) <= LIMIT
    assert_recovered(source, output)


def test_binary_payload_below_max_payload_bytes_is_recoverable() -> None:
    """A non-UTF-8 payload (base64 grows it by a third) is replayable byte for byte."""
    payload = os.urandom(MAX_PAYLOAD)
    source, output = quarantine(payload)
    assert produced_bytes(output) <= LIMIT
    assert_recovered(source, output)


def test_payload_above_max_payload_bytes_is_cut_within_the_limit() -> None:
    """Only a payload above max_payload_bytes is truncated, with its length and sha256."""
    payload = b"\x01" * (LIMIT + 1)
    _, output = quarantine(payload)
    assert produced_bytes(output) <= LIMIT
    envelope = json.loads(output.value or b"")
    assert envelope["payload_truncated"] is True
    assert envelope["payload_length"] == len(payload)
    assert envelope["payload_sha256"] == hashlib.sha256(payload).hexdigest()


def test_headers_form_is_marked() -> None:
    """A DLQ record holding the original value says so in sv.dlq.format."""
    _, output = quarantine(os.urandom(MAX_PAYLOAD))
    assert dict(output.headers)["sv.dlq.format"] == b"headers"
    assert json.loads(dict(output.headers)["sv.dlq.violations"] or b"")[0]["kind"] == "undecodable"


def test_tombstone_with_an_oversized_key_keeps_a_null_untruncated_payload() -> None:
    """A tombstone whose key alone is over the limit: key flagged, payload still null."""
    _, output = quarantine(None, key=b"K" * (LIMIT + 10))
    assert produced_bytes(output) <= LIMIT
    envelope = json.loads(output.value or b"")
    assert envelope["payload"] is None and envelope["payload_truncated"] is False
    assert envelope["key_truncated"] is True


names = st.text(max_size=40)
header_values = st.one_of(st.none(), st.binary(max_size=300))


@given(
    key=st.one_of(st.none(), st.binary(max_size=200)),
    value=st.one_of(st.none(), st.binary(max_size=2000)),
    headers=st.lists(st.tuples(names, header_values), max_size=12),
    slack=st.integers(min_value=-50, max_value=400),
)
def test_record_fits_agrees_with_the_exact_size(
    key: bytes | None,
    value: bytes | None,
    headers: list[tuple[str, bytes | None]],
    slack: int,
) -> None:
    """The cheap bound never changes the verdict, at budgets around the exact size too."""
    exact = record_size(key, value, headers)
    for budget in (exact + slack, exact, exact - 1, 10**6):
        assert record_fits(key, value, headers, budget) == (exact <= budget)
