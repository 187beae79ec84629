"""PURE: the accounting and the end-of-run summary of one replay (JSON or human text).

Exit codes of ``stream-validator replay``:

    0    every selected record was replayed (in a dry run: would pass)
    1    some selected record was not: still failing, exhausted, held back or unreplayable
    2    usage or configuration error (bad arguments, config, contract, missing topic)
    3    Kafka error (broker unreachable, delivery or commit failed, fenced by another run)
    130  interrupted (SIGINT/SIGTERM); chunks committed before the signal stay committed
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from stream_validator.errors import ReplayExit
from stream_validator.labels import bounded_counts, count_bounded
from stream_validator.replay.planner import Decision, Outcome, ReplayOutput

_NOT_DELIVERED = (
    Outcome.STILL_FAILING,
    Outcome.EXHAUSTED,
    Outcome.HELD_BACK,
    Outcome.UNREPLAYABLE,
)
_MESSAGE_CHARS = 200


@dataclass(slots=True)
class ReplaySummary:
    """Counts by outcome, violations by kind and field, and a few examples per outcome."""

    dlq_topic: str
    target: str
    group: str
    contract: str
    contract_version: str
    dry_run: bool
    max_examples: int = 3
    records: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    requeued: int = 0
    truncated_requeues: int = 0
    delivered: Counter[str] = field(default_factory=Counter)
    violations_by_kind: Counter[str] = field(default_factory=Counter)
    violations_by_field: Counter[str] = field(default_factory=Counter)
    unreplayable: Counter[str] = field(default_factory=Counter)
    filtered: Counter[str] = field(default_factory=Counter)
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    committed: dict[int, int] = field(default_factory=dict)
    interrupted: bool = False
    error: str | None = None

    def name(self, outcome: Outcome) -> str:
        """The summary key of an outcome ("passed" reads "replayed" or "would_pass")."""
        if outcome is Outcome.PASSED:
            return "would_pass" if self.dry_run else "replayed"
        return str(outcome)

    def add(self, decision: Decision, output: ReplayOutput | None) -> None:
        """Account for one decided record and the output written (or planned) for it."""
        name = self.name(decision.outcome)
        self.records += 1
        self.outcomes[name] += 1
        if output is not None and output.kind == "requeue":
            self.requeued += 1
            self.truncated_requeues += int(output.truncated)
        elif output is not None:
            self.delivered[output.topic] += 1
        if decision.outcome is Outcome.UNREPLAYABLE:
            self.unreplayable[str(decision.reason)] += 1
        elif decision.outcome is Outcome.FILTERED_OUT:
            self.filtered[str(decision.reason)] += 1
        for violation in decision.violations:
            self.violations_by_kind[str(violation.kind)] += 1
            count_bounded(self.violations_by_field, violation.field or "<record>")
        listed = self.examples.setdefault(name, [])
        if len(listed) < self.max_examples and decision.outcome is not Outcome.FILTERED_OUT:
            listed.append(_example(decision))

    def not_delivered(self) -> int:
        """Selected records that did not (would not) reach the target."""
        return sum(self.outcomes[self.name(o)] for o in _NOT_DELIVERED)

    def exit_code(self) -> int:
        """See the module docstring: 3 on a Kafka error, 130 when interrupted, else 0 or 1."""
        if self.error is not None:
            return ReplayExit.KAFKA
        if self.interrupted:
            return ReplayExit.INTERRUPTED
        return ReplayExit.NOT_ALL if self.not_delivered() else ReplayExit.OK

    def as_dict(self) -> dict[str, Any]:
        """The JSON summary."""
        return {
            "dry_run": self.dry_run,
            "dlq_topic": self.dlq_topic,
            "target": self.target,
            "group": self.group,
            "contract": self.contract,
            "contract_version": self.contract_version,
            "records": self.records,
            "outcomes": {self.name(o): self.outcomes[self.name(o)] for o in Outcome},
            "would_requeue" if self.dry_run else "requeued": self.requeued,
            "truncated_requeues": self.truncated_requeues,
            "delivered_by_topic": dict(self.delivered),
            "unreplayable_by_reason": dict(self.unreplayable),
            "filtered_out_by": dict(self.filtered),
            "violations_by_kind": dict(self.violations_by_kind),
            "violations_by_field": bounded_counts(self.violations_by_field)[0],
            "examples": self.examples,
            "committed_offsets": {str(p): o for p, o in sorted(self.committed.items())},
            "interrupted": self.interrupted,
            "error": self.error,
            "exit_code": self.exit_code(),
        }

    def render(self) -> str:
        """The human summary."""
        lines = []
        if self.dry_run:
            lines.append("DRY RUN: nothing was written and no offsets were committed")
        lines.append(
            f"replay {self.dlq_topic} -> {self.target}  group {self.group}"
            f"  contract {self.contract} v{self.contract_version}"
        )
        lines.append(f"DLQ records read: {self.records}")
        for outcome in Outcome:
            name = self.name(outcome)
            extra = ""
            if outcome is Outcome.STILL_FAILING:
                verb = "would requeue" if self.dry_run else "requeued"
                extra = f"  ({verb} {self.requeued} with replay_count + 1)"
            lines.append(f"  {name:<16}{self.outcomes[name]:>8}{extra}")
        for title, counts in (
            ("would deliver to" if self.dry_run else "delivered to", self.delivered),
            ("unreplayable", self.unreplayable),
            ("filtered out by", self.filtered),
            ("still failing by kind", self.violations_by_kind),
            ("still failing by field", Counter(bounded_counts(self.violations_by_field)[0])),
        ):
            if counts:
                lines.append(f"{title}: {_counts(counts)}")
        if self.truncated_requeues:
            lines.append(
                f"requeued envelopes truncated (now unreplayable): {self.truncated_requeues}"
            )
        shown = [(n, e) for n, items in self.examples.items() for e in items]
        if shown:
            lines.append("examples:")
            lines.extend(f"  {name:<16}{_describe(example)}" for name, example in shown)
        if self.interrupted:
            lines.append("interrupted: committed chunks stay committed; run again to continue")
        if self.error:
            lines.append(f"error: {self.error}")
        return "\n".join(lines)


def _example(decision: Decision) -> dict[str, Any]:
    record = decision.record
    example: dict[str, Any] = {
        "dlq": {"topic": record.topic, "partition": record.partition, "offset": record.offset},
        "source": None,
        "reason": decision.reason or None,
        "detail": decision.detail or None,
        "violations": [
            {**v.as_dict(), "message": v.message[:_MESSAGE_CHARS]} for v in decision.violations[:3]
        ],
    }
    if decision.envelope is not None:
        original = decision.envelope.original
        example["source"] = {
            "topic": original.topic,
            "partition": original.partition,
            "offset": original.offset,
        }
        example["replay_count"] = decision.envelope.replay_count
    return example


def _describe(example: dict[str, Any]) -> str:
    dlq = example["dlq"]
    text = f"{dlq['topic']}[{dlq['partition']}]@{dlq['offset']}"
    source = example["source"]
    if source is not None:
        text += f" from {source['topic']}[{source['partition']}]@{source['offset']}"
    if example["reason"]:
        text += f"  {example['reason']}"
    if example["detail"]:
        text += f": {example['detail']}"
    for v in example["violations"]:
        text += f"  {v['field'] or '<record>'} {v['kind']}: {v['message']}"
    return text


def _counts(counts: Counter[str]) -> str:
    return ", ".join(f"{name} {n}" for name, n in counts.most_common())
