"""The routes' shadow contracts in the running service: judged after each plan, tallied from
delivered batches, reported every ``service.shadow_report_interval_s``, hot-reloaded.

The loop builds a ``ShadowRoutes`` only when some route names a ``shadow_contract``
(``shadow_routes``): without one the loop does nothing more per batch or per turn.

- ``compare`` runs each route's ``ShadowEvaluator`` (``plan/shadow.py``) on the records its
  live plan was made from and attaches the diff to the plan; nothing is routed by it.
- The diffs are counted from what was *delivered*: the service's ``on_batch`` hook is
  wrapped, so a batch that is retried counts once, when it is committed. Its tallies feed
  ``/status`` (``ServiceState.shadows``) and the periodic INFO event
  ``"msg":"shadow differences"``, written only for a route whose shadow differed meanwhile.
- ``poll`` runs at the top of each turn, between batches: it looks at the shadow files as
  the contract reloader looks at the live ones (``reload/files.py``: every
  ``service.contract_reload_interval_s`` and on SIGHUP), checks a changed file as
  ``check-contract`` does and swaps the route's shadow (a rejected file keeps the old one),
  and writes the periodic event when due.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from stream_validator.config.settings import RouteConfig, ServiceConfig
from stream_validator.contracts import SchemaContract, contract_from_text
from stream_validator.errors import ContractError
from stream_validator.records import SourceRecord
from stream_validator.service.delivery.accounting import RouteDelivery
from stream_validator.service.plan.planner import BatchPlan, RouteProcessor
from stream_validator.service.plan.shadow import ShadowEvaluator
from stream_validator.service.plan.shadowdiff import ShadowDiff
from stream_validator.service.reload.files import Content, ContractFiles
from stream_validator.service.report.hooks import ServiceHooks
from stream_validator.service.report.reloads import cut
from stream_validator.service.report.state import ServiceState
from stream_validator.service.shadow.tally import ShadowTally

log = logging.getLogger("stream_validator.service")


def shadow_routes(
    config: ServiceConfig,
    processors: Mapping[str, RouteProcessor],
    *,
    hooks: ServiceHooks,
    state: ServiceState,
    clock: Callable[[], datetime],
    monotonic: Callable[[], float],
) -> ShadowRoutes | None:
    """The service's shadows, or None when no route names a ``shadow_contract``."""
    if not any(route.shadow_contract is not None for route in config.routes):
        return None
    return ShadowRoutes(
        config, processors, hooks=hooks, state=state, clock=clock, monotonic=monotonic
    )


