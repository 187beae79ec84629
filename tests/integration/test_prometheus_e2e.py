"""End to end: a real Prometheus scrapes the running service fed drift and a null spike."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from kafka_helpers import create_topic, unique_group
from service_helpers import REPO, ServiceProcess, free_port, route, wait_until, write_config

from stream_validator.cli.simulate import main as simulate

ALERTS = REPO / "deploy" / "prometheus" / "alerts.yml"


@pytest.fixture
def prometheus_binary() -> str:
    """The Prometheus server; missing it is a failure (CI installs Debian's package)."""
    binary = shutil.which("prometheus")
    if binary is None:
        pytest.fail("the 'prometheus' server is not installed (apt-get install prometheus)")
    return binary


class Prometheus:
    def __init__(self, url: str) -> None:
        self.url = url

    def api(self, path: str, **params: str) -> Any:
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        with urllib.request.urlopen(f"{self.url}/api/v1/{path}{query}", timeout=5) as response:
            body = json.loads(response.read())
        assert body["status"] == "success", body
        return body["data"]

    def value(self, expr: str) -> float | None:
        result = self.api("query", query=expr)["result"]
        return float(result[0]["value"][1]) if result else None

    def firing(self) -> set[str]:
        return {
            a["labels"]["alertname"] for a in self.api("alerts")["alerts"] if a["state"] == "firing"
        }

    def up(self) -> bool:
        try:
            return self.api("status/buildinfo") is not None
        except OSError:
            return False


@pytest.fixture
def prometheus(prometheus_binary: str, tmp_path: Path) -> Iterator[tuple[Prometheus, int]]:
    """A Prometheus server on loopback scraping a metrics port chosen here, with our alerts."""
    metrics_port, web_port = free_port(), free_port()
    config = {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(ALERTS)],
        "scrape_configs": [
            {
                "job_name": "stream-validator",
                "static_configs": [{"targets": [f"127.0.0.1:{metrics_port}"]}],
            }
        ],
    }
    path = tmp_path / "prometheus.yml"
    path.write_text(yaml.safe_dump(config))
    log = (tmp_path / "prometheus.log").open("wb")
    proc = subprocess.Popen(
        [
            prometheus_binary,
            f"--config.file={path}",
            f"--storage.tsdb.path={tmp_path / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{web_port}",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    server = Prometheus(f"http://127.0.0.1:{web_port}")
    try:
        wait_until(server.up, 60, "Prometheus to serve its API")
        yield server, metrics_port
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
        log.close()


def test_prometheus_sees_drift_and_null_spike(
    kafka_bootstrap: str, tmp_path: Path, prometheus: tuple[Prometheus, int]
) -> None:
    """Series exist with the right values; SchemaDriftDetected and NullCeilingBreached fire."""
    server, metrics_port = prometheus
    source = create_topic(kafka_bootstrap, 1, prefix="src")
    clean = create_topic(kafka_bootstrap, 1, prefix="clean")
    dlq = create_topic(kafka_bootstrap, 1, prefix="dlq")
    path = write_config(
        tmp_path,
        kafka_bootstrap,
        [route("ticks", source, clean, dlq)],
        group=unique_group("svc"),
        metrics={"enabled": True, "port": metrics_port},
    )
    service = ServiceProcess(path, tmp_path / "service.log").start()
    try:
        wait_until(service.ready, 60, "service readiness")
        wait_until(lambda: server.value('up{job="stream-validator"}') == 1.0, 60, "scrape up")
        # Before any record: the route's failure counters exist at 0, so increase() (the
        # DeliveryFailures alert) would catch a failure of the very first batch.
        failures = 'stream_validator_delivery_failures_total{route="ticks",output="dlq"}'
        assert server.value(failures) == 0.0
        assert (
            simulate(
                [
                    "--bootstrap-servers",
                    kafka_bootstrap,
                    "--topic",
                    source,
                    "--count",
                    "600",
                    "--rate",
                    "0",
                    "--seed",
                    "3",
                    "--scenario",
                    "field_rename@n100+50",
                    "--scenario",
                    "null_bid_spike@n300+300:0.5",
                ]
            )
            == 0
        )
        consumed = 'sum(stream_validator_records_consumed_total{route="ticks",contract="tick"})'
        wait_until(lambda: server.value(consumed) == 600.0, 60, "600 consumed in Prometheus")
        wait_until(
            lambda: {"SchemaDriftDetected", "NullCeilingBreached"} <= server.firing(),
            60,
            "drift and null-ceiling alerts firing",
        )
        renamed = (
            'sum(stream_validator_violations_total{contract="tick",field="ask_sz",'
            'kind="missing_field"})'
        )
        assert server.value(renamed) == 50.0
        assert server.value('stream_validator_unknown_fields_total{field="ask_volume"}') >= 1  # type: ignore[operator]
        assert server.value("sum(stream_validator_null_ceiling_breaches_total)") >= 1  # type: ignore[operator]
        assert server.value('stream_validator_null_ceiling_ratio{field="bid"}') == 0.01
        quarantined = 'sum(stream_validator_records_quarantined_total{route="ticks"})'
        assert server.value(quarantined) == 50.0
        assert server.value("stream_validator_ready") == 1.0
        assert server.value('count(stream_validator_build_info{version!=""})') == 1.0
    finally:
        service.signal(signal.SIGTERM)
        service.wait(30)
        service.kill()
