"""The totals of one offline ``validate`` run, as JSON and for the terminal. PURE."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Final

from stream_validator.labels import MAX_SUMMARY_NAMES, bounded_counts, bounded_names, count_bounded
from stream_validator.verify import SchemaContractValidationReport

__all__ = ["MAX_LISTED_BATCHES", "FileSummary", "render_summary"]

#: Invalid batches listed in full (the others are counted).
MAX_LISTED_BATCHES: Final = 20


@dataclass(slots=True)
class FileSummary:
    """Totals of one validate run over a JSON-lines input."""

    contract: str
    contract_version: str
    lines: int = 0
    blank_lines: int = 0
    records: int = 0
    valid: int = 0
    quarantined: int = 0
    batches: int = 0
    violations_by_kind: Counter[str] = field(default_factory=Counter)
    violations_by_field: Counter[str] = field(default_factory=Counter)
    #: Valid records with a flagged breach; per flag rule; per (flagged field, kind).
    flagged: int = 0
    flagged_by_rule: Counter[str] = field(default_factory=Counter)
    flagged_by_field: Counter[tuple[str, str]] = field(default_factory=Counter)
    null_counts: Counter[str] = field(default_factory=Counter)
    unknown_fields: set[str] = field(default_factory=set)
    unknown_fields_left_out: int = 0
    invalid_batches: list[dict[str, Any]] = field(default_factory=list)
    invalid_batch_count: int = 0
    symbol_state: dict[str, Any] | None = None

    @property
    def is_valid(self) -> bool:
        """True when every batch was valid."""
        return self.invalid_batch_count == 0

    def add(self, report: SchemaContractValidationReport, first_line: int, last_line: int) -> None:
        """Fold one batch report into the totals."""
        self.batches += 1
        self.records += report.total_records
        self.valid += report.valid_count
        self.quarantined += report.quarantined_count
        self.violations_by_kind.update(report.counts_by_kind())
        for name, n in report.counts_by_field().items():
            count_bounded(self.violations_by_field, name, n)
        self.flagged += report.flagged_records
        self.flagged_by_rule.update(report.flagged_counts)
        self.flagged_by_field.update(report.flagged_field_counts)
        self.null_counts.update(report.null_counts)
        for name in report.observed_unknown_fields:
            # Payload-derived: memory stays bounded however many distinct keys a file holds.
            if name in self.unknown_fields or len(self.unknown_fields) < MAX_SUMMARY_NAMES:
                self.unknown_fields.add(name)
            else:
                self.unknown_fields_left_out += 1
        self.unknown_fields_left_out += report.unknown_fields_left_out
        if not report.is_batch_valid:
            self.invalid_batch_count += 1
            if len(self.invalid_batches) < MAX_LISTED_BATCHES:
                self.invalid_batches.append(
                    {
                        "batch": self.batches,
                        "lines": [first_line, last_line],
                        "quarantined": report.quarantined_count,
                        "null_breach_fields": report.null_breach_fields,
                    }
                )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready summary."""
        rates = {
            name: (n * 100.0 / self.valid if self.valid else 0.0)
            for name, n in self.null_counts.items()
        }
        unknown, left_out = bounded_names(self.unknown_fields)
        by_field, fields_left_out = bounded_counts(self.violations_by_field)
        # Rule and field names come from the contract (a closed set): not bounded.
        flagged_by_field: dict[str, dict[str, int]] = {}
        for (name, kind), n in sorted(self.flagged_by_field.items()):
            flagged_by_field.setdefault(name, {})[kind] = n
        return {
            "contract": self.contract,
            "contract_version": self.contract_version,
            "lines": self.lines,
            "blank_lines_skipped": self.blank_lines,
            "records": self.records,
            "valid": self.valid,
            "quarantined": self.quarantined,
            "flagged": self.flagged,
            "flagged_by_rule": dict(sorted(self.flagged_by_rule.items())),
            "flagged_by_field": flagged_by_field,
            "batches": self.batches,
            "invalid_batches": self.invalid_batch_count,
            "invalid_batch_details": self.invalid_batches,
            "violations_by_kind": dict(self.violations_by_kind.most_common()),
            "violations_by_field": by_field,
            "violations_by_field_left_out": fields_left_out,
            "null_rates_overall": rates,
            "observed_unknown_fields": unknown,
            # At least this many more: names past the in-memory cap are counted per batch.
            "observed_unknown_fields_left_out": left_out + self.unknown_fields_left_out,
            "symbol_state": self.symbol_state,
            "verdict": "VALID" if self.is_valid else "INVALID",
        }


def render_summary(summary: FileSummary) -> str:
    """Human-readable summary for the terminal."""
    data = summary.as_dict()
    out = [
        f"contract {data['contract']} v{data['contract_version']}: {data['records']} records"
        f" in {data['batches']} batch(es), {data['valid']} valid"
        + (f" ({data['flagged']} flagged)" if data["flagged"] else "")
        + f", {data['quarantined']} quarantined"
        + (
            f", {data['blank_lines_skipped']} blank lines skipped"
            if data["blank_lines_skipped"]
            else ""
        ),
    ]
    for title, key in (
        ("violations by kind", "violations_by_kind"),
        ("violations by field", "violations_by_field"),
    ):
        if data[key]:
            out.append(f"{title}: " + ", ".join(f"{k}={v}" for k, v in data[key].items()))
    if data["flagged_by_rule"]:
        flags = data["flagged_by_rule"].items()
        out.append("flagged by rule: " + ", ".join(f"{k}={v}" for k, v in flags))
    if data["flagged_by_field"]:
        out.append(
            "flagged by field: "
            + ", ".join(
                f"{name} {kind}={n}"
                for name, kinds in data["flagged_by_field"].items()
                for kind, n in kinds.items()
            )
        )
    if data["null_rates_overall"]:
        out.append(
            "null rates (valid records): "
            + ", ".join(f"{k}={v:.3f}%" for k, v in data["null_rates_overall"].items())
        )
    for detail in data["invalid_batch_details"]:
        lo, hi = detail["lines"]
        breaches = ", ".join(f"{k}={v:.3f}%" for k, v in detail["null_breach_fields"].items())
        out.append(
            f"invalid batch {detail['batch']} (lines {lo}-{hi}):"
            f" {detail['quarantined']} quarantined"
            + (f", null ceiling breached: {breaches}" if breaches else "")
        )
    symbol_state = data["symbol_state"]
    if symbol_state and symbol_state["events"]:
        out.append(
            "per-symbol state events: "
            + ", ".join(
                # Symbols are payload values: escaped, so no control character reaches a terminal.
                f"{kind}={found['count']} (e.g. {', '.join(map(_printable, found['examples']))})"
                for kind, found in symbol_state["events"].items()
            )
        )
    if data["observed_unknown_fields"]:
        out.append("schema drift, unknown fields: " + ", ".join(data["observed_unknown_fields"]))
    out.append(f"verdict: {data['verdict']}")
    return "\n".join(out)


def _printable(text: str) -> str:
    return text if text.isprintable() else ascii(text)
