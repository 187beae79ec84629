"""Payloads with tens of thousands of undeclared or repeated keys: bounded violations,
names, memory and time, with counts of what was left out."""

from __future__ import annotations

import dataclasses
import tracemalloc

import pytest

from stream_validator import DataSchemaContractVerifier, load_contract
from stream_validator.verify.report import (
    MAX_KEY_CHARS,
    MAX_NAMED_VIOLATIONS,
    MAX_UNKNOWN_NAMES,
)
from tests.support.ticks import TICK_YAML, tick
from tests.support.timing import best_time

KEYS = 50_000


def verifier(*, forbid: bool) -> DataSchemaContractVerifier:
    contract = dataclasses.replace(load_contract(TICK_YAML), forbid_unknown_fields=forbid)
    return DataSchemaContractVerifier(contract)


def flooded(seq: int, keys: int = KEYS) -> bytes:
    """A valid tick plus ``keys`` distinct undeclared keys (distinct across records too)."""
    return tick.json(seq, **{f"x{seq}_{j}": 1 for j in range(keys)})


def repeated(keys: int) -> bytes:
    """A valid tick plus ``keys`` distinct keys, each written twice."""
    extra = b"".join(b',"d%d":1,"d%d":1' % (j, j) for j in range(keys))
    return tick.json(0)[:-1] + extra + b"}"


def test_forbidden_unknown_keys_are_named_up_to_the_cap_then_counted() -> None:
    """50,000 forbidden keys give 50 named unknown_field violations and one 'and N more'."""
    report = verifier(forbid=True).validate_payloads([flooded(0)])
    (record,) = report.quarantined_records
    assert len(record.violations) == MAX_NAMED_VIOLATIONS + 1
    named, last = record.violations[:-1], record.violations[-1]
    assert [v.field for v in named] == [f"x0_{j}" for j in range(MAX_NAMED_VIOLATIONS)]
    assert last.field is None and last.kind == "unknown_field"
    assert last.message.startswith(f"and {KEYS - MAX_NAMED_VIOLATIONS} more undeclared fields")


@pytest.mark.parametrize("forbid", [False, True])
def test_batch_keeps_a_bounded_set_of_unknown_names_and_counts_the_rest(forbid: bool) -> None:
    """3 records x 50,000 distinct names: the first 1,000 kept, the other 149,000 counted."""
    report = verifier(forbid=forbid).validate_payloads([flooded(i) for i in range(3)])
    assert report.observed_unknown_fields == {f"x0_{j}" for j in range(MAX_UNKNOWN_NAMES)}
    assert report.unknown_fields_left_out == 3 * KEYS - MAX_UNKNOWN_NAMES
    assert report.drift_detected
    assert report.summary()["observed_unknown_fields_left_out"] == 3 * KEYS - MAX_UNKNOWN_NAMES


def test_a_name_already_kept_is_not_counted_as_left_out() -> None:
    """Records repeating the same 50,000 names: left out counts names not kept, per record."""
    same = tick.json(0, **{f"x{j}": 1 for j in range(KEYS)})
    report = verifier(forbid=False).validate_payloads([same, same])
    assert len(report.observed_unknown_fields) == MAX_UNKNOWN_NAMES
    assert report.unknown_fields_left_out == 2 * (KEYS - MAX_UNKNOWN_NAMES)


def test_long_unknown_names_are_cut_in_the_report_and_violations() -> None:
    """A 100,000-character key is named by its first MAX_KEY_CHARS characters (ending '...')."""
    long_key = "k" * 100_000
    report = verifier(forbid=True).validate_payloads([tick.json(0, **{long_key: 1})])
    cut = "k" * (MAX_KEY_CHARS - 3) + "..."
    assert report.observed_unknown_fields == {cut}
    assert report.quarantined_records[0].violations[0].field == cut


@pytest.mark.parametrize("forbid", [False, True])
def test_memory_does_not_grow_with_the_records_of_unknown_keys(forbid: bool) -> None:
    """Validating 8 records of 50,000 unknown keys peaks within 1.5x of validating one."""
    check = verifier(forbid=forbid)
    batches = {n: [flooded(i) for i in range(n)] for n in (1, 8)}
    peaks = {}
    for n, payloads in batches.items():
        tracemalloc.start()
        try:
            report = check.validate_payloads(payloads)
            peaks[n] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert report.total_records == n
    assert peaks[8] < 1.5 * peaks[1], peaks


@pytest.mark.parametrize("forbid", [False, True])
def test_time_is_linear_in_the_unknown_keys(forbid: bool) -> None:
    """Ten times the undeclared keys of a record cost well under 30x the time."""
    check = verifier(forbid=forbid)
    small, large = [flooded(0, KEYS // 10)], [flooded(0)]
    ratio = best_time(lambda: check.validate_payloads(large)) / best_time(
        lambda: check.validate_payloads(small)
    )
    assert ratio < 30, ratio


def test_repeated_keys_are_named_up_to_the_cap_then_counted() -> None:
    """20,000 keys written twice give 50 named duplicate_key violations and one 'and N more'."""
    report = verifier(forbid=False).validate_payloads([repeated(20_000)])
    duplicates = [v for v in report.quarantined_records[0].violations if v.kind == "duplicate_key"]
    assert len(duplicates) == MAX_NAMED_VIOLATIONS + 1
    assert duplicates[-1].field is None
    assert duplicates[-1].message.startswith(f"and {20_000 - MAX_NAMED_VIOLATIONS} more keys")


def test_time_is_linear_in_the_repeated_keys() -> None:
    """Ten times the repeated keys of a record cost well under 40x the time (was quadratic)."""
    check = verifier(forbid=False)
    small, large = [repeated(3_000)], [repeated(30_000)]
    ratio = best_time(lambda: check.validate_payloads(large)) / best_time(
        lambda: check.validate_payloads(small)
    )
    assert ratio < 40, ratio
