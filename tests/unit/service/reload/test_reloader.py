"""Hot reload on the fake broker: a changed contract file is swapped in between batches,
a malformed one kept out (log, metric, /status), SIGHUP forces a look."""

from __future__ import annotations

import json
import logging
import urllib.request
from pathlib import Path

import pytest

from stream_validator.dlq.envelope_reader import dlq_document
from stream_validator.errors import ServiceExit
from stream_validator.kafka.ports import Producible
from stream_validator.service.http.health import HealthServer
from tests.support.contractfiles import BROKEN, V1, V2, ConfigMapVolume, renamed

from ..fakeservice import Harness, service_config

RELOADS = "stream_validator_contract_reloads_total"
#: Look at the file at every turn of the loop.
EVERY_TURN = 1e-9


def harness(
    tmp_path: Path, *, interval: float = EVERY_TURN, transactional: bool = False
) -> tuple[Harness, ConfigMapVolume]:
    volume = ConfigMapVolume(tmp_path / "contracts", V1)
    config = service_config(
        contract=volume.path,
        transactional=transactional,
        commit_interval_s=1e-9,
        contract_reload_interval_s=interval,
    )
    return Harness(config), volume


def versions(h: Harness, topic: str) -> list[str]:
    """The contract version of each DLQ envelope of the topic."""
    out = []
    for record in h.topic(topic):
        document = dlq_document(record)
        assert document is not None
        out.append(document["contract"]["version"])
    return out


def keys(h: Harness, topic: str) -> list[int]:
    """The source offsets of a topic's records, sorted (the tests feed one partition, seq
    i at offset i: a clean record's seq is its source offset)."""
    if topic == "clean":
        return sorted(json.loads(r.value or b"")["seq"] for r in h.topic(topic))
    documents = [dlq_document(r) for r in h.topic(topic)]
    return sorted(d["source"]["offset"] for d in documents if d is not None)


def reloads(h: Harness, result: str) -> float:
    return h.counter(RELOADS, contract="tick", result=result)


@pytest.mark.parametrize("transactional", [False, True], ids=["at-least-once", "exactly-once"])
def test_a_contract_changed_mid_batch_applies_from_the_next_batch(
    tmp_path: Path, transactional: bool
) -> None:
    """The file changes while batch 1 is produced: all of batch 1 is judged by v1 (DLQ,
    envelopes say version 1), all of batch 2 by v2 (clean); the metric labels follow."""
    h, volume = harness(tmp_path, transactional=transactional)
    h.feed([renamed(i) for i in range(20)])  # two batches of 10

    def change_at(count: int, _record: Producible) -> None:
        if count == 3:
            volume.update(V2)

    h.broker.faults.on_produce = change_at
    assert h.run() == ServiceExit.OK
    assert keys(h, "clean") == list(range(10, 20))
    assert keys(h, "dlq") == list(range(10))
    assert versions(h, "dlq") == ["1"] * 10
    assert [e["contract_version"] for e in h.state.recent_events] == ["1", "2"]
    assert reloads(h, "ok") == 1 and reloads(h, "rejected") == 0
    info = "stream_validator_contract_info"
    assert h.counter(info, contract="tick", version="2") == 1
    assert h.counter(info, contract="tick", version="1") == 0
    assert h.state.contracts["ticks"]["version"] == "2"
    assert h.service.config.routes[0].contract.version == "2"
    ceiling = "stream_validator_null_ceiling_ratio"  # the renamed field's, not a stale one
    assert h.registry.get_sample_value(ceiling, {"contract": "tick", "field": "ask_sz"}) is None
    assert h.counter(ceiling, contract="tick", field="ask_volume") == 0.01


def test_a_malformed_contract_is_kept_out_and_reported_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A broken file: records keep being judged by v1, one error event and one rejected
    count however often the file is looked at, /status shows the live version and the
    error; a fixed file then goes live and clears the error."""
    h, volume = harness(tmp_path)
    h.feed([renamed(i) for i in range(5)])
    turns = 0

    def on_idle() -> None:
        nonlocal turns
        turns += 1
        if turns == 1:
            volume.update(BROKEN)
        elif turns == 5:  # several looks at the broken file later
            url = f"http://127.0.0.1:{health.port}/status"
            with urllib.request.urlopen(url, timeout=5) as answer:
                seen = json.loads(answer.read())["contracts"]["ticks"]
            assert seen["version"] == "1"
            assert "flaot" in seen["last_reload_error"]
            assert seen["last_reload"]["result"] == "rejected"
            h.feed([renamed(i) for i in range(5, 10)])  # still quarantined under v1
        elif turns == 6:
            volume.update(V2)
            h.feed([renamed(i) for i in range(10, 15)])
        elif turns >= 8:
            h.service.stop()

    h.on_idle = on_idle
    health = HealthServer(h.state, host="127.0.0.1", port=0, liveness_timeout_s=60).start()
    try:
        with caplog.at_level(logging.INFO, logger="stream_validator.service"):
            assert h.run() == ServiceExit.OK
    finally:
        health.close()
    rejected = [r for r in caplog.records if r.getMessage().startswith("contract reload rejected")]
    assert len(rejected) == 1
    assert rejected[0].levelno == logging.ERROR
    assert (reloads(h, "rejected"), reloads(h, "ok")) == (1, 1)
    assert len(h.topic("dlq")) == 10 and set(versions(h, "dlq")) == {"1"}
    assert len(h.topic("clean")) == 5
    assert h.state.contracts["ticks"]["last_reload_error"] is None
    assert h.state.contracts["ticks"]["version"] == "2"


def test_without_polling_only_a_reload_request_picks_the_change_up(tmp_path: Path) -> None:
    """contract_reload_interval_s 0: a changed file waits for SIGHUP (request_reload)."""
    h, volume = harness(tmp_path, interval=0)
    h.feed([renamed(i) for i in range(3)])
    turns = 0

    def on_idle() -> None:
        nonlocal turns
        turns += 1
        if turns == 1:
            volume.update(V2)
            h.feed([renamed(i) for i in range(3, 6)])  # not looked at: still v1
        elif turns == 2:
            h.service.request_reload()
            h.feed([renamed(i) for i in range(6, 9)])
        else:
            h.service.stop()

    h.on_idle = on_idle
    assert h.run() == ServiceExit.OK
    assert keys(h, "dlq") == list(range(6))
    assert keys(h, "clean") == list(range(6, 9))
    assert h.state.contracts["ticks"]["last_reload"]["trigger"] == "sighup"


def test_a_changed_state_section_resets_the_tracker_and_says_so(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """v2 changes the state section's window: the reload logs the reset; a rename alone
    carries the state on (the ok event says which)."""
    h, volume = harness(tmp_path)
    h.feed([renamed(i) for i in range(3)])
    turns = 0

    def on_idle() -> None:
        nonlocal turns
        turns += 1
        if turns == 1:
            volume.update(V2)
        elif turns == 2:
            volume.update(V2.replace("window: 0 ", "window: 5 ").replace('"2"', '"3"'))
        elif turns >= 3:
            h.service.stop()

    h.on_idle = on_idle
    with caplog.at_level(logging.INFO, logger="stream_validator.service"):
        assert h.run() == ServiceExit.OK
    fates = [
        getattr(r, "symbol_state", None)
        for r in caplog.records
        if r.getMessage() == "contract reloaded"
    ]
    assert fates == [{"ticks": "carried"}, {"ticks": "reset"}]
    assert any(r.getMessage().startswith("per-symbol state reset") for r in caplog.records)
    assert h.state.contracts["ticks"]["version"] == "3"
