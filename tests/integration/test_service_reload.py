"""Hot reload against the real broker: the vendor renames ask_sz to ask_volume, the contract
file (a ConfigMap-like volume) is updated under the running service, and the records that
were quarantined flow to clean without a restart (new ones, and the old ones replayed)."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from kafka_helpers import produce, read_topic
from service_helpers import REPO, ServiceProcess, new_stream, wait_until

from tests.support.contractfiles import V1, V2, ConfigMapVolume, renamed


def metrics_text(service: ServiceProcess) -> str:
    """The process's /metrics page (its port is in the ``endpoints`` log event)."""
    (url,) = [e["metrics"] for e in service.log_events() if e.get("msg") == "endpoints"]
    with urllib.request.urlopen(url, timeout=5) as answer:
        return str(answer.read().decode())


def test_a_renamed_field_accepted_by_a_reloaded_contract_flows_to_clean(
    kafka_bootstrap: str, tmp_path: Path
) -> None:
    """Quarantined as missing ask_sz under v1; the file swapped to v2 (ask_volume) is picked
    up by polling, and without a restart new records go to clean, the DLQ'd ones replayed to
    the source go to clean too; SIGHUP is answered, not taken for a stop."""
    volume = ConfigMapVolume(tmp_path / "contracts", V1)
    stream = new_stream(
        kafka_bootstrap,
        tmp_path,
        route_options={"contract": str(volume.path)},
        service={"contract_reload_interval_s": 0.2},
    )

    def send(seqs: range) -> None:
        produce(
            kafka_bootstrap, stream.source, [(f"k{i}".encode(), renamed(i), None) for i in seqs]
        )

    send(range(0, 40))
    service = ServiceProcess(stream.config, tmp_path / "service.log").start()
    try:
        wait_until(service.ready, 60, "readiness")
        wait_until(stream.all_consumed, 60, "the first records committed")
        assert (stream.produced(stream.dlq), stream.produced(stream.clean)) == (40, 0)

        volume.update(V2)
        wait_until(
            lambda: service.status().get("contracts", {}).get("ticks", {}).get("version") == "2",
            30,
            "version 2 live in /status",
        )
        send(range(40, 80))
        wait_until(lambda: stream.produced(stream.clean) == 40, 60, "new records in clean")
        assert stream.produced(stream.dlq) == 40

        replay = subprocess.run(
            [sys.executable, "-m", "stream_validator", "replay", "--config", str(stream.config),
             "--dlq-topic", stream.dlq, "--to", "source", "--json"],
            cwd=REPO, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert replay.returncode == 0, replay.stderr[-3000:]
        assert json.loads(replay.stdout.splitlines()[-1])["outcomes"]["replayed"] == 40
        wait_until(lambda: stream.produced(stream.clean) == 80, 60, "replayed records in clean")
        # (Not "all committed": replay writes the source in transactions, whose commit
        # markers take offsets the service never commits past.)

        service.signal(signal.SIGHUP)
        wait_until(
            lambda: any(
                e.get("msg") == "contract reload requested (SIGHUP)" for e in service.log_events()
            ),
            30,
            "the SIGHUP reload look",
        )
        metrics = metrics_text(service)
        assert re.search(
            r'stream_validator_contract_reloads_total\{contract="tick",result="ok"\} 1\.0', metrics
        )
        assert 'stream_validator_contract_info{contract="tick",version="2"} 1.0' in metrics
        assert service.proc is not None and service.proc.poll() is None  # still running
        service.signal(signal.SIGTERM)
        assert service.wait(30) == 0, service.logs()[-3000:]
    finally:
        service.kill()
    clean = [json.loads(m.value or b"") for m in read_topic(kafka_bootstrap, stream.clean)]
    assert sorted(r["seq"] for r in clean) == list(range(80))
    versions = {
        json.loads(m.value or b"")["contract"]["version"]
        for m in read_topic(kafka_bootstrap, stream.dlq)
    }
    assert versions == {"1"}
    reloaded = [e for e in service.log_events() if e.get("msg") == "contract reloaded"]
    assert [(e["previous_version"], e["version"], e["trigger"]) for e in reloaded] == [
        ("1", "2", "file")
    ]
