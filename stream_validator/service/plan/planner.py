"""PURE routing: one route's micro-batch in, the records to produce out.

No Kafka here: the loop hands the adapter's SourceRecords to a RouteProcessor, gets a
BatchPlan and gives it to the committer (``delivery/``), which produces ``plan.outputs`` in
order and commits only once every output was acknowledged. The plan says what *should* go
where; what was delivered (after oversized and delivery_rejected conversions) is the
committer's ``BatchOutcome``, and that is what gets counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from itertools import repeat
from operator import attrgetter, itemgetter
from typing import Any, Literal

from stream_validator import __version__
from stream_validator._native import clean_outputs as _native_outputs
from stream_validator.config.settings import RouteConfig
from stream_validator.contracts.model import nullable_paths
from stream_validator.dlq import EnvelopeContext, build_dlq_record
from stream_validator.dlq.records import replayed_count
from stream_validator.labels import bounded_counts, bounded_names
from stream_validator.records import OutputRecord, SourceRecord, TopicPartitionKey
from stream_validator.registry.outcome import DecodeResult
from stream_validator.service.plan.decoded import (
    event_schemas,
    schema_of,
    state_records,
    validate_decoded,
)
from stream_validator.service.plan.nullwindow import NullWindow, WindowRate
from stream_validator.service.plan.routestate import RouteState, StateSummary, unchanged_state
from stream_validator.service.plan.shadowdiff import ShadowDiff
from stream_validator.verify import (
    DataSchemaContractVerifier,
    SchemaContractValidationReport,
    Violation,
    ViolationKind,
)


@dataclass(frozen=True, slots=True)
class BatchPlan:
    """The outcome of one route batch: the report, the outputs, and the batch event."""

    route: str
    report: SchemaContractValidationReport
    outputs: list[OutputRecord]
    null_ceiling_action: str | None
    #: Violations the plan adds to the verifier's: the null ceiling's on records it sends to
    #: the DLQ under ``quarantine``, and unreadable headers.
    added_violations: Counter[tuple[str | None, str]] = field(default_factory=Counter)
    #: What the contract's per-symbol state saw (None: the contract keeps no state).
    state: StateSummary | None = None
    #: How the route's shadow contract would have judged the batch (None: no shadow).
    shadow: ShadowDiff | None = None
    #: A registry route's writer schemas in the batch (``decoded.event_schemas``); None: JSON.
    schemas: list[dict[str, Any]] | None = None

    @property
    def violation_counts(self) -> Counter[tuple[str | None, str]]:
        """(field, kind) -> count over every DLQ entry the plan makes (the report's own
        Counter when the plan adds none: read it, never change it)."""
        if not self.added_violations:
            return self.report.violation_counts
        return self.report.violation_counts + self.added_violations

    def event(
        self, violations: Counter[tuple[str | None, str]], outputs: tuple[int, int, int]
    ) -> dict[str, Any]:
        """The structured batch event: no payload values, payload-derived names bounded.

        Always as delivered (the service reports what was acknowledged, never the plan):
        ``violations`` of every DLQ entry (the plan's and those of the outputs the delivery
        turned into DLQ entries), ``outputs`` the clean, DLQ and truncated outputs."""
        report = self.report
        clean, dlq, truncated = outputs
        # Field names come from payloads (unknown keys): capped in number and length, so
        # 90,000 unique keys cannot make a huge log line or fill /status.
        # Most batches have no violation and no unknown field: nothing to rank or cut.
        by_field, fields_left_out = bounded_counts(_by(violations, 0)) if violations else ({}, 0)
        unknown, unknown_left_out = (
            bounded_names(report.observed_unknown_fields)
            if report.observed_unknown_fields
            else ([], 0)
        )
        unknown_left_out += report.unknown_fields_left_out  # past the verifier's batch cap
        event = {
            "event": "batch",
            "route": self.route,
            "contract": report.contract_name,
            "contract_version": report.contract_version,
            "records": report.total_records,
            "valid": report.valid_count,
            "quarantined": report.quarantined_count,
            "clean_out": clean,
            "dlq_out": dlq,
            "truncated_envelopes": truncated,
            "violations_by_kind": _by(violations, 1) if violations else {},
            "violations_by_field": by_field,
            "violations_by_field_left_out": fields_left_out,
            # Rule names are declared in the contract (a closed set), never payload-derived.
            "flagged_by_rule": dict(report.flagged_counts),
            "null_rates": report.null_rates,
            # Only fields with allow_non_finite; always 0 over Kafka (JSON has no NaN/Inf).
            "nan_rates": report.nan_rates,
            "inf_rates": report.inf_rates,
            "null_breach_fields": report.null_breach_fields,
            "null_ceiling_action": self.null_ceiling_action,
            "unknown_fields": unknown,
            "unknown_fields_left_out": unknown_left_out,
            "is_batch_valid": report.is_batch_valid,
            # Counts per kind; example symbols capped at 5 per kind, 32 characters each.
            "symbol_state": self.state.as_event() if self.state is not None else None,
        }
        if self.schemas is not None:  # a registry route's (ids and versions: never a label)
            event["schemas"] = self.schemas
        return event


class RouteProcessor:
    """Validates a route's micro-batches and plans clean and DLQ outputs."""

    __slots__ = (
        "_connect_headers",
        "_consumer_group",
        "_max_message_bytes",
        "_native_state",
        "_null_window",
        "_skew_windows",
        "route",
        "state",
        "verifier",
    )

    def __init__(
        self,
        route: RouteConfig,
        *,
        consumer_group: str,
        max_message_bytes: int,
        null_window: int,
        connect_headers: bool = False,
        native_state: bool = True,
    ) -> None:
        """``null_window``: the records over which the null ceiling is judged (the
        service's ``batch.max_records``; see nullwindow.py). ``connect_headers``: DLQ
        records also carry Kafka Connect's ``__connect.errors.*`` headers.
        ``native_state``: the per-symbol state in the native core (``RouteState``)."""
        self.route = route
        self.verifier = DataSchemaContractVerifier(
            route.contract, max_payload_bytes=route.max_payload_bytes
        )
        self._consumer_group = consumer_group
        self._max_message_bytes = max_message_bytes
        self._connect_headers = connect_headers
        self._native_state = native_state
        self._null_window = NullWindow(null_window, route.contract.max_allowed_null_pct)
        self._skew_windows = any(spec.has_skew_window for spec in route.contract.fields)
        spec = route.contract.state
        types = {field.name: field.expected_type for field in route.contract.fields}
        self.state = (
            RouteState(
                spec,
                types,
                self.verifier.field_getter,
                native=native_state,
                state_rows=self.verifier.state_rows,
            )
            if spec is not None
            else None
        )

    def plan(
        self,
        records: Sequence[SourceRecord],
        *,
        validated_at: str,
        unreadable_headers: Mapping[tuple[str, int, int], str] | None = None,
        decoded_values: Sequence[DecodeResult | None] | None = None,
    ) -> BatchPlan:
        """Validate the batch and return every output, in source order.

        ``unreadable_headers``: records whose headers the Kafka client could not read, and
        why; a valid one goes to the DLQ as ``undecodable`` (field ``headers``), since
        forwarding it would drop its headers silently. ``decoded_values``: a registry
        route's values, decoded (one per record; ``decoded.py``); None: JSON values.
        """
        route = self.route
        # The skew windows are measured from the time this batch is validated: the same
        # clock reading the DLQ envelope's validated_at records.
        now = datetime.fromisoformat(validated_at) if self._skew_windows else None
        # The per-symbol state reads its fields from what the verifier read: the native
        # core's rows of them (no Python object per record), else its decoded Structs; a
        # registry route's state reads the records' JSON form of the decoded values.
        rows = self.state.rows if self.state is not None else None
        decoded: list[Any] | None = [] if self.state is not None and rows is None else None
        fed = records
        if decoded_values is None:
            if rows is not None:
                rows.clear()
            report = self.verifier.validate_payloads(
                list(map(_value, records)), now=now, decoded=decoded, rows=rows
            )
        else:
            values = list(map(_value, records))
            if rows is not None:
                rows.clear()
            report = validate_decoded(self.verifier, decoded_values, values, now, rows)
            decoded = None  # the state reads the records' JSON (no fast-path Structs)
            if self.state is not None:
                fed = state_records(records, decoded_values)
        dlq_violations: dict[int, list[Violation]] = {
            q.index: q.violations for q in report.quarantined_records
        }
        action: str | None = None
        added: Counter[tuple[str | None, str]] = Counter()
        rates = self._null_window.add(report.valid_count, report.null_counts)
        breaching = self._null_window.breaches(rates, report.null_counts)
        if rates:
            # The ceiling is judged over the route's last max_records records (nullwindow.py);
            # the report carries the window's rates and breaches (for a full batch: its own).
            report = _with_window(
                report,
                {name: rate.rate for name, rate in rates.items()},
                {name: rate.rate for name, rate in breaching.items()},
            )
        if report.null_breach_fields:
            action = route.on_null_ceiling_breach
            if action == "quarantine":
                batch_violations = _ceiling_violations(report, breaching)
                for index in report.valid_indices:
                    dlq_violations[index] = batch_violations
                for violation in batch_violations:
                    added[(violation.field, str(violation.kind))] += len(report.valid_indices)
        # Fed after the null ceiling: a record already headed for the DLQ stays as it is.
        state = (
            self.state.apply(fed, report, dlq_violations, added, decoded, rows)
            if self.state
            else None
        )
        unreadable = unreadable_headers or {}
        # Every record as clean first, then the few DLQ entries in place.
        outputs = clean_outputs(route.clean_topic, records)
        schemas = event_schemas(decoded_values) if decoded_values is not None else None
        if not dlq_violations and not unreadable:
            return BatchPlan(route.name, report, outputs, action, added, state, schemas=schemas)
        context = self.envelope_context(report, validated_at)
        for index, violations in dlq_violations.items():
            where = context
            if decoded_values is not None:
                ref = schema_of(decoded_values[index])
                if ref is not None:
                    where = replace(
                        context, schema_id=ref.id, schema_guid=ref.guid, schema_version=ref.version
                    )
            outputs[index] = self.dlq_output(records[index], violations, where)
        if unreadable:
            for index, record in enumerate(records):
                problem = unreadable.get((record.topic, record.partition, record.offset))
                if problem is not None and index not in dlq_violations:
                    violations = [Violation("headers", ViolationKind.UNDECODABLE, problem)]
                    added[("headers", str(ViolationKind.UNDECODABLE))] += 1
                    outputs[index] = self.dlq_output(record, violations, context)
        return BatchPlan(route.name, report, outputs, action, added, state, schemas=schemas)

    def successor(
        self, route: RouteConfig
    ) -> tuple[RouteProcessor, Literal["carried", "reset", "none"]]:
        """The processor of ``route`` (this route with a reloaded contract) and what became
        of the per-symbol state: ``carried`` (the ``state`` section and the types of the
        fields it reads did not change: the new processor goes on with this tracker),
        ``reset`` (a fresh tracker) or ``none`` (the new contract keeps no state). The null
        window goes on too while the ceiling and the nullable fields stay the same."""
        new = RouteProcessor(
            route,
            consumer_group=self._consumer_group,
            max_message_bytes=self._max_message_bytes,
            null_window=self._null_window.size,
            connect_headers=self._connect_headers,
            native_state=self._native_state,
        )
        old_contract, contract = self.route.contract, route.contract
        if old_contract.max_allowed_null_pct == contract.max_allowed_null_pct and nullable_paths(
            old_contract
        ) == nullable_paths(contract):
            new._null_window = self._null_window
        if new.state is None:
            return new, "none"
        if self.state is None or not unchanged_state(old_contract, contract):
            return new, "reset"
        new.state = RouteState(
            new.state.spec,
            {field.name: field.expected_type for field in contract.fields},
            new.verifier.field_getter,
            tracker=self.state.tracker,
            state_rows=new.verifier.state_rows,
        )
        return new, "carried"

    def drop_state(self, keys: Sequence[TopicPartitionKey]) -> None:
        """Forget the per-symbol state of partitions revoked, lost or rewound: their next
        record starts fresh (a replayed record is not a regression)."""
        if self.state is not None:
            self.state.drop(keys)

    def envelope_context(
        self, report: SchemaContractValidationReport, validated_at: str
    ) -> EnvelopeContext:
        """Where the route's DLQ entries of a batch come from: the one place the service
        builds an envelope's context (the validator version is the package's)."""
        return EnvelopeContext(
            route=self.route.name,
            contract_name=report.contract_name,
            contract_version=report.contract_version,
            consumer_group=self._consumer_group,
            validator_version=__version__,
            validated_at=validated_at,
        )

    def dlq_output(
        self, record: SourceRecord, violations: Sequence[Violation], context: EnvelopeContext
    ) -> OutputRecord:
        """The DLQ record for one source record (either form, within the message limit).

        A record a replay sent on carries its replay count (``sv.replay.count``); the new
        envelope keeps it, so replay's ``--max-replays`` also stops records that go round
        source -> DLQ -> source.
        """
        count = replayed_count(record.headers)
        if count > context.replay_count:
            context = replace(context, replay_count=count)
        dlq = build_dlq_record(
            record,
            violations,
            context,
            max_bytes=self._max_message_bytes,
            connect_headers=self._connect_headers,
        )
        return OutputRecord(
            "dlq",
            self.route.dlq_topic,
            dlq.key,
            dlq.value,
            dlq.headers,
            record.timestamp_ms,
            record,
            dlq.truncated,
            str(violations[0].kind) if violations else None,
        )


