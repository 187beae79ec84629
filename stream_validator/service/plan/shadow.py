"""PURE: a route's shadow contract judging the micro-batches its live contract plans.

The shadow runs its own verifier over the same payloads, after the live plan, and routes
nothing: the live plan's outputs stand as they are. What it returns is how the two verdicts
differ (``shadowdiff``). The shadow judges like the live route: the route's
``on_null_ceiling_breach`` over its own null window (the shadow's ceiling and nullable
fields, ``batch.max_records`` records), the same clock reading for the skew windows.

It keeps **no per-symbol state**: the live route's tracker is the only one, never fed twice
nor reset by the shadow. A record the live plan sent to the DLQ for a reason outside the
record's own checks (a per-symbol state event under ``quarantine``, unreadable headers) is
taken as failing under the shadow too, with the same violation, so only differences of the
record rules and the null ceiling show.

A shadow contract equal to the live one (a promoted candidate still named as the shadow)
judges nothing: every record is unchanged, at no cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from operator import itemgetter

from stream_validator.contracts import SchemaContract
from stream_validator.records import SourceRecord
from stream_validator.service.plan.nullwindow import NullWindow
from stream_validator.service.plan.planner import BatchPlan
from stream_validator.service.plan.shadowdiff import Pairs, ShadowDiff, classify
from stream_validator.verify import DataSchemaContractVerifier, Violation, ViolationKind

_value = itemgetter(SourceRecord._fields.index("value"))
_NULL_CEILING = str(ViolationKind.NULL_CEILING_BREACH)
_HEADERS = ("headers", str(ViolationKind.UNDECODABLE))


class ShadowEvaluator:
    """One route's shadow contract: its verifier and null window."""

    __slots__ = (
        "_live",
        "_null_window",
        "_policy",
        "_same",
        "_skew",
        "contract",
        "generation",
        "verifier",
    )

    def __init__(
        self,
        contract: SchemaContract,
        *,
        on_null_ceiling_breach: str,
        null_window: int,
        max_payload_bytes: int,
        generation: int = 0,
    ) -> None:
        """``generation``: told apart by the service across reloads, carried by each diff."""
        self.contract = contract
        self.generation = generation
        self.verifier = DataSchemaContractVerifier(contract, max_payload_bytes=max_payload_bytes)
        self._policy = on_null_ceiling_breach
        self._null_window = NullWindow(null_window, contract.max_allowed_null_pct)
        self._skew = any(spec.has_skew_window for spec in contract.fields)
        self._live: SchemaContract | None = None
        self._same = False

    def judged(self, live: SchemaContract) -> bool:
        """True when ``same_as`` already knows the contract ``live``."""
        return live is self._live

    def same_as(self, live: SchemaContract) -> bool:
        """True when the live contract is this one (compared once per live contract)."""
        if live is not self._live:
            self._live, self._same = live, live == self.contract
        return self._same

    def compare(
        self,
        records: Sequence[SourceRecord],
        plan: BatchPlan,
        live: SchemaContract,
        *,
        validated_at: str,
    ) -> ShadowDiff:
        """How the shadow would have judged the batch the live contract ``live`` planned as
        ``plan`` (``validated_at``: the plan's clock reading)."""
        if self.same_as(live):
            return ShadowDiff(len(records), generation=self.generation)
        report = plan.report
        failing = {q.index: _pairs(q.violations) for q in report.quarantined_records}
        if plan.null_ceiling_action == "quarantine" and report.null_breach_fields:
            ceiling = [(name, _NULL_CEILING) for name in report.null_breach_fields]
            failing.update(dict.fromkeys(report.valid_indices, ceiling))
        carried = _carried(plan, failing)
        now = datetime.fromisoformat(validated_at) if self._skew else None
        shadow_report = self.verifier.validate_payloads(list(map(_value, records)), now=now)
        shadow = {q.index: _pairs(q.violations) for q in shadow_report.quarantined_records}
        window = self._null_window
        rates = window.add(shadow_report.valid_count, shadow_report.null_counts)
        breaching = window.breaches(rates, shadow_report.null_counts) if rates else {}
        if breaching and self._policy == "quarantine":
            ceiling = [(name, _NULL_CEILING) for name in breaching]
            shadow.update(dict.fromkeys(shadow_report.valid_indices, ceiling))
        for index, pairs in carried.items():
            failing[index] = pairs
            shadow.setdefault(index, pairs)
        return classify(
            len(records),
            failing,
            shadow,
            live_breaches=report.null_breach_fields,
            shadow_breaches=breaching,
            generation=self.generation,
        )


def _pairs(violations: Sequence[Violation]) -> Pairs:
    """What made a record fail: its violations but the flagged ones (those let it flow)."""
    return [(v.field, str(v.kind)) for v in violations if not v.flagged]


def _carried(plan: BatchPlan, failing: dict[int, Pairs]) -> dict[int, Pairs]:
    """The live plan's DLQ entries made for reasons outside the record checks (per-symbol
    state, unreadable headers); the outputs are scanned only when there are some."""
    state = plan.state.quarantined if plan.state is not None else 0
    if not state and not plan.added_violations.get(_HEADERS):
        return {}
    return {
        index: [(None, output.first_violation or "")]
        for index, output in enumerate(plan.outputs)
        if output.kind == "dlq" and index not in failing
    }
