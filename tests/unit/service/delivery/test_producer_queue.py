"""A record the producer's queue can never hold stops the loop with a clear error instead of
waiting for room forever (the config check keeps a service config from getting here)."""

from __future__ import annotations

import pytest

from stream_validator.errors import ServiceExit

from ..fakeservice import Harness, service_config, tick


@pytest.mark.timeout(20)  # the bug was an endless wait
def test_record_larger_than_the_producer_queue_halts_with_the_reason() -> None:
    """Valid but larger than the whole queue: the oversized DLQ entry cannot fit either, so
    the loop halts naming the queue bound; nothing is committed past it."""
    h = Harness(service_config())
    h.clients.queue_bytes = 1_000
    h.feed([tick.json(0), tick.json(1, pad="x" * 2_000), tick.json(2)])
    assert h.run() == ServiceExit.HALTED
    assert "queue.buffering.max.kbytes" in (h.state.last_error or "")
    assert h.broker.committed("svc") == {}
    assert h.topic("dlq") == []