def clean_outputs(topic: str, records: Sequence[SourceRecord]) -> list[OutputRecord]:
    """Each record as a clean output to ``topic`` (key, value, headers, timestamp kept).

    Once per record on the hot path, so built natively (``_native.clean_outputs``: each
    OutputRecord allocated once and filled in place; about 1,200 instructions a record with
    its deallocation, against 2,500 for the column-by-column build in C below, which takes
    any other sequence).
    """
    if type(records) is list:
        return _native_outputs(OutputRecord, "clean", topic, records, _SOURCE_AT, _TAIL)
    return list(
        map(
            _new_tuple,
            repeat(OutputRecord),
            zip(
                repeat("clean"),
                repeat(topic),
                map(_key, records),
                map(_value, records),
                map(_headers, records),
                map(_timestamp_ms, records),
                records,
                repeat(False),  # truncated
                repeat(None),  # first_violation
            ),
        )
    )


# Field getters of SourceRecord (itemgetter: C, no frame). Both builds follow OutputRecord's
# field order; tests/unit/service/plan/test_planner.py checks them against keyword
# construction.
_SOURCE_AT: tuple[int, int, int, int] = (
    SourceRecord._fields.index("key"),
    SourceRecord._fields.index("value"),
    SourceRecord._fields.index("headers"),
    SourceRecord._fields.index("timestamp_ms"),
)
_key, _value, _headers, _timestamp_ms = (itemgetter(at) for at in _SOURCE_AT)
_TAIL = (False, None)  # truncated, first_violation
_new_tuple = tuple.__new__


