"""Shadow mode against the real broker: the vendor renames ask_sz to ask_volume, the live
contract quarantines those records, a shadow contract that accepts ask_volume counts exactly
the records it would rescue; promoted (the live file rewritten), new records flow to clean
without a restart, and replay rescues the quarantined ones into clean: none lost, none twice."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

from kafka_helpers import produce, read_topic
from service_helpers import REPO, ServiceProcess, new_stream, wait_until

from tests.support.contractfiles import V1, V2, ConfigMapVolume, renamed

RENAMED = 40


def shadow_records(service: ServiceProcess, difference: str) -> float | None:
    """stream_validator_shadow_records_total of route ticks from the process's /metrics."""
    (url,) = [e["metrics"] for e in service.log_events() if e.get("msg") == "endpoints"]
    with urllib.request.urlopen(url, timeout=5) as answer:
        text = answer.read().decode()
    for labels, value in re.findall(
        r"^stream_validator_shadow_records_total\{(.*)\} (\S+)$", text, re.M
    ):
        if dict(re.findall(r'(\w+)="([^"]*)"', labels)) == {
            "route": "ticks",
            "difference": difference,
        }:
            return float(value)
    return None


def test_a_shadow_counts_what_it_would_rescue_and_its_promotion_rescues_it(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """40 renamed ticks: live v1 sends them to the DLQ, the v2 shadow counts exactly 40
    rescued (metrics, /status, the periodic event, shadow-report); v2 written over the live
    file is picked up without a restart, the next 40 go to clean and the shadow then reports
    no differences; replay --to clean sends the 40 quarantined ones to clean: seqs 0-79 once
    each."""
    live = ConfigMapVolume(tmp_path / "contracts", V1)
    candidate = tmp_path / "tick-candidate.yaml"
    candidate.write_text(V2)
    stream = new_stream(
        kafka_bootstrap,
        tmp_path,
        route_options={"contract": str(live.path), "shadow_contract": str(candidate)},
        service={"contract_reload_interval_s": 0.2, "shadow_report_interval_s": 0.5},
    )

    def send(seqs: range) -> None:
        produce(
            kafka_bootstrap, stream.source, [(f"k{i}".encode(), renamed(i), None) for i in seqs]
        )

    send(range(0, RENAMED))
    service = ServiceProcess(stream.config, tmp_path / "service.log").start()
    try:
        wait_until(service.ready, 60, "readiness")
        wait_until(stream.all_consumed, 60, "the renamed records committed")
        assert (stream.produced(stream.dlq), stream.produced(stream.clean)) == (RENAMED, 0)
        wait_until(lambda: shadow_records(service, "rescued") == RENAMED, 30, "40 rescued")
        assert shadow_records(service, "newly_quarantined") == 0
        assert shadow_records(service, "unchanged") == 0
        shadow = service.status()["shadows"]["ticks"]
        assert (shadow["version"], shadow["live_version"], shadow["rescued"]) == ("2", "1", 40)
        assert shadow["violations"]["rescued"] == {"missing_field": {"ask_sz": RENAMED}}
        report = subprocess.run(
            [sys.executable, "-m", "stream_validator", "shadow-report", "--config",
             str(stream.config), "--json"],
            cwd=REPO, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        assert report.returncode == 0, report.stderr[-3000:]
        assert json.loads(report.stdout)["ticks"]["rescued"] == RENAMED
        wait_until(
            lambda: any(
                e.get("msg") == "shadow differences" and e.get("rescued") == RENAMED
                for e in service.log_events()
            ),
            30,
            "the periodic shadow event",
        )

        live.update(V2)  # promotion: the candidate becomes the live contract
        wait_until(
            lambda: service.status()["shadows"]["ticks"]["same_as_live"] is True,
            30,
            "the shadow equal to the live contract",
        )
        assert service.status()["contracts"]["ticks"]["version"] == "2"
        send(range(RENAMED, 2 * RENAMED))
        wait_until(lambda: stream.produced(stream.clean) == RENAMED, 60, "new records in clean")
        wait_until(lambda: shadow_records(service, "unchanged") == RENAMED, 30, "no differences")
        assert shadow_records(service, "rescued") == RENAMED  # nothing more after promotion
        assert stream.produced(stream.dlq) == RENAMED

        replay = subprocess.run(
            [sys.executable, "-m", "stream_validator", "replay", "--config", str(stream.config),
             "--dlq-topic", stream.dlq, "--to", "clean", "--json"],
            cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert replay.returncode == 0, replay.stderr[-3000:]
        assert json.loads(replay.stdout.splitlines()[-1])["outcomes"]["replayed"] == RENAMED
        assert service.proc is not None and service.proc.poll() is None  # never restarted
    finally:
        service.kill()
    clean = [json.loads(m.value or b"") for m in read_topic(kafka_bootstrap, stream.clean)]
    assert sorted(r["seq"] for r in clean) == list(range(2 * RENAMED))  # none lost, none twice
    dlq = [json.loads(m.value or b"") for m in read_topic(kafka_bootstrap, stream.dlq)]
    assert sorted(d["source"]["offset"] for d in dlq) == list(range(RENAMED))
    assert {d["contract"]["version"] for d in dlq} == {"1"}
