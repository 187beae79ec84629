"""Prometheus metrics of contract reloads (one of the service's metrics modules, the only
ones allowed to import prometheus_client; ``metrics`` lists them).

On the same injected ``CollectorRegistry`` as ``ServiceMetrics``. ``contract`` is a
contract's name from a contract file the config names (checked as a config label), ``result``
is ``ok`` or ``rejected``. Each contract's series exist from the start, at 0, so
``increase()`` sees the first rejected reload.
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import CollectorRegistry, Counter

from stream_validator.labels import choice, config_label

RESULTS = ("ok", "rejected")


class ReloadMetrics:
    """Contract reloads by contract and result."""

    def __init__(self, registry: CollectorRegistry, contracts: Iterable[str]) -> None:
        self.reloads = Counter(
            "stream_validator_contract_reloads",
            "Contract file reloads per contract and result (ok: swapped in; rejected: kept out)",
            ["contract", "result"],
            registry=registry,
        )
        for contract in sorted(set(contracts)):
            self._declare(contract)

    def _declare(self, contract: str) -> None:
        for result in RESULTS:
            self.reloads.labels(contract, result)

    def observe(self, contract: str, result: str) -> None:
        """One reload attempt of a contract file (the live contract's name after it)."""
        contract = config_label("contract", contract)
        result = choice("result", result, frozenset(RESULTS))
        self._declare(contract)  # a reload may bring a new name: its series start at 0
        self.reloads.labels(contract, result).inc()
