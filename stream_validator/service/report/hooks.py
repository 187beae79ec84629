"""The hooks the app wires to metrics, called by the loop with what was delivered."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from stream_validator.records import TopicPartitionKey
from stream_validator.service.breaker.machine import BreakerTransition
from stream_validator.service.delivery.accounting import RouteDelivery
from stream_validator.service.report.reloads import ContractReload


def _noop(*_: Any) -> None:
    return None


@dataclass
class ServiceHooks:
    """Callbacks the app wires to metrics; every one defaults to doing nothing.

    ``on_batch`` gets what a route batch *delivered* (once it is committed), never the plan:
    a retried batch is reported once. ``on_hook_error`` is told which hook failed; it is not
    guarded (its own failure is swallowed)."""

    on_batch: Callable[[RouteDelivery, float], None] = _noop
    on_clean_latencies: Callable[[str, list[float]], None] = _noop
    on_delivery_failure: Callable[[str, str], None] = _noop
    on_truncated: Callable[[str], None] = _noop
    on_rebalance: Callable[[str, list[TopicPartitionKey]], None] = _noop
    on_commit: Callable[[float], None] = _noop
    on_stats: Callable[[Mapping[str, Any]], None] = _noop
    on_ready: Callable[[bool], None] = _noop
    on_breaker: Callable[[BreakerTransition], None] = _noop
    on_contract_reload: Callable[[ContractReload], None] = _noop
    #: A route's batch set back because the Schema Registry could not answer.
    on_registry_unavailable: Callable[[str], None] = _noop
    #: Exactly-once: the seconds one transaction's commit took (flush, offsets, commit).
    on_transaction_commit: Callable[[float], None] = _noop
    on_hook_error: Callable[[str], None] = _noop


def guarded(hooks: ServiceHooks, failed: Callable[[str, Exception], None]) -> ServiceHooks:
    """The same hooks, each catching its own exceptions and reporting them to ``failed``:
    a metrics or logging bug must never stop the loop between delivery and commit."""

    def wrap(name: str, hook: Callable[..., None]) -> Callable[..., None]:
        def call(*args: Any) -> None:
            try:
                hook(*args)
            except Exception as exc:
                failed(name, exc)

        return call

    wrapped = {f.name: wrap(f.name, getattr(hooks, f.name)) for f in fields(hooks)}
    wrapped["on_hook_error"] = hooks.on_hook_error
    return replace(hooks, **wrapped)