class ShadowRoutes:
    """Every route's shadow contract: evaluators, tallies, the periodic event, reloads."""

    def __init__(
        self,
        config: ServiceConfig,
        processors: Mapping[str, RouteProcessor],
        *,
        hooks: ServiceHooks,
        state: ServiceState,
        clock: Callable[[], datetime],
        monotonic: Callable[[], float],
    ) -> None:
        """``processors``: the loop's route -> live processor (swapped in place on a live
        reload); ``hooks``: the loop's guarded hooks, whose ``on_batch`` is wrapped."""
        self._processors = processors
        self._routes = {r.name: r for r in config.routes if r.shadow_contract is not None}
        self._null_window = config.batch_max_records
        self._state = state
        self._clock = clock
        self._monotonic = monotonic
        self._reload_s = config.contract_reload_interval_s
        self._event_s = config.shadow_report_interval_s
        self._requested = threading.Event()
        now = monotonic()
        self._reload_due, self._event_due = now + self._reload_s, now + self._event_s
        self._evaluators: dict[str, ShadowEvaluator] = {}
        #: route -> the shadow's reload count: a batch judged before a reload, delivered
        #: after it, is counted in the metrics but not in the new shadow's tallies.
        self._generation: dict[str, int] = {}
        self._total: dict[str, ShadowTally] = {}
        self._since: dict[str, ShadowTally] = {}
        for route in list(self._routes.values()):
            assert route.shadow_contract is not None
            self._start(route, self._evaluator(route, route.shadow_contract), None)
        self._files = ContractFiles(dict.fromkeys(self._paths()))
        on_batch = hooks.on_batch

        def delivered(batch: RouteDelivery, duration: float) -> None:
            on_batch(batch, duration)
            if batch.plan.shadow is not None:
                self._delivered(batch)

        hooks.on_batch = delivered

    def request(self) -> None:
        """Look at every shadow file at the next ``poll`` (SIGHUP; any thread)."""
        self._requested.set()

    def compare(
        self,
        by_route: Mapping[str, Sequence[SourceRecord]],
        plans: list[BatchPlan],
        *,
        validated_at: str,
    ) -> list[BatchPlan]:
        """The plans, those of routes with a shadow carrying its diff."""
        evaluators = self._evaluators
        out = []
        for plan in plans:
            evaluator = evaluators.get(plan.route)
            if evaluator is not None:
                live = self._processors[plan.route].route.contract
                diff = evaluator.compare(
                    by_route[plan.route], plan, live, validated_at=validated_at
                )
                plan = _with_shadow(plan, diff)
            out.append(plan)
        return out

    def poll(self) -> None:
        """Reload changed shadow files and write the periodic event, when due; after a live
        reload (a promotion), /status says at once whether the shadow is the live contract."""
        for name, evaluator in self._evaluators.items():
            if not evaluator.judged(self._processors[name].route.contract):
                self._state.shadows[name].update(self._about(name))
        now = self._monotonic()
        forced = self._requested.is_set()
        if forced or (self._reload_s and now >= self._reload_due):
            self._requested.clear()
            self._reload_due = now + self._reload_s
            for content in self._files.changed(force=forced):
                self._reload(content, "sighup" if forced else "file")
        if self._event_s and now >= self._event_due:
            self._event_due = now + self._event_s
            self.report()

    def report(self) -> None:
        """One ``shadow differences`` event per route whose shadow differed since the last."""
        for name, since in self._since.items():
            if since.differs:
                log.info("shadow differences", extra=self._about(name) | since.as_dict())
            self._since[name] = ShadowTally()

    # --- internals ------------------------------------------------------------------

    def _paths(self) -> list[str]:
        return [r.shadow_contract_path for r in self._routes.values() if r.shadow_contract_path]

    def _evaluator(self, route: RouteConfig, contract: SchemaContract) -> ShadowEvaluator:
        return ShadowEvaluator(
            contract,
            on_null_ceiling_breach=route.on_null_ceiling_breach,
            null_window=self._null_window,
            max_payload_bytes=route.max_payload_bytes,
        )

    def _start(self, route: RouteConfig, evaluator: ShadowEvaluator, reload: object) -> None:
        """Judge the route's records by ``evaluator`` from now on, with fresh tallies."""
        self._generation[route.name] = self._generation.get(route.name, -1) + 1
        evaluator.generation = self._generation[route.name]
        self._evaluators[route.name] = evaluator
        self._routes[route.name] = replace(route, shadow_contract=evaluator.contract)
        self._total[route.name] = ShadowTally()
        self._since[route.name] = ShadowTally()
        entry = self._about(route.name) | self._total[route.name].as_dict()
        entry.update(since=self._clock().isoformat(), last_reload=reload, last_reload_error=None)
        self._state.shadows[route.name] = entry

    def _about(self, name: str) -> dict[str, Any]:
        """Which shadow and which live contract a route runs now."""
        route = self._routes[name]
        shadow = self._evaluators[name].contract
        live = self._processors[name].route.contract
        return {
            "route": name,
            "contract": shadow.name,
            "version": shadow.version,
            "file": route.shadow_contract_path,
            "live_contract": live.name,
            "live_version": live.version,
            "same_as_live": self._evaluators[name].same_as(live),
        }

    def _delivered(self, batch: RouteDelivery) -> None:
        name, plan = batch.route, batch.plan
        assert plan.shadow is not None
        if plan.shadow.generation != self._generation[name]:
            return  # judged by the shadow a reload replaced
        total = self._total[name]
        total.add(plan.shadow, plan.outputs)
        self._since[name].add(plan.shadow, plan.outputs)
        entry = self._state.shadows[name]
        entry["records"] = total.records
        entry["unchanged"] = total.records - total.counts.total()
        if plan.shadow.differs or entry.get("live_version") != plan.report.contract_version:
            entry.update(self._about(name) | total.as_dict())

    def _reload(self, content: Content, trigger: str) -> None:
        names = [n for n, r in self._routes.items() if r.shadow_contract_path == content.path]
        at = {"result": "rejected", "trigger": trigger, "at": self._clock().isoformat()}
        error: str | None = content.error
        if content.text is not None:
            try:
                contract = contract_from_text(content.text, source=content.path)
                built = {n: self._evaluator(self._routes[n], contract) for n in names}
            except Exception as exc:  # anything that fails keeps the shadow it had
                error = (
                    str(exc) if isinstance(exc, ContractError) else f"{type(exc).__name__}: {exc}"
                )
            else:
                self._files.accepted(content)
                for name, evaluator in built.items():
                    self._start(self._routes[name], evaluator, at | {"result": "ok"})
                log.info(
                    "shadow contract reloaded",
                    extra={"file": content.path, "routes": names, "trigger": trigger,
                           "contract": contract.name, "version": contract.version},
                )  # fmt: skip
                return
        self._files.rejected(content)
        for name in names:
            self._state.shadows[name].update(last_reload=at, last_reload_error=cut(error or ""))
        log.error(
            "shadow contract reload rejected; keeping the shadow contract",
            extra={"file": content.path, "routes": names, "trigger": trigger,
                   "error": cut(error or "")},
        )  # fmt: skip


def _with_shadow(plan: BatchPlan, diff: ShadowDiff) -> BatchPlan:
    """The plan carrying ``diff`` (as ``replace`` makes it, without its per-call walk over
    the fields: once per route batch)."""
    return BatchPlan(
        plan.route,
        plan.report,
        plan.outputs,
        plan.null_ceiling_action,
        plan.added_violations,
        plan.state,
        diff,
    )
