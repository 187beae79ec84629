"""Contract reloads on the loop thread, between batches.

``ContractReloader.poll`` runs at the top of each turn of the loop, where no batch is being
planned: every ``service.contract_reload_interval_s`` (0: never) and at once after SIGHUP
(``request``, from the signal watcher thread), it looks for contract files whose content
changed (``files.py``). A changed file is loaded and checked as ``check-contract`` does, and
a processor is built for every route that reads it; only when all of that succeeds are the
routes' processors replaced (in the mapping the committer shares, so a later batch is
planned, and its DLQ envelopes made, under the new contract; batches planned before keep the
version they were judged by). A file that fails anything is rejected: the routes keep their
live contract, and the error goes to the log, ``/status`` and the reload metric.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, MutableMapping
from dataclasses import replace
from datetime import datetime

from stream_validator.config.settings import RouteConfig
from stream_validator.contracts import SchemaContract, contract_from_text
from stream_validator.errors import ContractError
from stream_validator.service.plan.planner import RouteProcessor
from stream_validator.service.reload.files import Content, ContractFiles
from stream_validator.service.report.hooks import ServiceHooks
from stream_validator.service.report.reloads import (
    ContractReload,
    ReloadResult,
    StateFate,
    Trigger,
    cut,
    initial,
    record,
)
from stream_validator.service.report.state import ServiceState

log = logging.getLogger("stream_validator.service")


class ContractReloader:
    """Watches the routes' contract files and swaps their processors between batches."""

    def __init__(
        self,
        processors: MutableMapping[str, RouteProcessor],
        *,
        interval_s: float,
        hooks: ServiceHooks,
        state: ServiceState,
        clock: Callable[[], datetime],
        monotonic: Callable[[], float],
    ) -> None:
        """``processors``: route -> processor, replaced in place on a swap."""
        self._processors = processors
        self._interval_s = interval_s
        self._hooks = hooks
        self._state = state
        self._clock = clock
        self._monotonic = monotonic
        self._requested = threading.Event()
        routes = tuple(p.route for p in processors.values())
        self._files = ContractFiles(dict.fromkeys(r.contract_path for r in routes))
        self._due = monotonic() + interval_s
        initial(state, routes)

    def request(self) -> None:
        """Look at every contract file at the loop's next turn (SIGHUP; any thread)."""
        self._requested.set()

    def poll(self) -> bool:
        """Reload what changed, if a look is due; True when a route's contract changed."""
        forced = self._requested.is_set()
        if not forced and (not self._interval_s or self._monotonic() < self._due):
            return False
        self._requested.clear()
        self._due = self._monotonic() + self._interval_s
        if forced:
            log.info("contract reload requested (SIGHUP)", extra={"files": self._files.paths})
        swapped = False
        for content in self._files.changed(force=forced):
            swapped |= self._reload(content, "sighup" if forced else "file")
        return swapped

    def routes(self) -> tuple[RouteConfig, ...]:
        """The routes as they run now (their live contracts)."""
        return tuple(p.route for p in self._processors.values())

    def _reload(self, content: Content, trigger: Trigger) -> bool:
        live = [p for p in self._processors.values() if p.route.contract_path == content.path]
        previous = live[0].route.contract
        if content.text is None:
            self._files.rejected(content)
            self._report(content, trigger, "rejected", previous, error=content.error)
            return False
        try:
            contract = contract_from_text(content.text, source=content.path)
            successors = [p.successor(replace(p.route, contract=contract)) for p in live]
        except Exception as exc:  # anything that fails keeps the live contract
            detail = str(exc) if isinstance(exc, ContractError) else f"{type(exc).__name__}: {exc}"
            self._files.rejected(content)
            self._report(content, trigger, "rejected", previous, error=cut(detail))
            return False
        fates: dict[str, StateFate] = {}
        for processor, fate in successors:
            self._processors[processor.route.name] = processor
            fates[processor.route.name] = fate
        self._files.accepted(content)
        self._report(content, trigger, "ok", previous, fates=fates)
        return True

    def _report(
        self,
        content: Content,
        trigger: Trigger,
        result: ReloadResult,
        previous: SchemaContract,
        *,
        error: str | None = None,
        fates: dict[str, StateFate] | None = None,
    ) -> None:
        routes = tuple(
            p.route for p in self._processors.values() if p.route.contract_path == content.path
        )
        reload = ContractReload(
            file=content.path,
            trigger=trigger,
            result=result,
            routes=routes,
            previous=previous,
            error=error,
            symbol_state=fates or {},
            live={r.contract.name: r.contract.version for r in self.routes()},
            at=self._clock().isoformat(),
        )
        record(self._state, reload)
        if result == "ok":
            log.info("contract reloaded", extra=reload.as_event())
            reset = [name for name, fate in (fates or {}).items() if fate == "reset"]
            if reset:
                log.warning(
                    "per-symbol state reset: the contract's state section (or the types of"
                    " the fields it reads) changed",
                    extra={"routes": reset, "contract": reload.contract},
                )
        else:
            log.error(
                "contract reload rejected; keeping the live contract", extra=reload.as_event()
            )
        self._hooks.on_contract_reload(reload)
