"""Outputs that cannot go where the plan sent them become DLQ entries instead: a clean
record the broker refused alone (``delivery_rejected``) or one that key and headers push past
the client's size limit (``oversized``). The plan stays pure; the committer's outcome says
what was actually delivered."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime

from stream_validator.records import OutputRecord
from stream_validator.service.delivery.rejections import Rejections
from stream_validator.service.plan.planner import BatchPlan, RouteProcessor
from stream_validator.verify import Violation, ViolationKind


class Replacements:
    """Rewrites a planned output before it is produced (the plan itself stays pure)."""

    def __init__(
        self,
        processors: Mapping[str, RouteProcessor],
        rejections: Rejections,
        *,
        max_message_bytes: int,
        clock: Callable[[], datetime],
    ) -> None:
        self._processors = processors
        self._rejections = rejections
        self._max_message_bytes = max_message_bytes
        self._clock = clock

    def prepare(self, plan: BatchPlan, output: OutputRecord) -> OutputRecord:
        """The output to produce: a DLQ entry for a clean record that cannot be forwarded."""
        if output.kind != "clean":
            return output
        refused = self._rejections.rejected(output.source)
        if refused is not None:
            violation = Violation(
                None,
                ViolationKind.DELIVERY_REJECTED,
                f"the broker refused the record for the clean topic {refused}",
            )
            return self._dlq(plan, output, violation)
        return output

    def oversized(self, plan: BatchPlan, output: OutputRecord) -> OutputRecord:
        """The DLQ entry for a valid record that key and headers push past the size limit."""
        violation = Violation(
            None,
            ViolationKind.OVERSIZED,
            f"record (value, key and headers) exceeds max_message_bytes {self._max_message_bytes}",
        )
        return self._dlq(plan, output, violation)

    def _dlq(self, plan: BatchPlan, output: OutputRecord, violation: Violation) -> OutputRecord:
        processor = self._processors[plan.route]
        context = processor.envelope_context(plan.report, self._clock().isoformat())
        return processor.dlq_output(output.source, [violation], context)
