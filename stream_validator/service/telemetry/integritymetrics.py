"""Prometheus metrics of market-data integrity (issue 14): per-symbol state and NaN/±Inf
ratios (0-1; the report's rates are percent).

Beside ``metrics.ServiceMetrics``, on the same injected ``CollectorRegistry`` and under the
same label policy (see ``metrics``): ``contract`` and ``kind`` come from configuration and
code and are checked; ``field`` labels are declared field names, bounded per contract by
the same backstop cap. A symbol is never a label: per-symbol findings are counted per
contract and kind, and example symbols go only to batch events.

Counted from what was delivered, like everything the service counts: the service calls
``observe_batch`` from its ``on_batch`` hook, once per delivered route batch, so a
retried batch is counted once (its replan after the rewind starts from fresh state).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Final

from prometheus_client import CollectorRegistry, Counter, Gauge

from stream_validator.labels import LabelBudget, choice, config_label, is_count, is_number
from stream_validator.service.plan.routestate import StateSummary
from stream_validator.state import SymbolEventKind
from stream_validator.verify import SchemaContractValidationReport

__all__ = ["SYMBOL_EVENT_KINDS", "IntegrityMetrics"]

SYMBOL_EVENT_KINDS: Final = frozenset(str(kind) for kind in SymbolEventKind)
# The backstop cap on declared field labels per contract (as in metrics.py).
_MAX_FIELD_LABELS: Final = 1000


class IntegrityMetrics:
    """Symbol-state events, evictions and held symbols; NaN/±Inf rates per field.

    Call ``set_state_contract`` at startup for each contract that keeps state: it creates
    the event and eviction counters at 0, so PromQL ``increase()`` sees the first one.
    Safe to call from several threads.
    """

    def __init__(self, registry: CollectorRegistry) -> None:
        self._lock = threading.Lock()
        self._declared = LabelBudget(_MAX_FIELD_LABELS)
        # Symbols held per (contract, route): two routes may share a contract.
        self._held: dict[tuple[str, str], int] = {}
        cf = ("contract", "field")
        self._events = Counter(
            "stream_validator_symbol_events_total",
            "Per-symbol state events (sequence_gap, sequence_regression, event_time_regression,"
            " frozen_quote, sequence_holes_given_up, sequence_late), per contract and kind.",
            ("contract", "kind"),
            registry=registry,
        )
        self._evictions = Counter(
            "stream_validator_symbol_state_evictions_total",
            "Symbols evicted from the per-symbol state (LRU over max_symbols).",
            ("contract",),
            registry=registry,
        )
        self._symbols = Gauge(
            "stream_validator_symbol_state_symbols",
            "(partition, symbol) keys in the per-symbol state, as of the last delivered batch.",
            ("contract",),
            registry=registry,
        )
        self._nan_rate = Gauge(
            "stream_validator_batch_nan_ratio",
            "NaN share (0-1) of the last batch, per float field that allows non-finite values.",
            cf,
            registry=registry,
        )
        self._inf_rate = Gauge(
            "stream_validator_batch_inf_ratio",
            "±Inf share (0-1) of the last batch, per float field that allows non-finite values.",
            cf,
            registry=registry,
        )

    def set_state_contract(self, contract: str) -> None:
        """A contract keeps per-symbol state: its counters start at 0."""
        contract = config_label("contract", contract)
        with self._lock:
            for kind in sorted(SYMBOL_EVENT_KINDS):
                self._events.labels(contract, kind)
            self._evictions.labels(contract)
            self._symbols.labels(contract)

    def set_non_finite_fields(self, contract: str, fields: Sequence[str]) -> None:
        """Publish 0 for each field whose NaN/±Inf rates are reported (before any batch)."""
        contract = config_label("contract", contract)
        if isinstance(fields, str):
            raise ValueError(f"fields must be a sequence of names, not the string {fields!r}")
        with self._lock:
            for name in fields:
                label, _ = self._declared.label(contract, name)
                self._nan_rate.labels(contract, label)
                self._inf_rate.labels(contract, label)

    def observe_batch(
        self, route: str, report: SchemaContractValidationReport, state: StateSummary | None
    ) -> None:
        """Record one delivered route batch: its state events and its NaN/±Inf rates."""
        route = config_label("route", route)
        contract = config_label("contract", report.contract_name)
        rates = [("nan", report.nan_rates), ("inf", report.inf_rates)]
        for what, values in rates:
            if not all(is_number(rate) for rate in values.values()):
                raise ValueError(f"{what} rates must be finite numbers, got {values!r}")
        if state is not None:
            _check_state(state)
        with self._lock:
            for name, rate in report.nan_rates.items():
                label, _ = self._declared.label(contract, name)
                self._nan_rate.labels(contract, label).set(rate / 100)  # report: percent
            for name, rate in report.inf_rates.items():
                label, _ = self._declared.label(contract, name)
                self._inf_rate.labels(contract, label).set(rate / 100)
            if state is None:
                return
            for kind, n in state.counts.items():
                self._events.labels(contract, kind).inc(n)
            self._evictions.labels(contract).inc(state.evictions)
            self._held[(contract, route)] = state.symbols
            held = sum(n for (name, _), n in self._held.items() if name == contract)
            self._symbols.labels(contract).set(held)


def _check_state(state: StateSummary) -> None:
    """Refuse a malformed summary before anything is recorded."""
    for kind, n in state.counts.items():
        choice("kind", kind, SYMBOL_EVENT_KINDS)
        if not is_count(n):
            raise ValueError(f"event count of {kind} must be an int >= 0, got {n!r}")
    if not (is_count(state.evictions) and is_count(state.symbols)):
        raise ValueError(
            f"evictions and symbols must be ints >= 0, got {state.evictions!r}, {state.symbols!r}"
        )
