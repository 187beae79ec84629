"""Refused records isolated through the one send path, in both delivery modes: suspects
produced alone, a clean output refused alone delivered as a DLQ entry, a DLQ entry refused
alone halting the service."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from stream_validator.errors import ServiceExit
from stream_validator.kafka.ports import Producible

from ..fakeservice import EVERY_POLL, Harness, service_config, tick

MODES = pytest.mark.parametrize("transactional", [False, True], ids=["at-least-once", "eos"])


def _refuse_clean_seq(seq: int) -> object:
    marker = f'"seq":{seq},'.encode()

    def refuse(record: Producible) -> str | None:
        hit = record.topic == "clean" and marker in (record.value or b"")
        return "INVALID_RECORD" if hit else None

    return refuse


@MODES
def test_a_clean_output_refused_alone_is_delivered_as_delivery_rejected(
    transactional: bool,
) -> None:
    """Its batchmates reach the clean topic (exactly once in a transaction; at least once
    otherwise: those of the first attempt that landed come again); it reaches the DLQ once,
    as a delivery_rejected entry; each record is reported once; everything is committed."""
    h = Harness(service_config(transactional=transactional, commit_interval_s=EVERY_POLL))
    h.feed([tick.json(i) for i in range(5)])
    h.broker.faults.refuse = _refuse_clean_seq(2)  # type: ignore[assignment]
    assert h.run() == ServiceExit.OK
    clean = Counter(r.value for r in h.topic("clean"))
    assert len(clean) == 4 and not any(b'"seq":2,' in (v or b"") for v in clean)
    if transactional:
        assert set(clean.values()) == {1}
    (entry,) = h.topic("dlq")
    envelope = json.loads(entry.value or b"")
    assert [v["kind"] for v in envelope["violations"]] == ["delivery_rejected"]
    assert (h.state.clean, h.state.dlq, h.state.records) == (4, 1, 5)  # reported once
    assert sum(e["converted_to_dlq"] for e in h.state.recent_events) == 1
    assert h.broker.committed("svc") == {("src", 0): 5}


@MODES
def test_a_dlq_entry_refused_alone_halts_with_nothing_committed_past_it(
    transactional: bool,
) -> None:
    """An invalid record whose DLQ entry the broker refuses, even alone, cannot go anywhere:
    the service halts naming it, and its offset is never committed."""
    h = Harness(service_config(transactional=transactional, commit_interval_s=EVERY_POLL))
    h.feed([tick.json(0), b"junk", tick.json(2)])
    h.broker.faults.refuse = lambda r: "INVALID_RECORD" if r.topic == "dlq" else None
    assert h.run() == ServiceExit.HALTED
    assert "refused the DLQ entry" in (h.state.last_error or "")
    assert h.broker.committed("svc").get(("src", 0), 0) <= 1
