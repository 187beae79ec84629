"""Per-field NaN and ±Inf counts and rates, for float fields with allow_non_finite."""

from __future__ import annotations

import math

from stream_validator import DataSchemaContractVerifier, FieldSpec, SchemaContract

CONTRACT = SchemaContract(
    "quotes",
    [
        FieldSpec("px", float, allow_non_finite=True),
        FieldSpec("iv", float, is_nullable=True, allow_non_finite=True),
        FieldSpec("size", float),
    ],
    max_allowed_null_pct=100.0,
)


def test_dicts_count_nan_and_inf_separately_per_field() -> None:
    """Over decoded records: NaN and ±Inf are counted apart, rates over the valid records."""
    records = [
        {"px": math.nan, "iv": 1.0, "size": 1.0},
        {"px": math.inf, "iv": -math.inf, "size": 1.0},
        {"px": 1.0, "iv": None, "size": 1.0},
        {"px": 2.0, "iv": 2.0, "size": 1.0},
    ]
    report = DataSchemaContractVerifier(CONTRACT).validate_batch(records)
    assert report.nan_counts == {"px": 1, "iv": 0}
    assert report.inf_counts == {"px": 1, "iv": 1}
    assert report.nan_rates == {"px": 25.0, "iv": 0.0}
    assert report.inf_rates == {"px": 25.0, "iv": 25.0}
    assert report.null_rates == {"iv": 25.0}
    assert report.summary()["nan_rates"] == {"px": 25.0, "iv": 0.0}


def test_quarantined_records_are_not_counted() -> None:
    """A NaN in a field that forbids it quarantines the record; its other values do not count."""
    records = [{"px": math.nan, "iv": 1.0, "size": math.nan}, {"px": 1.0, "iv": 1.0, "size": 1.0}]
    report = DataSchemaContractVerifier(CONTRACT).validate_batch(records)
    assert report.quarantined_count == 1
    assert report.nan_counts == {"px": 0, "iv": 0}
    assert "size" not in report.nan_rates


def test_bytes_cannot_carry_non_finite_values_so_rates_are_zero() -> None:
    """Over bytes the decoder refuses NaN (undecodable); the fields' rates are 0, not absent."""
    verifier = DataSchemaContractVerifier(CONTRACT)
    report = verifier.validate_payloads(
        [
            b'{"px":NaN,"iv":1.0,"size":1.0}',
            b'{"px":1.0,"iv":1e999,"size":1.0}',
            b'{"px":1.0,"iv":1.0,"size":1.0}',
        ]
    )
    assert report.counts_by_kind() == {"undecodable": 2}
    assert report.nan_rates == {"px": 0.0, "iv": 0.0}
    assert report.inf_rates == {"px": 0.0, "iv": 0.0}


def test_a_contract_without_such_fields_reports_none() -> None:
    """No float field allows non-finite values: the rates are empty."""
    contract = SchemaContract("plain", [FieldSpec("px", float)])
    report = DataSchemaContractVerifier(contract).validate_batch([{"px": 1.0}])
    assert report.nan_rates == {} and report.inf_rates == {}
