"""Shadow contracts in the running service on the fake broker: judged beside the live
contract, routing nothing; metrics, /status and the periodic event from delivered batches;
the shadow file hot-reloaded; promotion by the live contract's own reload."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from stream_validator.config.settings import config_from_mapping
from stream_validator.errors import ServiceExit
from tests.support.contractfiles import BROKEN, V1, V2, ConfigMapVolume, renamed
from tests.support.ticks import tick

from ..fakeservice import Harness, service_config

RECORDS = "stream_validator_shadow_records_total"
VIOLATIONS = "stream_validator_shadow_violations_total"
#: Look at the files at every turn of the loop.
EVERY_TURN = 1e-9


def shadow_harness(
    tmp_path: Path,
    *,
    live: str = V1,
    shadow: str = V2,
    policy: str = "alert",
    **service: object,
) -> tuple[Harness, ConfigMapVolume, ConfigMapVolume]:
    """Route ticks (batches of 10): the live contract and the shadow contract each in a
    ConfigMap-like volume, both looked at every turn."""
    live_volume = ConfigMapVolume(tmp_path / "live", live)
    shadow_volume = ConfigMapVolume(tmp_path / "shadow", shadow)
    document = {
        "kafka": {"group_id": "svc"},
        "batch": {"max_records": 10, "timeout_s": 0.01, "commit_interval_s": 1e-9,
                  "linger_s": 0.0},
        "service": {"retry_backoff_s": 0.001, "retry_backoff_max_s": 0.001,
                    "contract_reload_interval_s": EVERY_TURN, **service},
        "metrics": {"enabled": False},
        "routes": [{"name": "ticks", "source_topics": ["src"], "contract": str(live_volume.path),
                    "shadow_contract": str(shadow_volume.path), "clean_topic": "clean",
                    "dlq_topic": "dlq", "on_null_ceiling_breach": policy}],
    }  # fmt: skip
    config = config_from_mapping(document)
    return Harness(config), live_volume, shadow_volume


def shadow_count(h: Harness, difference: str) -> float:
    return h.counter(RECORDS, route="ticks", difference=difference)


def test_a_shadow_that_accepts_a_rename_counts_the_records_it_would_rescue(
    tmp_path: Path,
) -> None:
    """Live v1 quarantines ask_sz -> ask_volume; the v2 shadow counts exactly those records
    as rescued, and the ticks still sending ask_sz as newly quarantined (by kind and field);
    it routes nothing: the outputs follow the live contract only."""
    h, _, _ = shadow_harness(tmp_path)
    h.feed([renamed(i) if i % 3 == 0 else tick.json(i) for i in range(30)])
    assert h.run() == ServiceExit.OK
    assert (len(h.topic("clean")), len(h.topic("dlq"))) == (20, 10)
    assert shadow_count(h, "rescued") == 10
    assert shadow_count(h, "newly_quarantined") == 20
    assert shadow_count(h, "unchanged") == 0
    assert (
        h.counter(
            VIOLATIONS, route="ticks", difference="rescued", field="ask_sz", kind="missing_field"
        )
        == 10
    )
    assert h.counter(
        VIOLATIONS, route="ticks", difference="newly_quarantined", field="ask_volume",
        kind="missing_field",
    ) == 20  # fmt: skip
    status = h.state.shadows["ticks"]
    assert (status["version"], status["live_version"], status["same_as_live"]) == ("2", "1", False)
    assert (status["records"], status["rescued"], status["newly_quarantined"]) == (30, 10, 20)
    assert status["violations"]["rescued"] == {"missing_field": {"ask_sz": 10}}
    assert status["violations"]["newly_quarantined"] == {"missing_field": {"ask_volume": 20}}
    examples = status["examples"]
    assert [e["offset"] for e in examples["rescued"]] == [15, 18, 21, 24, 27]
    assert [e["offset"] for e in examples["newly_quarantined"]] == [23, 25, 26, 28, 29]
    assert {(e["topic"], e["partition"]) for e in examples["rescued"]} == {("src", 0)}


def test_records_the_shadow_would_newly_quarantine_are_counted_by_kind_and_field(
    tmp_path: Path,
) -> None:
    """Live v2 accepts ask_volume; a v1 shadow would quarantine those records."""
    h, _, _ = shadow_harness(tmp_path, live=V2, shadow=V1)
    h.feed([renamed(i) for i in range(4)] + [tick.json(i) for i in range(4, 10)])
    assert h.run() == ServiceExit.OK
    assert len(h.topic("clean")) == 4  # v2 needs ask_volume: the 6 plain ticks go to the DLQ
    assert shadow_count(h, "newly_quarantined") == 4
    assert shadow_count(h, "rescued") == 6
    assert h.counter(
        VIOLATIONS, route="ticks", difference="newly_quarantined", field="ask_sz",
        kind="missing_field",
    ) == 4  # fmt: skip


def test_a_null_ceiling_breach_only_the_shadow_sees_is_counted(tmp_path: Path) -> None:
    """A shadow with a lower null ceiling: the batch the live contract lets through is a
    newly breached ceiling of field bid for the shadow (and its quarantine would not apply:
    the route alerts)."""
    strict = V1.replace("max_allowed_null_pct: 1.0", "max_allowed_null_pct: 0.0").replace(
        'version: "1"', 'version: "1-strict"'
    )
    h, _, _ = shadow_harness(tmp_path, shadow=strict)
    h.feed([tick.json(i, bid=None) if i == 5 else tick.json(i) for i in range(10)])
    assert h.run() == ServiceExit.OK
    # 1 null in 10 = 10 % > 1 %: both breach; no record changes verdict under "alert".
    assert h.counter(
        "stream_validator_shadow_null_ceiling_changes_total",
        route="ticks", field="bid", change="newly_breached",
    ) == 0  # fmt: skip
    assert shadow_count(h, "unchanged") == 10


def test_a_ceiling_breach_under_quarantine_differs_record_by_record(tmp_path: Path) -> None:
    """Under on_null_ceiling_breach quarantine, a shadow ceiling of 50 % keeps the batch the
    live 1 % ceiling quarantines: its 10 records are rescued, bid no longer breached."""
    loose = V1.replace("max_allowed_null_pct: 1.0", "max_allowed_null_pct: 50.0").replace(
        'version: "1"', 'version: "1-loose"'
    )
    h2, _, _ = shadow_harness(tmp_path, shadow=loose, policy="quarantine")
    h2.feed([tick.json(i, bid=None) if i == 5 else tick.json(i) for i in range(10)])
    assert h2.run() == ServiceExit.OK
    assert len(h2.topic("dlq")) == 10
    assert h2.counter(RECORDS, route="ticks", difference="rescued") == 10
    assert h2.counter(
        "stream_validator_shadow_null_ceiling_changes_total",
        route="ticks", field="bid", change="no_longer_breached",
    ) == 1  # fmt: skip
    assert h2.counter(
        VIOLATIONS, route="ticks", difference="rescued", field="bid",
        kind="null_ceiling_breach",
    ) == 10  # fmt: skip


def test_promotion_makes_the_shadow_the_live_contract_without_a_restart(
    tmp_path: Path,
) -> None:
    """The operator writes the shadow's contract over the live file: the live reload swaps it
    in between batches, records flow to clean, and the shadow, now equal to the live
    contract, reports no differences (same_as_live)."""
    h, live, _ = shadow_harness(tmp_path)
    h.feed([renamed(i) for i in range(10)])
    fed = False

    def promote_then_feed() -> None:
        nonlocal fed
        if fed:
            h.service.stop()
            return
        fed = True
        live.update(V2)  # promotion: the live file now holds the shadow's contract
        h.feed([renamed(i) for i in range(10, 30)])

    h.on_idle = promote_then_feed
    assert h.run() == ServiceExit.OK
    assert (len(h.topic("dlq")), len(h.topic("clean"))) == (10, 20)
    assert shadow_count(h, "rescued") == 10  # before the promotion only
    assert shadow_count(h, "unchanged") == 20
    status = h.state.shadows["ticks"]
    assert (status["live_version"], status["same_as_live"]) == ("2", True)
    assert h.state.contracts["ticks"]["version"] == "2"


def test_the_shadow_file_is_reloaded_and_a_broken_one_kept_out(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A broken shadow file is rejected (the shadow stays v2, the error in /status and the
    log); the next good content is swapped in and its tallies start afresh."""
    h, _, shadow = shadow_harness(tmp_path)
    h.feed([renamed(i) for i in range(10)])
    step = 0

    def next_step() -> None:
        nonlocal step
        step += 1
        if step == 1:
            shadow.update(BROKEN)
            h.feed([renamed(i) for i in range(10, 20)])
        elif step == 2:
            shadow.update(V1.replace('version: "1"', 'version: "1b"'))
            h.feed([renamed(i) for i in range(20, 30)])
        else:
            h.service.stop()

    h.on_idle = next_step
    with caplog.at_level(logging.INFO, logger="stream_validator.service"):
        assert h.run() == ServiceExit.OK
    assert shadow_count(h, "rescued") == 20  # v2 judged the first 20, v1b rescues nothing
    assert shadow_count(h, "unchanged") == 10
    status = h.state.shadows["ticks"]
    assert (status["version"], status["records"], status["rescued"]) == ("1b", 10, 0)
    assert status["last_reload"]["result"] == "ok"
    assert status["last_reload_error"] is None
    messages = [r.getMessage() for r in caplog.records]
    assert "shadow contract reload rejected; keeping the shadow contract" in messages
    assert "shadow contract reloaded" in messages
    assert len(h.topic("dlq")) == 30  # the live v1 routed every record


