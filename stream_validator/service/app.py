"""Wiring for ``stream-validator run``: config -> logging -> metrics/health -> Kafka loop.

Exit codes (``ServiceExit``): 0 clean shutdown, 1 fatal Kafka error, 2 invalid configuration
or a port that cannot be bound, 3 halted (a record cannot be delivered, or batches keep
failing), 4 shutdown deadline exceeded.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Mapping
from types import FrameType
from typing import Any

from stream_validator import __version__
from stream_validator.config.settings import (
    RouteConfig,
    ServiceConfig,
    load_config,
    read_resume_token,
    redacted,
)
from stream_validator.contracts.model import nullable_paths
from stream_validator.errors import ConfigError, ServiceExit
from stream_validator.gcpolicy import collector_tuned
from stream_validator.service.delivery.accounting import RouteDelivery
from stream_validator.service.http.health import HealthServer
from stream_validator.service.http.metricsserver import MetricsServer, start_http_server
from stream_validator.service.loop import StreamService
from stream_validator.service.report.hooks import ServiceHooks
from stream_validator.service.report.reloads import ContractReload
from stream_validator.service.report.state import ServiceState
from stream_validator.service.telemetry.breakermetrics import BreakerMetrics
from stream_validator.service.telemetry.integritymetrics import IntegrityMetrics
from stream_validator.service.telemetry.logs import configure_logging
from stream_validator.service.telemetry.metrics import CollectorRegistry, ServiceMetrics
from stream_validator.service.telemetry.registrymetrics import RegistryMetrics
from stream_validator.service.telemetry.reloadmetrics import ReloadMetrics
from stream_validator.service.telemetry.shadowmetrics import ShadowMetrics

log = logging.getLogger("stream_validator.service.app")


def metrics_hooks(
    metrics: ServiceMetrics,
    integrity: IntegrityMetrics | None = None,
    breakers: BreakerMetrics | None = None,
    reloads: ReloadMetrics | None = None,
    shadows: ShadowMetrics | None = None,
) -> ServiceHooks:
    """Hooks that feed the service's events into Prometheus metrics."""

    def on_batch(delivered: RouteDelivery, duration: float) -> None:
        metrics.observe_batch(
            delivered.route,
            delivered.plan.report,
            duration_seconds=duration,
            now=time.time(),
            clean=delivered.clean,
            dlq=delivered.dlq,
            violation_counts=delivered.violation_counts,
        )
        if integrity is not None:
            integrity.observe_batch(delivered.route, delivered.plan.report, delivered.plan.state)
        if shadows is not None and delivered.plan.shadow is not None:
            shadows.observe(delivered.route, delivered.plan.shadow)

    def on_rebalance(event: str, partitions: list[tuple[str, int]]) -> None:
        metrics.inc_rebalance(event)
        if event in ("revoked", "lost"):
            for topic, partition in partitions:
                metrics.remove_partition(topic, partition)

    hooks = ServiceHooks(
        on_batch=on_batch,
        on_clean_latencies=metrics.observe_end_to_end_latency,
        on_delivery_failure=metrics.inc_delivery_failure,
        on_truncated=metrics.inc_dlq_truncated,
        on_rebalance=on_rebalance,
        on_commit=metrics.set_last_commit,
        on_transaction_commit=metrics.observe_transaction_commit,
        on_stats=metrics.update_from_librdkafka_stats,
        on_ready=metrics.set_ready,
        on_hook_error=metrics.inc_hook_error,
    )
    if breakers is not None:
        hooks.on_breaker = breakers.observe

    def on_contract_reload(reload: ContractReload) -> None:
        if reload.result == "ok":  # the version labels follow the swap
            metrics.set_build_info(__version__, reload.live)
            old, new = reload.previous, reload.routes[0].contract
            kept = set(nullable_paths(new)) if old.name == new.name else set()
            metrics.drop_null_fields(old.name, [p for p in nullable_paths(old) if p not in kept])
            for route in reload.routes:
                if integrity is not None:
                    set_route_metrics(metrics, integrity, route)
                else:
                    metrics.declare_route(route.name, route.contract.name)
        if reloads is not None:
            reloads.observe(reload.contract, reload.result)

    hooks.on_contract_reload = on_contract_reload
    return hooks


def set_route_metrics(
    metrics: ServiceMetrics, integrity: IntegrityMetrics, route: RouteConfig
) -> None:
    """At start-up, a route's series: its counters at 0 (delivery failures included), its
    contract's null ceiling, state counters and NaN/±Inf gauges."""
    contract = route.contract
    metrics.declare_route(route.name, contract.name)
    metrics.declare_flags(
        route.name, contract.name, [r.name for r in contract.rules if r.action == "flag"]
    )
    nullable = nullable_paths(contract)  # nested fields by metric path (levels[].size)
    metrics.set_null_ceiling(contract.name, nullable, contract.max_allowed_null_pct)
    set_integrity_metrics(integrity, route)


def set_integrity_metrics(integrity: IntegrityMetrics, route: RouteConfig) -> None:
    """Create a route's state counters and NaN/±Inf rate gauges at 0."""
    contract = route.contract
    if contract.state is not None:
        integrity.set_state_contract(contract.name)
    fields = [f.name for f in contract.fields if f.expected_type is float and f.allow_non_finite]
    if fields:
        integrity.set_non_finite_fields(contract.name, fields)


