"""BatchAccumulator: validates payloads or records one chunk at a time. PURE.

Payloads go through the native fast path (``native.NativeCheck``) in chunks; what it
declines, and every decoded record, goes through the full rules (``rules``), whose
verdict is final. An unexpected exception while checking one record quarantines that
record as ``validator_error`` and never aborts the batch.

Flagged checks (fields and rules with action ``flag``): a record whose only violations are
flagged ones is valid and counted in the report's flagged counts; a record with any other
violation is quarantined, its flagged violations listed after the others (so the first
violation is one that quarantined it), marked (``Violation.flagged``).
The fast path accepts no record breaking any field check, flagged or not, so what a flagged
field lets through is always judged here.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from stream_validator.codec import JSONDecodeError, loads_raw
from stream_validator.contracts.model import metric_path
from stream_validator.verify.dupkeys import duplicate_keys, no_duplicates_possible
from stream_validator.verify.fastpath import FAIL
from stream_validator.verify.kept import KeptRecords
from stream_validator.verify.malformed import (
    duplicate_key_violations,
    duplicates,
    not_a_mapping,
    not_bytes,
    oversized,
    snapshot,
    tombstone,
    undecodable,
    unreadable_mapping,
)
from stream_validator.verify.native import CHUNK
from stream_validator.verify.render import type_label
from stream_validator.verify.report import (
    FLAGGABLE_KINDS,
    MAX_UNKNOWN_NAMES,
    DecodedRecords,
    QuarantinedRecord,
    SchemaContractValidationReport,
    Violation,
    ViolationKind,
)
from stream_validator.verify.rustcore import RustCheck
from stream_validator.verify.rustcore import add_payloads as rust_payloads

if TYPE_CHECKING:
    from stream_validator._native import StateRows
    from stream_validator.verify.verifier import DataSchemaContractVerifier

_log = logging.getLogger(__name__)
Payload = bytes | bytearray | memoryview | None
_NONE: tuple[Any, ...] = ()  # no flag rules broken, no flagged fields


class BatchAccumulator:
    """Validates records one at a time and builds the batch report at the end."""

    __slots__ = (
        "_bounds",
        "_checks",
        "_checks_on",
        "_error_logged",
        "_fast_check",
        "_flag_fields",
        "_flagged",
        "_flagged_fields",
        "_flagged_records",
        "_inspector",
        "_keep",
        "_kept",
        "_may_flag",
        "_native",
        "_null_counts",
        "_payloads_seen",
        "_quarantined",
        "_quarantined_count",
        "_rule_counts",
        "_rust",
        "_rust_windows",
        "_total",
        "_unknown",
        "_unknown_left_out",
        "_valid_count",
        "_verifier",
        "_violation_counts",
    )

    def __init__(
        self,
        verifier: DataSchemaContractVerifier,
        *,
        keep_records: bool,
        now: datetime | None = None,
    ) -> None:
        self._verifier = verifier
        self._checks = verifier._checks
        self._bounds = self._checks.bounds(now)
        # None when no record could fail or be flagged by a rule or a skew window.
        self._checks_on = self._checks.active(now)
        self._flagged: Counter[str] = Counter()
        self._flag_fields = verifier._flag_fields
        # Built on a contract's first flagged field breach (most contracts have none).
        self._flagged_fields: Counter[tuple[str, str]] | None = None
        self._flagged_records = 0
        self._rule_counts: Counter[str] = Counter()
        # Decided once per contract: can any violation be a flagged one (a field or a rule
        # with action flag)? Without, a quarantined record's violations all count as they are.
        self._may_flag = bool(self._flag_fields) or verifier._flag_rules
        self._inspector = verifier._inspector
        self._fast_check = verifier._fast_check
        self._native = verifier._native
        self._rust = verifier._rust
        self._rust_windows = RustCheck.windows(self._bounds) if self._rust is not None else []
        self._payloads_seen = False
        self._keep = keep_records
        self._total = 0
        self._kept = KeptRecords()
        self._valid_count = 0
        self._quarantined: list[QuarantinedRecord] = []
        self._quarantined_count = 0
        self._null_counts = [0] * len(self._inspector.nullable_names)
        # The first MAX_UNKNOWN_NAMES distinct undeclared names; the rest only counted.
        self._unknown: set[str] = set()
        self._unknown_left_out = 0
        self._violation_counts: Counter[tuple[str | None, str]] = Counter()
        self._error_logged = False

    def add_record(self, record: object) -> QuarantinedRecord | None:
        """Validate one decoded record; return its QuarantinedRecord, or None when valid."""
        index = self._total
        self._total += 1
        if not isinstance(record, Mapping):
            return self._quarantine(index, snapshot(record), [not_a_mapping(record)])
        try:
            clean = self._fast_check(record)
            if clean is not FAIL and not self._checks_on:
                return self._accept(index, record, clean)
            violations, nulls, unknown = self._inspector.inspect(record)
            violations, rules = self._record_checks(record, violations)
            if unknown:
                if len(self._unknown) + len(unknown) <= MAX_UNKNOWN_NAMES:
                    self._unknown.update(unknown)  # the common case of _note_unknown, inline
                else:
                    self._note_unknown(unknown)
            if violations is not None:
                return self._quarantine(index, snapshot(record), violations)
            if rules:
                self._count_flags(rules, _NONE)
            return self._accept(index, record, nulls or ())
        except Exception as exc:  # one record never aborts the batch
            if type(record) is dict:
                return self._validator_error(index, snapshot(record), exc)
            return self._quarantine(index, snapshot(record), [unreadable_mapping(exc)])

    def add_rejected(self, raw: object, violation: Violation) -> QuarantinedRecord:
        """Count a record quarantined before it could be checked (e.g. a registry-format value
        that does not decode), ``raw`` kept as its evidence."""
        index = self._total
        self._total += 1
        return self._quarantine(index, raw, [violation])

    def add_payload(self, payload: Payload) -> QuarantinedRecord | None:
        """Decode and validate one raw payload; return its QuarantinedRecord, or None."""
        quarantined = self.add_payloads([payload])
        return quarantined[0] if quarantined else None

    def add_payloads(
        self,
        payloads: Sequence[Payload],
        decoded: list[Any] | None = None,
        rows: StateRows | None = None,
    ) -> list[QuarantinedRecord]:
        """Decode and validate raw payloads in order; return the quarantined ones.

        ``decoded``: extended with one entry per payload, the fast path's Struct of a
        payload it accepted (read with the verifier's ``field_getter``), else None.
        ``rows``: a ``StateRows`` of the verifier's ``state_rows``, extended with one row per
        payload (absent ones where the Rust core did not read it).
        """
        self._payloads_seen = True
        if self._rust is not None:
            return rust_payloads(self, self._rust, self._rust_windows, payloads, decoded, rows)
        if rows is not None:
            rows.extend_absent(len(payloads))
        native = self._native
        out: list[QuarantinedRecord] = []
        chunk = CHUNK if native is None else native.chunk
        for start in range(0, len(payloads), chunk):
            part = payloads[start : start + chunk]
            if type(part) is not list:
                part = list(part)  # kept as it is (KeptRecords.run)
            base = self._total
            self._total += len(part)
            declined: Sequence[int] = range(len(part))
            mark = len(decoded) if decoded is not None else 0
            if native is not None:
                nulls = [0] * len(self._null_counts)
                try:
                    declined = native.screen(part, nulls, self._bounds, decoded)
                except Exception as exc:  # defence in depth: the full rules take the chunk
                    self._log_error("fast path", exc)
                    if decoded is not None:
                        del decoded[mark:]
                else:
                    self._null_counts = [
                        a + b for a, b in zip(self._null_counts, nulls, strict=True)
                    ]
            done = 0
            for position in declined:
                if position > done:
                    self._accept_run(base, part, done, position)
                quarantined = self._full_payload(base + position, part[position])
                if quarantined is not None:
                    out.append(quarantined)
                done = position + 1
            if done < len(part):
                self._accept_run(base, part, done, len(part))
            if decoded is not None and len(decoded) == mark:
                decoded.extend([None] * len(part))
        return out

    def _accept_run(self, base: int, part: Sequence[Payload], lo: int, hi: int) -> None:
        """Count payloads the fast path accepted (their nulls are already counted)."""
        self._valid_count += hi - lo
        if self._keep:
            self._kept.run(part, base, lo, hi)

    def _accept_runs(self, base: int, part: Sequence[Payload], runs: list[int]) -> None:
        """``_accept_run`` of each (lo, hi) in ``runs`` (flat: lo, hi, lo, hi, ...), in
        order, none touching the next."""
        los, his = runs[::2], runs[1::2]
        self._valid_count += sum(his) - sum(los)
        if self._keep:
            self._kept.runs(part, base, los, his)

    def _full_payload(self, index: int, payload: Payload) -> QuarantinedRecord | None:
        """The full rules for one payload, whose verdict is final."""
        if type(payload) is bytes and len(payload) <= self._verifier.max_payload_bytes:
            try:
                return self._check_payload(index, payload)
            except Exception as exc:  # defence in depth: one record never aborts the batch
                return self._validator_error(index, payload, exc)
        if payload is None:
            return self._quarantine(index, None, [tombstone()])
        if not isinstance(payload, bytes | bytearray | memoryview):
            return self._quarantine(index, snapshot(payload), [not_bytes(payload)])
        size = len(payload) if not isinstance(payload, memoryview) else payload.nbytes
        limit = self._verifier.max_payload_bytes
        if size > limit:
            return self._quarantine(index, bytes(payload), [oversized(size, limit)])
        if type(payload) is not bytes:
            payload = bytes(payload)
        try:
            return self._check_payload(index, payload)
        except Exception as exc:  # defence in depth: one record never aborts the batch
            return self._validator_error(index, payload, exc)

    def _check_payload(self, index: int, payload: bytes) -> QuarantinedRecord | None:
        try:
            record = loads_raw(payload)
        except JSONDecodeError as exc:
            return self._quarantine(index, payload, [undecodable(exc)])
        if type(record) is not dict:
            return self._quarantine(index, payload, [not_a_mapping(record)])
        # Records the native fast path declined are nearly all bad: go straight to the rules.
        if self._native is None and not self._checks_on:
            clean = self._fast_check(record)
            if clean is not FAIL and (
                no_duplicates_possible(payload, len(record)) or not duplicate_keys(payload)
            ):
                return self._accept(index, payload, clean)
        violations, nulls, unknown = self._inspector.inspect(record)
        if violations is not None:
            violations = self._inspector.explain_overflow(record, payload, violations)
        repeated = duplicates(payload, record)
        if repeated:
            violations = duplicate_key_violations(repeated) + (violations or [])
        violations, rules = self._record_checks(record, violations)
        if unknown:
            if len(self._unknown) + len(unknown) <= MAX_UNKNOWN_NAMES:
                self._unknown.update(unknown)  # the common case of _note_unknown, inline
            else:
                self._note_unknown(unknown)
        if violations is not None:
            return self._quarantine(index, payload, violations)
        if rules:
            self._count_flags(rules, _NONE)
        # A valid payload is kept as bytes: valid_records decodes it again on access.
        return self._accept(index, payload, nulls)

    def _record_checks(
        self, record: Mapping[Any, Any], violations: list[Violation] | None
    ) -> tuple[list[Violation] | None, Sequence[str]]:
        """The rules and skew windows, on the fields that passed their own checks, then the
        flags: (violations, None when only flagged ones; the flag rules broken by a record
        that ends valid, not yet counted)."""
        if self._flag_fields:
            return self._flag_field_checks(record, violations)
        if not self._checks_on:
            return violations, _NONE
        return self._checks.check(record, violations, self._bounds)

    def _flag_field_checks(
        self, record: Mapping[Any, Any], violations: list[Violation] | None
    ) -> tuple[list[Violation] | None, Sequence[str]]:
        """``_record_checks`` of a contract with flagged fields: a record whose violations
        are all flagged ones is valid, its breaches counted here."""
        broken: Sequence[str] = _NONE
        if self._checks_on:
            violations, broken = self._checks.check(record, violations, self._bounds)
        if violations is None:
            return None, broken
        rest = [v for v in violations if not v.flagged]  # the flag rules' are marked
        flagged = self._flagged_pairs(rest)
        if len(flagged) == len(rest):
            self._count_flags(broken, flagged)
            return None, _NONE
        if flagged:
            violations = self._flagged_last(violations)
        return violations, _NONE

    def _flagged_last(self, violations: list[Violation]) -> list[Violation]:
        """A quarantined record's violations, its flagged ones listed after the others, marked
        (the flag rules' come last already: ``RecordChecks.check``)."""
        return [v for v in violations if not self._is_flagged(v)] + [
            v.as_flagged() for v in violations if self._is_flagged(v)
        ]

    def _is_flagged(self, violation: Violation) -> bool:
        """Marked already (a flag rule's), or a flaggable breach of a flagged field."""
        return violation.flagged or self._is_flagged_field(violation)

    def _is_flagged_field(self, violation: Violation) -> bool:
        name = violation.field
        if name is None or violation.kind not in FLAGGABLE_KINDS:
            return False
        # a nested path (``levels[3].price``) belongs to its top-level field
        return name in self._flag_fields or (
            name.split(".", 1)[0].split("[", 1)[0] in self._flag_fields
        )

    def _flagged_pairs(self, violations: list[Violation]) -> list[tuple[str, str]]:
        # by metric path (levels[].price): one count per declared path, not per index
        return [
            (metric_path(str(v.field)), str(v.kind))
            for v in violations
            if self._is_flagged_field(v)
        ]

    def _count_flags(self, rules: Sequence[str], fields: Sequence[tuple[str, str]]) -> None:
        """Count a valid record's flagged breaches (at least one)."""
        self._flagged_records += 1
        self._flagged.update(rules)
        if fields:
            if self._flagged_fields is None:
                self._flagged_fields = Counter()
            self._flagged_fields.update(fields)

    def _log_error(self, where: str, exc: Exception) -> None:
        if not self._error_logged:
            self._error_logged = True
            _log.error("validator error in the %s (logged once per batch)", where, exc_info=exc)

    def _validator_error(self, index: int, raw: Any, exc: Exception) -> QuarantinedRecord:
        self._log_error(f"check of record {index} (quarantined as validator_error)", exc)
        violation = Violation(None, ViolationKind.VALIDATOR_ERROR, type_label(exc))
        return self._quarantine(index, raw, [violation])

    def _note_unknown(self, names: list[str]) -> None:
        """Keep a record's undeclared names up to MAX_UNKNOWN_NAMES per batch; count the
        others not kept (one set difference: time linear in the record's keys)."""
        kept = self._unknown
        if len(kept) + len(names) <= MAX_UNKNOWN_NAMES:
            kept.update(names)
            return
        at = 0
        while len(kept) < MAX_UNKNOWN_NAMES and at < len(names):
            kept.add(names[at])
            at += 1
        self._unknown_left_out += len(set(names[at:]).difference(kept))

    def _accept(self, index: int, record: Any, nulls: Any) -> QuarantinedRecord | None:
        """Count a valid record (``nulls``: the null nullable-field slots)."""
        if nulls:
            counts = self._null_counts
            for slot in nulls:
                counts[slot] += 1
        self._valid_count += 1
        if self._keep:
            self._kept.one(index, record)
        return None

    def _quarantine(self, index: int, raw: Any, violations: list[Violation]) -> QuarantinedRecord:
        quarantined = QuarantinedRecord(index, raw, violations)
        self._quarantined_count += 1
        counts = self._violation_counts
        # Keyed by the kind as given (a ViolationKind hashes and compares as its text;
        # finish() makes the keys plain text once per key, not once per record).
        if len(violations) == 1:  # a lone violation is never a flagged one
            (violation,) = violations
            counts[(violation.field, violation.kind)] += 1
            if violation.rule is not None:
                self._rule_counts[violation.rule] += 1
        else:
            kept = [v for v in violations if not v.flagged] if self._may_flag else violations
            counts.update([(v.field, v.kind) for v in kept])
            self._rule_counts.update([v.rule for v in kept if v.rule is not None])
        if self._keep:
            self._quarantined.append(quarantined)
        return quarantined

    @property
    def total_records(self) -> int:
        """Records added so far."""
        return self._total

    def finish(self) -> SchemaContractValidationReport:
        """Compute the null ceiling and drift over the batch and build the report."""
        verifier = self._verifier
        contract = verifier.contract
        survivors = self._valid_count
        null_rates: dict[str, float] = {}
        breaches: dict[str, float] = {}
        # nulls * 100 / survivors > num / den, exactly, in ints (a Fraction per field and
        # batch was a third of a small batch's cost to finish).
        num, den = verifier._ceiling.numerator, verifier._ceiling.denominator
        for name, nulls in zip(self._inspector.nullable_names, self._null_counts, strict=True):
            rate = nulls * 100.0 / survivors if survivors else 0.0
            null_rates[name] = rate
            if nulls and nulls * 100 * den > num * survivors:
                breaches[name] = rate
        return SchemaContractValidationReport(
            contract_name=contract.name,
            contract_version=contract.version,
            max_allowed_null_pct=float(contract.max_allowed_null_pct),
            total_records=self._total,
            valid_records=(
                DecodedRecords(parts=self._kept.parts())
                if self._payloads_seen
                else self._kept.records()
            ),
            valid_indices=self._kept.positions(),
            quarantined_records=self._quarantined,
            null_rates=null_rates,
            null_breach_fields=breaches,
            observed_unknown_fields=set(self._unknown),
            unknown_fields_left_out=self._unknown_left_out,
            violation_counts=Counter(
                {(name, str(kind)): n for (name, kind), n in self._violation_counts.items()}
            ),
            null_counts=dict(zip(self._inspector.nullable_names, self._null_counts, strict=True)),
            valid_count=self._valid_count,
            quarantined_count=self._quarantined_count,
            flagged_counts=_copy(self._flagged),
            flagged_field_counts=_copy(self._flagged_fields),
            flagged_records=self._flagged_records,
            rule_violation_counts=_copy(self._rule_counts),
        )


def _copy(counts: Counter[Any] | None) -> Counter[Any]:
    """A copy of a batch's counter (an empty one is built without the Mapping check)."""
    return Counter(counts) if counts else Counter()