# The report's fields in order, read in C: ``dataclasses.replace`` walks them in Python, as
# much as the rest of planning a batch of five.
_REPORT_FIELDS = tuple(f.name for f in fields(SchemaContractValidationReport))
_report_values = attrgetter(*_REPORT_FIELDS)
_NULL_RATES = _REPORT_FIELDS.index("null_rates")
_NULL_BREACHES = _REPORT_FIELDS.index("null_breach_fields")


def _with_window(
    report: SchemaContractValidationReport,
    null_rates: dict[str, float],
    null_breach_fields: dict[str, float],
) -> SchemaContractValidationReport:
    """The report with the null window's rates and breaches (as ``replace`` would make it)."""
    values = list(_report_values(report))
    values[_NULL_RATES] = null_rates
    values[_NULL_BREACHES] = null_breach_fields
    return SchemaContractValidationReport(*values)


def _by(counts: Counter[tuple[str | None, str]], part: int) -> dict[str, int]:
    """Violation counts summed by kind (part 1) or by field (part 0, '<record>' for None)."""
    out: Counter[str] = Counter()
    for key, n in counts.items():
        name = key[part]
        out[name if name is not None else "<record>"] += n
    return dict(out)


def _ceiling_violations(
    report: SchemaContractValidationReport, window: Mapping[str, WindowRate]
) -> list[Violation]:
    return [
        Violation(
            name,
            ViolationKind.NULL_CEILING_BREACH,
            f"null rate of field {name!r} is {rate.rate:.3f}% over the route's last"
            f" {rate.survivors} valid records ({rate.nulls} null),"
            f" above max_allowed_null_pct {report.max_allowed_null_pct}",
        )
        for name, rate in window.items()
    ]
