"""Property tests: the verifier never raises and every record lands in exactly one bucket."""

from __future__ import annotations

from datetime import datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from stream_validator import DataSchemaContractVerifier, FieldSpec, SchemaContract

CONTRACT = SchemaContract(
    "prop",
    [
        FieldSpec("price", float, min_value=0.0, max_value=1e6),
        FieldSpec("size", int, min_value=0),
        FieldSpec("symbol", str),
        FieldSpec("bid", float, is_nullable=True, allow_non_finite=True, max_value=10.0),
        FieldSpec("live", bool, is_nullable=True),
        FieldSpec("ts", datetime),
    ],
    max_allowed_null_pct=10.0,
)
VERIFIER = DataSchemaContractVerifier(CONTRACT, max_payload_bytes=2048)
FIELD_NAMES = st.sampled_from(["price", "size", "symbol", "bid", "live", "ts", "extra", ""])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)
records = st.one_of(
    json_values,
    st.dictionaries(FIELD_NAMES, json_values, max_size=8),
    st.fixed_dictionaries(
        {
            "price": st.floats(),
            "size": st.integers(),
            "symbol": st.text(max_size=5),
            "bid": st.none() | st.floats(),
            "live": st.none() | st.booleans(),
            "ts": st.datetimes() | st.text(max_size=30),
        }
    ),
)


def assert_partition(total: int, valid_indices: list[int], quarantined: list[int]) -> None:
    assert sorted(valid_indices + quarantined) == list(range(total))


@settings(max_examples=150, deadline=None)
@given(st.lists(records, max_size=20))
def test_validate_batch_never_raises_and_partitions(batch: list[object]) -> None:
    """Any JSON-like values: no exception, each record valid xor quarantined, rates in 0-100."""
    report = VERIFIER.validate_batch(batch)
    assert report.total_records == len(batch)
    assert_partition(
        len(batch), report.valid_indices, [q.index for q in report.quarantined_records]
    )
    assert all(q.violations for q in report.quarantined_records)
    assert all(0.0 <= rate <= 100.0 for rate in report.null_rates.values())
    assert report.is_batch_valid == (
        not report.quarantined_records and not report.null_breach_fields
    )


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.none() | st.binary(max_size=64) | st.builds(lambda s: s.encode(), st.text(max_size=64)),
        max_size=20,
    )
)
def test_validate_payloads_never_raises_and_partitions(payloads: list[bytes | None]) -> None:
    """Arbitrary bytes (and tombstones): no exception, each payload valid xor quarantined."""
    report = VERIFIER.validate_payloads(payloads)
    assert_partition(
        len(payloads), report.valid_indices, [q.index for q in report.quarantined_records]
    )
    for quarantined in report.quarantined_records:
        assert quarantined.raw_payload == payloads[quarantined.index]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "price": st.floats(0, 1e6),
                "size": st.integers(0, 10**6),
                "symbol": st.text(max_size=5),
                "bid": st.none() | st.floats(-1e3, 10),
                "live": st.none() | st.booleans(),
                "ts": st.datetimes(),
            }
        ),
        max_size=30,
    )
)
def test_conforming_records_all_pass(batch: list[dict[str, object]]) -> None:
    """Records generated inside the contract are never quarantined."""
    report = VERIFIER.validate_batch(batch)
    assert report.quarantined_records == []
