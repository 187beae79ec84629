"""What a contract reload attempt tells the log, ``/status`` and the metrics hook.

One ``ContractReload`` per contract file looked at again (a change seen by polling, or
SIGHUP): ``ok`` when the new contract was loaded, checked and swapped in between batches,
``rejected`` when it was not (the routes keep the live contract). ``record`` keeps each
route's live contract and its last reload attempt in ``ServiceState.contracts``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from stream_validator.config.settings import RouteConfig
from stream_validator.contracts import SchemaContract
from stream_validator.service.report.state import ServiceState

#: The longest reload error kept for /status and the log (a contract's problem listing can
#: run to many lines; the file itself, and ``check-contract``, give them all).
MAX_ERROR_CHARS: Final = 2000
ReloadResult = Literal["ok", "rejected"]
#: What became of a route's per-symbol state: carried on, reset, or none kept.
StateFate = Literal["carried", "reset", "none"]
#: What made the service look: its polling saw the file change, or SIGHUP.
Trigger = Literal["file", "sighup"]


@dataclass(frozen=True, slots=True)
class ContractReload:
    """One reload attempt of one contract file, for every route that reads it."""

    file: str
    trigger: Trigger
    result: ReloadResult
    #: The routes reading the file, as they run after the attempt (new contract when ok).
    routes: tuple[RouteConfig, ...]
    #: The contract the routes ran before the attempt.
    previous: SchemaContract
    error: str | None = None
    #: route -> what became of its per-symbol state (ok only).
    symbol_state: Mapping[str, StateFate] = field(default_factory=dict)
    #: Every route's live contract name -> version after the attempt (the contract_info
    #: gauge's series).
    live: Mapping[str, str] = field(default_factory=dict)
    at: str = ""

    @property
    def contract(self) -> str:
        """The live contract's name (the metric label)."""
        return self.routes[0].contract.name

    @property
    def version(self) -> str:
        """The live contract's version."""
        return self.routes[0].contract.version

    def as_event(self) -> dict[str, object]:
        """The log event's fields (JSON-ready)."""
        return {
            "file": self.file,
            "trigger": self.trigger,
            "result": self.result,
            "routes": [route.name for route in self.routes],
            "contract": self.contract,
            "version": self.version,
            "previous_version": self.previous.version,
            "error": self.error,
            "symbol_state": dict(self.symbol_state) or None,
        }


def record(state: ServiceState, reload: ContractReload) -> None:
    """Keep the routes' live contract and this attempt for /status (loop thread)."""
    for route in reload.routes:
        entry = state.contracts.setdefault(route.name, {})
        entry.update(
            contract=route.contract.name,
            version=route.contract.version,
            file=reload.file,
            last_reload={"result": reload.result, "trigger": reload.trigger, "at": reload.at},
        )
        if reload.result == "ok":
            entry["last_reload_error"] = None
        else:
            entry["last_reload_error"] = reload.error


def initial(state: ServiceState, routes: tuple[RouteConfig, ...]) -> None:
    """Each route's contract at start, for /status (no reload yet)."""
    for route in routes:
        state.contracts[route.name] = {
            "contract": route.contract.name,
            "version": route.contract.version,
            "file": route.contract_path,
            "last_reload": None,
            "last_reload_error": None,
        }


def cut(text: str) -> str:
    """An error text bounded for the log and /status."""
    if len(text) <= MAX_ERROR_CHARS:
        return text
    return text[:MAX_ERROR_CHARS] + f"... ({len(text) - MAX_ERROR_CHARS} more characters)"
