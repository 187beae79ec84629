"""DataSchemaContractVerifier: records (or raw bytes) in, a report out. PURE."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from stream_validator.contracts.check import check_contract
from stream_validator.contracts.model import SchemaContract
from stream_validator.contracts.rulespec import RuleAction
from stream_validator.verify.batch import BatchAccumulator
from stream_validator.verify.fastpath import compile_fast_check
from stream_validator.verify.native import NativeCheck, UnsupportedContract
from stream_validator.verify.nested import NestedInspector
from stream_validator.verify.recordchecks import RecordChecks
from stream_validator.verify.report import SchemaContractValidationReport
from stream_validator.verify.rules import RecordInspector
from stream_validator.verify.rustcore import RustCheck, native_enabled

if TYPE_CHECKING:
    from stream_validator._native import StateRows

DEFAULT_MAX_PAYLOAD_BYTES = 1_048_576


class DataSchemaContractVerifier:
    """Validates batches of records against one SchemaContract.

    Raises ValueError (ContractError) at construction for a malformed contract.
    Bad records never raise: they are quarantined with every violation listed.
    Payloads take the Rust verdict core (``rustcore``) when it can plan the contract and
    ``native`` is not False (None: unless the environment sets ``SV_NATIVE=0``), else the
    msgspec fast path (``native``), unless ``fast_path=False``; the full rules decide
    every payload they do not settle, so reports are the same.
    """

    __slots__ = (
        "_ceiling",
        "_checks",
        "_fast_check",
        "_flag_fields",
        "_flag_rules",
        "_inspector",
        "_native",
        "_non_finite",
        "_rust",
        "contract",
        "max_payload_bytes",
    )

    def __init__(
        self,
        contract: SchemaContract,
        max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES,
        *,
        fast_path: bool = True,
        native: bool | None = None,
    ) -> None:
        check_contract(contract)
        if (
            not isinstance(max_payload_bytes, int)
            or isinstance(max_payload_bytes, bool)
            or max_payload_bytes <= 0
        ):
            raise ValueError(f"max_payload_bytes must be a positive int, got {max_payload_bytes!r}")
        self.contract = contract
        self.max_payload_bytes = max_payload_bytes
        # Object and array fields are walked by path; the msgspec fast path declines such
        # contracts (structgen: UnsupportedContract), so the rules judge every record.
        self._inspector = (
            NestedInspector(contract) if contract.has_nested_fields else RecordInspector(contract)
        )
        self._checks = RecordChecks(contract)
        # Fields whose checks only flag: their violations alone leave a record valid.
        self._flag_fields = frozenset(
            spec.name for spec in contract.fields if spec.action == RuleAction.FLAG
        )
        self._flag_rules = any(spec.action == RuleAction.FLAG for spec in contract.rules)
        self._fast_check = compile_fast_check(contract)
        # fast_path=False: the full rules only (the reference in the differential test).
        self._native: NativeCheck | None = None
        self._rust: RustCheck | None = None
        if fast_path and (native_enabled() if native is None else native):
            self._rust = RustCheck.of(contract, max_payload_bytes)
        if fast_path:
            try:
                self._native = NativeCheck(contract, max_payload_bytes)
            except UnsupportedContract:  # e.g. an int bound a double cannot hold exactly
                self._native = None
        # Exact decimal value of the limit, so "equal to the ceiling" is never a
        # breach because of binary floating point (e.g. 0.3).
        self._ceiling = Fraction(repr(float(contract.max_allowed_null_pct)))
        # The fields whose NaN/±Inf rates are reported: the only ones where those pass.
        self._non_finite = tuple(
            spec.name
            for spec in contract.fields
            if spec.expected_type is float and spec.allow_non_finite
        )

    def validate_batch(
        self, records: Iterable[object], *, now: datetime | None = None
    ) -> SchemaContractValidationReport:
        """Validate already-decoded records (mappings expected); ``now`` as below.

        The report counts NaN and ±Inf per float field with ``allow_non_finite``.
        """
        batch = self.start_batch(now=now)
        fields = self._non_finite
        if not fields:
            for record in records:
                batch.add_record(record)
            return batch.finish()
        nan = dict.fromkeys(fields, 0)
        inf = dict.fromkeys(fields, 0)
        for record in records:
            if batch.add_record(record) is None:
                _count_non_finite(record, fields, nan, inf)
        return replace(batch.finish(), nan_counts=nan, inf_counts=inf)

    def validate_payloads(
        self,
        payloads: Sequence[bytes | bytearray | memoryview | None],
        *,
        now: datetime | None = None,
        decoded: list[Any] | None = None,
        rows: StateRows | None = None,
    ) -> SchemaContractValidationReport:
        """Validate raw Kafka values: decode each as JSON, then validate it.

        ``raw_payload`` of a quarantined record is the original bytes; ``valid_records``
        decodes the valid ones on access, and ``valid_indices`` points back at their bytes.
        ``now`` is the time of validation the skew windows (``max_future_s``,
        ``max_age_s``) are measured from (naive: UTC); None skips them. The verifier
        reads no clock: the caller's clock decides.
        ``decoded``: extended with one entry per payload, the fast path's Struct of a valid
        payload (read its fields with ``field_getter``) or None (declined by the fast path,
        whatever the full rules decided), so a caller reading a few fields of the valid
        records need not decode them again.
        ``rows``: a ``StateRows`` from ``state_rows``, extended with one row per payload.
        """
        batch = self.start_batch(now=now)
        batch.add_payloads(payloads, decoded, rows)
        report = batch.finish()
        if not self._non_finite:
            return report
        # The JSON decoder refuses NaN and ±Inf: over bytes their rates are 0 by construction.
        zeros = dict.fromkeys(self._non_finite, 0)
        return replace(report, nan_counts=zeros, inf_counts=dict(zeros))

    def field_getter(self, *names: str) -> Callable[[Any], Any] | None:
        """Reads contract field ``names[0]`` of a Struct that ``validate_payloads`` put in
        ``decoded`` (of several names: the tuple of their values, as ``attrgetter``); None
        when there is no fast path (``decoded`` holds only None) or a name is not a field."""
        if self._native is None or self._rust is not None:  # the core hands out no Structs
            return None
        return self._native.getter(*names)

    def state_rows(
        self, key: str, seq: str | None = None, time: str | None = None, quotes: Sequence[str] = ()
    ) -> StateRows | None:
        """A native ``StateRows`` for ``validate_payloads(rows=...)``: the Rust core reads these
        fields of each payload as it judges it (as ``SymbolStateTracker.read`` reads them
        from the decoded record; a row it cannot read so is left absent), for the native
        per-symbol state (``SymbolState.observe_scanned``) to take without a second decode.
        None when the Rust core does not judge this contract's payloads, or cannot read
        those fields (not declared, or a quote field that is not a number)."""
        if self._rust is None:
            return None
        return self._rust.state_rows(key, seq, time, quotes)

    def start_batch(
        self, *, keep_records: bool = True, now: datetime | None = None
    ) -> BatchAccumulator:
        """An incremental batch; with keep_records=False only counts are kept (flat memory)."""
        return BatchAccumulator(self, keep_records=keep_records, now=now)


def _count_non_finite(
    record: object, fields: tuple[str, ...], nan: dict[str, int], inf: dict[str, int]
) -> None:
    """Count a valid record's NaN and ±Inf values (its float fields passed their checks)."""
    if not isinstance(record, Mapping):
        return
    for name in fields:
        value = record.get(name)
        if isinstance(value, float) and not math.isfinite(value):
            if value != value:
                nan[name] += 1
            else:
                inf[name] += 1