def run_service(config_path: str, environ: Mapping[str, str] | None = None) -> int:
    """Load the config and run the service until SIGTERM/SIGINT; return the exit code."""
    try:
        config = load_config(config_path, environ)
    except ConfigError as exc:
        configure_logging("INFO")
        log.error("invalid configuration", extra={"error": str(exc)})
        return ServiceExit.CONFIG
    configure_logging(config.log_level, secrets=config.secrets())
    log.info("starting", extra=_startup_summary(config))
    registry = CollectorRegistry()
    metrics = ServiceMetrics(registry)
    metrics.set_build_info(
        __version__, {r.contract.name: r.contract.version for r in config.routes}
    )
    integrity = IntegrityMetrics(registry)
    for route in config.routes:
        set_route_metrics(metrics, integrity, route)
    breaker_metrics = BreakerMetrics(
        registry, [r.name for r in config.routes if r.circuit_breaker is not None]
    )
    reload_metrics = ReloadMetrics(registry, [r.contract.name for r in config.routes])
    shadow_metrics = ShadowMetrics(
        registry, [r.name for r in config.routes if r.shadow_contract is not None]
    )
    state = ServiceState()
    try:
        hooks = metrics_hooks(metrics, integrity, breaker_metrics, reload_metrics, shadow_metrics)
        registry_routes = [r.name for r in config.routes if r.format != "json"]
        if registry_routes:
            hooks.on_registry_unavailable = RegistryMetrics(registry, registry_routes).observe
        service = StreamService(config, hooks=hooks, state=state)
        token_file = config.resume_token_file
        health = HealthServer(
            state,
            host=config.health_host,
            port=config.health_port,
            liveness_timeout_s=config.liveness_timeout_s,
            resume=service.breakers.request_resume,
            resume_token=read_resume_token(token_file) if token_file else None,
        ).start()
        metrics_server: MetricsServer | None = None
        if config.metrics_enabled:
            metrics_server = start_http_server(
                registry,
                config.metrics_host,
                config.metrics_port,
                created_series=config.metrics_created_series,
            )
    except (ConfigError, OSError) as exc:
        log.error("cannot start", extra={"error": str(exc)})
        return ServiceExit.CONFIG
    log.info(
        "endpoints",
        extra={
            "health": f"http://{health.host}:{health.port}/healthz",
            "ready": f"http://{health.host}:{health.port}/readyz",
            "status": f"http://{health.host}:{health.port}/status",
            "resume": "token required" if token_file else "disabled (no resume_token_file)",
            "metrics": (
                f"http://{config.metrics_host}:{metrics_server.port}/metrics"
                if metrics_server
                else None
            ),
        },
    )
    _install_signal_handlers(service, config.shutdown_timeout_s)
    try:
        with collector_tuned():
            code = service.run()
    except ConfigError as exc:
        log.error("invalid Kafka settings", extra={"error": str(exc)})
        code = ServiceExit.CONFIG
    finally:
        health.close()
        if metrics_server is not None:
            metrics_server.close()
    log.info(
        "stopped",
        extra={
            "exit_code": code,
            "batches": state.batches,
            "records": state.records,
            "clean": state.clean,
            "dlq": state.dlq,
        },
    )
    return code


def _install_signal_handlers(service: StreamService, deadline_s: float) -> None:
    """SIGTERM/SIGINT stop the loop and arm the shutdown deadline from a watcher thread;
    SIGHUP asks the loop to look at every contract file again (reloaded between batches).

    A Python signal handler runs only once the main thread is back in Python, which a blocking
    librdkafka call can delay without limit. The interpreter's C-level handler, though, writes
    the signal number to the wakeup fd at once, whatever the main thread is doing.
    """
    read_fd, write_fd = os.pipe()
    os.set_blocking(write_fd, False)
    signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, _ignore)  # the watcher acts; without a handler nothing is written
    watcher = threading.Thread(
        target=_watch_signals, args=(read_fd, service, deadline_s), name="sv-signals", daemon=True
    )
    watcher.start()


def _ignore(_signum: int, _frame: FrameType | None) -> None:
    return None


def _watch_signals(read_fd: int, service: StreamService, deadline_s: float) -> None:
    while chunk := os.read(read_fd, 64):  # b"": every write end closed, nothing more can come
        for signum in chunk:
            if signum == signal.SIGHUP:
                log.info("SIGHUP: contract files will be looked at again")
                service.request_reload()
                continue
            if signum not in (signal.SIGTERM, signal.SIGINT) or service.stopping:
                continue
            log.info(
                "shutdown requested",
                extra={"signal": signal.Signals(signum).name, "deadline_s": deadline_s},
            )
            service.stop()
            _start_watchdog(deadline_s)


def _start_watchdog(deadline_s: float) -> None:
    """Exit hard if the in-flight batch cannot finish within the deadline (nothing committed)."""

    def expire() -> None:
        logging.getLogger("stream_validator.service.app").error(
            "shutdown deadline exceeded; exiting without committing the in-flight batch",
            extra={"deadline_s": deadline_s},
        )
        logging.shutdown()
        os._exit(ServiceExit.DEADLINE)

    timer = threading.Timer(deadline_s, expire)
    timer.daemon = True
    timer.start()


def _startup_summary(config: ServiceConfig) -> dict[str, Any]:
    kafka = config.kafka
    return {
        "version": __version__,
        "config": config.source,
        "bootstrap_servers": kafka.bootstrap_servers,
        "group_id": kafka.group_id,
        "kafka_settings": redacted({**kafka.settings, **kafka.consumer, **kafka.producer}),
        "schema_registry": config.schema_registry.redacted(),
        "routes": [
            {
                "name": r.name,
                "sources": list(r.source_topics) or r.source_pattern,
                "contract": f"{r.contract.name} v{r.contract.version}",
                "clean": r.clean_topic,
                "dlq": r.dlq_topic,
                "format": r.format,
                "on_null_ceiling_breach": r.on_null_ceiling_breach,
                "circuit_breaker": (
                    str(r.circuit_breaker.action) if r.circuit_breaker is not None else None
                ),
            }
            for r in config.routes
        ],
    }
