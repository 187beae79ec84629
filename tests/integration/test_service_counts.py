"""The Prometheus counters agree exactly with the clean and DLQ topics (issue 11).

With ``on_null_ceiling_breach: quarantine`` the service used to count a breaching batch's
valid records in ``records_valid_total`` although they went to the DLQ (measured: 4,000
inputs, clean 2,985, DLQ 1,015; valid_total 3,980, quarantined_total 20). The counters are
now fed from what was delivered, so they must equal the topics under both policies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from kafka_helpers import create_topic, produce, read_topic, unique_group
from service_helpers import ThreadedService, all_consumed, encode, route, tick, wait_until
from service_helpers import write_config as service_config_file

from stream_validator.service.app import metrics_hooks
from stream_validator.service.telemetry.metrics import CollectorRegistry, ServiceMetrics

RECORDS = 2_000


def inputs() -> list[tuple[bytes, bytes, None]]:
    """Every 25th record has a null bid (4 % > the 1 % ceiling: batches breach), every 40th
    an impossible price (quarantined under both policies)."""
    records = []
    for i in range(RECORDS):
        changes: dict[str, Any] = {}
        if i % 25 == 7:
            changes["bid"] = None
        if i % 40 == 11:
            changes["price"] = -1.0
        records.append((f"k{i}".encode(), encode(tick(i, **changes)), None))
    return records


@pytest.mark.parametrize(
    ("policy", "mode"),
    [("alert", "at-least-once"), ("quarantine", "at-least-once"), ("quarantine", "exactly-once")],
)
def test_counters_equal_the_records_in_the_clean_and_dlq_topics(
    kafka_bootstrap: str, tmp_path: Path, policy: str, mode: str
) -> None:
    """records_valid_total == clean topic, records_quarantined_total == DLQ topic, consumed ==
    source; /status clean/dlq agree too."""
    source = create_topic(kafka_bootstrap, 3, prefix="src")
    clean = create_topic(kafka_bootstrap, 3, prefix="clean")
    dlq = create_topic(kafka_bootstrap, 1, prefix="dlq")
    produce(kafka_bootstrap, source, inputs())
    group = unique_group("counts")
    kafka = {"transactional_id": unique_group("txn")} if mode == "exactly-once" else {}
    path = service_config_file(
        tmp_path,
        kafka_bootstrap,
        [route("ticks", source, clean, dlq, on_null_ceiling_breach=policy)],
        group=group,
        kafka=kafka,
    )
    registry = CollectorRegistry()
    metrics = ServiceMetrics(registry)
    with ThreadedService.from_file(path, metrics_hooks(metrics)) as runner:
        wait_until(lambda: all_consumed(kafka_bootstrap, group, source), 90, "all committed")
        state = runner.service.state
    assert runner.exit_code == 0
    clean_records = len(read_topic(kafka_bootstrap, clean, isolation_level="read_committed"))
    dlq_records = len(read_topic(kafka_bootstrap, dlq, isolation_level="read_committed"))
    labels = {"route": "ticks", "contract": "tick"}

    def counter(name: str) -> float | None:
        return registry.get_sample_value(f"stream_validator_records_{name}_total", labels)

    assert clean_records + dlq_records == RECORDS  # no failures: no duplicates
    assert dlq_records >= RECORDS // 40  # the impossible prices at least
    if policy == "quarantine":
        assert dlq_records > RECORDS // 2  # breaching batches went to the DLQ whole
    assert {
        "consumed": counter("consumed"),
        "valid": counter("valid"),
        "quarantined": counter("quarantined"),
        "status_clean": state.clean,
        "status_dlq": state.dlq,
    } == {
        "consumed": RECORDS,
        "valid": clean_records,
        "quarantined": dlq_records,
        "status_clean": clean_records,
        "status_dlq": dlq_records,
    }
