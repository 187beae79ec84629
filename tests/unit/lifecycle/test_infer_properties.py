"""The promise of a draft, over random samples: it loads as a contract file, and the
verifier quarantines none of the sample's records and breaches no null ceiling."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream_validator.verify import DataSchemaContractVerifier
from tests.unit.lifecycle.drafting import draft_of, lines_of, reloaded

KEYS = st.sampled_from(["a", "b", "c", "px", "é", "x.y", "", "levels"])
ZONES = st.sampled_from([None, UTC, timezone(timedelta(hours=5, minutes=30))])
DATETIMES = st.builds(
    lambda moment, zone, sep: moment.replace(tzinfo=zone).isoformat(sep=sep),
    st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1)),
    ZONES,
    st.sampled_from(["T", " "]),
)
TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=8)
SCALARS = {
    "int": st.integers(min_value=-(2**63), max_value=2**64 - 1),
    "float": st.floats(allow_nan=False, allow_infinity=False),
    "str": TEXT,
    "bool": st.booleans(),
    "datetime": DATETIMES,
}
SCALAR = st.one_of(st.none(), *SCALARS.values())
ANY_VALUE = st.recursive(
    SCALAR,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4),
    max_leaves=12,
)
JUNK = st.sampled_from([b"nope", b"[1, 2]", b"null", b'{"a": 1, "a": 2}', b"", b"7"])


def _shaped(kind: str) -> st.SearchStrategy[object]:
    """Values of mostly one kind (with a few nulls), or nested shapes of such values."""
    if kind in SCALARS:
        return st.none() | SCALARS[kind] | SCALARS[kind] | SCALARS[kind]
    if kind == "object":
        return st.fixed_dictionaries({"p": _shaped("float"), "q": _shaped("int")})
    return st.lists(st.fixed_dictionaries({"p": _shaped("int")}) | st.none(), max_size=3)


@st.composite
def samples(draw: st.DrawFn) -> list[bytes]:
    """A sample: records with a mostly consistent shape, some free-form ones, some junk."""
    kinds = draw(st.dictionaries(KEYS, st.sampled_from([*SCALARS, "object", "array"]), max_size=5))
    shaped = st.fixed_dictionaries({key: _shaped(kind) for key, kind in kinds.items()})
    free = st.dictionaries(KEYS, ANY_VALUE, max_size=5)
    records = draw(st.lists(shaped | free, max_size=25))
    lines = lines_of(records)
    for junk in draw(st.lists(JUNK, max_size=3)):
        lines.insert(draw(st.integers(0, len(lines))), junk)
    return lines


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    samples(),
    st.sampled_from([Fraction(0), Fraction(1, 10), Fraction(1, 2), Fraction(3)]),
    st.booleans(),
)
def test_a_draft_quarantines_none_of_its_sample(
    lines: list[bytes], margin: Fraction, bounds: bool
) -> None:
    """Random JSON-lines -> draft: it loads back as itself, and validating the sample with
    it (fast path and full rules) quarantines only the lines that are no record."""
    draft, sample = draft_of(lines, margin=margin, bounds=bounds)
    if draft.contract is None:
        assert draft.problems == []
        return
    assert reloaded(draft, margin) == draft.contract
    no_record = sum(sample.skipped.values())
    for fast_path in (True, False):
        verifier = DataSchemaContractVerifier(draft.contract, fast_path=fast_path)
        report = verifier.validate_payloads(lines)
        assert report.quarantined_count == no_record, [
            q.violations for q in report.quarantined_records
        ]
        assert report.null_breach_fields == {}
