"""The service loop on the in-memory broker: config, harness and counts for unit tests."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stream_validator.config.settings import ServiceConfig, config_from_mapping
from stream_validator.kafka.fake import FakeBroker, FakeClients
from stream_validator.records import SourceRecord
from stream_validator.service.app import metrics_hooks, set_route_metrics
from stream_validator.service.loop import StreamService
from stream_validator.service.report.hooks import ServiceHooks
from stream_validator.service.report.state import ServiceState
from stream_validator.service.telemetry.breakermetrics import BreakerMetrics
from stream_validator.service.telemetry.integritymetrics import IntegrityMetrics
from stream_validator.service.telemetry.metrics import CollectorRegistry, ServiceMetrics
from stream_validator.service.telemetry.reloadmetrics import ReloadMetrics
from stream_validator.service.telemetry.shadowmetrics import ShadowMetrics
from tests.support.ticks import TICK_YAML as TICK
from tests.support.ticks import tick

__all__ = ["EVERY_POLL", "Harness", "service_config", "tick"]

GROUP = "svc"
#: A commit interval that is up at every poll: each batch commits as soon as it is delivered.
EVERY_POLL = 1e-9


def service_config(
    *,
    policy: str = "alert",
    transactional: bool = False,
    commit_interval_s: float = 60.0,
    circuit_breaker: Mapping[str, object] | None = None,
    contract: str | Path = TICK,
    **service: object,
) -> ServiceConfig:
    """One route src -> clean | dlq with the tick contract (or ``contract``); tiny backoffs;
    no linger. Commits only on revoke and at shutdown unless ``commit_interval_s`` is short
    (1e-9: at every poll)."""
    kafka: dict[str, Any] = {"group_id": GROUP}
    if transactional:
        kafka["transactional_id"] = "svc-0"
        # Room for the long default interval (a transaction must commit within its timeout).
        timeout_ms = max(10_000, int(commit_interval_s * 1000) + 1)
        kafka["producer"] = {"transaction.timeout.ms": str(timeout_ms)}
    return config_from_mapping(
        {
            "kafka": kafka,
            "batch": {
                "max_records": 10,
                "timeout_s": 0.01,
                "commit_interval_s": commit_interval_s,
                "linger_s": 0.0,  # take what arrived: a linger on the fake would end the run
            },
            "service": {"retry_backoff_s": 0.001, "retry_backoff_max_s": 0.001, **service},
            "metrics": {"enabled": False},
            "routes": [
                {
                    "name": "ticks",
                    "source_topics": ["src"],
                    "contract": str(contract),
                    "clean_topic": "clean",
                    "dlq_topic": "dlq",
                    "on_null_ceiling_breach": policy,
                    **({} if circuit_breaker is None else {"circuit_breaker": circuit_breaker}),
                }
            ],
        }
    )


@dataclass
class Harness:
    """A FakeBroker with src/clean/dlq topics and a StreamService that stops when idle."""

    config: ServiceConfig
    broker: FakeBroker = field(default_factory=FakeBroker)
    hooks: ServiceHooks | None = None
    partitions: int = 1
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)
    state: ServiceState = field(default_factory=ServiceState)
    events: list[tuple[str, Any]] = field(default_factory=list)
    #: The breakers' clock (tests move it to end a cool-down).
    monotonic: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        self.broker.create_topic("src", self.partitions)
        self.broker.create_topic("clean", self.partitions)
        self.broker.create_topic("dlq", self.partitions)
        self.metrics = ServiceMetrics(self.registry)
        self.integrity = IntegrityMetrics(self.registry)
        for route in self.config.routes:
            set_route_metrics(self.metrics, self.integrity, route)
        with_breaker = [r.name for r in self.config.routes if r.circuit_breaker is not None]
        self.breaker_metrics = BreakerMetrics(self.registry, with_breaker)
        self.reload_metrics = ReloadMetrics(
            self.registry, [r.contract.name for r in self.config.routes]
        )
        self.shadow_metrics = ShadowMetrics(
            self.registry, [r.name for r in self.config.routes if r.shadow_contract is not None]
        )
        self.clients = FakeClients(
            self.broker,
            GROUP,
            transactional_id=self.config.kafka.transactional_id,
            message_max_bytes=self.config.max_message_bytes,
            on_idle=self.idle,
        )
        self.service = StreamService(
            self.config,
            hooks=self.hooks
            or metrics_hooks(
                self.metrics,
                self.integrity,
                self.breaker_metrics,
                self.reload_metrics,
                self.shadow_metrics,
            ),
            state=self.state,
            clients=self.clients,
            monotonic=self.monotonic,
        )
        self.on_idle: Callable[[], None] = self.service.stop

    def idle(self) -> None:
        self.on_idle()

    def feed(self, values: list[bytes | None], partition: int = 0) -> list[SourceRecord]:
        """Append source records (keyed by position) to one partition."""
        return [
            self.broker.append("src", v, key=f"k{i}".encode(), partition=partition)
            for i, v in enumerate(values)
        ]

    def run(self) -> int:
        """Run the service until the source is drained (or it stops by itself)."""
        return self.service.run()

    def topic(self, name: str) -> list[SourceRecord]:
        """What a read_committed reader of the topic sees."""
        return self.broker.records(name)

    def counter(self, name: str, **labels: str) -> float:
        """A metric's value (0 when absent)."""
        value = self.registry.get_sample_value(
            name, labels or {"route": "ticks", "contract": "tick"}
        )
        return value or 0.0

    def counts(self) -> Mapping[str, float]:
        """valid/quarantined counters next to the clean/DLQ topics' record counts."""
        return {
            "valid_total": self.counter("stream_validator_records_valid_total"),
            "quarantined_total": self.counter("stream_validator_records_quarantined_total"),
            "clean_topic": len(self.topic("clean")),
            "dlq_topic": len(self.topic("dlq")),
        }