def test_the_periodic_event_says_what_differed_and_only_then(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Every shadow_report_interval_s, one event per route whose shadow differed since the
    last one: counts and example offsets; none for a quiet interval."""
    h, _, _ = shadow_harness(tmp_path, shadow_report_interval_s=EVERY_TURN)
    h.feed([renamed(i) for i in range(3)])
    with caplog.at_level(logging.INFO, logger="stream_validator.service"):
        assert h.run() == ServiceExit.OK
    events = [r for r in caplog.records if r.getMessage() == "shadow differences"]
    assert len(events) == 1
    event = events[0].__dict__
    assert (event["route"], event["version"], event["live_version"]) == ("ticks", "2", "1")
    assert (event["records"], event["rescued"], event["newly_quarantined"]) == (3, 3, 0)
    assert [e["offset"] for e in event["examples"]["rescued"]] == [0, 1, 2]


def test_a_route_without_a_shadow_has_no_shadow_machinery(tmp_path: Path) -> None:
    """No shadow_contract: the loop builds no ShadowRoutes, /status shows none, no series."""
    h = Harness(service_config())
    assert h.service._shadows is None
    assert h.state.shadows == {}
    assert h.registry.get_sample_value(RECORDS, {"route": "ticks", "difference": "rescued"}) is None


def test_the_shadow_leaves_the_live_per_symbol_state_alone(tmp_path: Path) -> None:
    """The same feed with gaps and regressions, with a shadow and without: the live
    contract's state events, batch by batch, are the same (the shadow keeps no state)."""
    seqs = [0, 1, 5, 6, 2, 9, 10, 11, 30, 31, 32, 12]
    values = [tick.json(s, symbol="A") for s in seqs]
    with_shadow, _, _ = shadow_harness(tmp_path / "with", shadow=V1.replace('"1"', '"1b"'))
    alone = Harness(service_config(commit_interval_s=1e-9))
    for h in (with_shadow, alone):
        h.feed(values)
        assert h.run() == ServiceExit.OK
    events = [[e["symbol_state"] for e in h.state.recent_events] for h in (with_shadow, alone)]
    assert events[0] == events[1]
    assert any(e["events"] for e in events[0])  # the feed did make state events


def test_with_polling_off_sighup_reloads_the_shadow(tmp_path: Path) -> None:
    """contract_reload_interval_s 0: a changed shadow file waits for SIGHUP
    (request_reload), which reloads it as it does the live contracts."""
    h, _, shadow = shadow_harness(tmp_path, contract_reload_interval_s=0)
    h.feed([renamed(i) for i in range(10)])
    step = 0

    def next_step() -> None:
        nonlocal step
        step += 1
        if step == 1:
            shadow.update(V1.replace('version: "1"', 'version: "1b"'))
            h.feed([renamed(i) for i in range(10, 20)])  # still judged by v2: not looked at
        elif step == 2:
            h.service.request_reload()
            h.feed([renamed(i) for i in range(20, 30)])  # judged by v1b
        else:
            h.service.stop()

    h.on_idle = next_step
    assert h.run() == ServiceExit.OK
    assert shadow_count(h, "rescued") == 20
    assert shadow_count(h, "unchanged") == 10
    assert h.state.shadows["ticks"]["last_reload"]["trigger"] == "sighup"


def test_a_plan_carrying_its_diff_is_the_plan_replace_would_make() -> None:
    """_with_shadow builds the BatchPlan positionally: the same as dataclasses.replace."""
    from dataclasses import replace

    from stream_validator.service.plan.shadowdiff import ShadowDiff
    from stream_validator.service.shadow.routes import _with_shadow
    from tests.support.ticks import tick_processor

    plan = tick_processor().plan([], validated_at="2026-12-03T00:00:00+00:00")
    diff = ShadowDiff(3, rescued=(1,))
    assert _with_shadow(plan, diff) == replace(plan, shadow=diff)
