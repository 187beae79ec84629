"""KeptRecords and Positions (verify/kept.py): a batch's valid records and positions kept
as runs behave as the lists they replace (the report's valid_records / valid_indices)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream_validator.verify.kept import KeptRecords, Positions
from stream_validator.verify.report import DecodedRecords


def kept_from(steps: list[tuple[bool, int]]) -> tuple[KeptRecords, list[int], list[bytes]]:
    """Feed a KeptRecords as a batch would: steps of (a run?, length) over one payload
    list, a gap of one bad record after each; the positions and records expected."""
    payloads = [b'{"i":%d}' % i for i in range(sum(n + 1 for _, n in steps))]
    kept, positions, records = KeptRecords(), [], []
    at = 0
    for is_run, n in steps:
        if is_run:
            kept.run(payloads, 0, at, at + n)
        else:
            for i in range(at, at + n):
                kept.one(i, payloads[i])
        positions += range(at, at + n)
        records += payloads[at : at + n]
        at += n + 1
    return kept, positions, records


steps_st = st.lists(st.tuples(st.booleans(), st.integers(0, 5)), max_size=12)


@given(steps_st)
def test_positions_behave_as_the_list_of_ints(steps: list[tuple[bool, int]]) -> None:
    kept, expected, _ = kept_from(steps)
    got = kept.positions()
    assert got == expected and expected == got  # both ways
    assert not got.__ne__(expected)
    assert len(got) == len(expected) and list(got) == expected and bool(got) == bool(expected)
    assert [got[i] for i in range(len(got))] == expected
    assert [got[-i] for i in range(1, len(got) + 1)] == [
        expected[-i] for i in range(1, len(expected) + 1)
    ]
    assert got[1:3] == expected[1:3] and got[::-1] == expected[::-1]
    assert all(p in got for p in expected)
    assert not any(p in got for p in set(range(-1, len(expected) * 2 + 2)) - set(expected))
    # A list concatenated with them gives a list (as it did when they were a list).
    assert got + [99] == [*expected, 99]  # noqa: RUF005
    assert [99] + got == [99, *expected]  # noqa: RUF005
    assert repr(got) == repr(expected)


@given(steps_st)
def test_kept_records_keep_the_accepted_records_in_order(steps: list[tuple[bool, int]]) -> None:
    kept, _, expected = kept_from(steps)
    assert kept.records() == expected
    decoded = DecodedRecords(parts=kept.parts())
    assert len(decoded) == len(expected)
    assert decoded == [{"i": int(raw[5:-1])} for raw in expected]


def test_positions_refuse_an_index_out_of_range_and_compare_unequal_to_other_ints() -> None:
    got = Positions([0, 5], [2, 6])
    assert got == [0, 1, 5] and got != [0, 1, 4] and got != [0, 1] and got != "015"
    with pytest.raises(IndexError):
        got[3]
    with pytest.raises(IndexError):
        got[-4]
    assert Positions([], []) == [] and len(Positions([], [])) == 0


def test_runs_that_follow_on_merge_into_one() -> None:
    rows = [b"1", b"2", b"3", b"4"]
    kept = KeptRecords()
    kept.run(rows, 10, 0, 2)
    kept.run(rows, 10, 2, 4)
    assert kept.positions() == [10, 11, 12, 13]
    seqs, los, his = kept.parts()
    assert (len(seqs), los, his) == (1, [0], [4])
    # All of one list valid: the records are that list, unsliced.
    assert DecodedRecords(parts=kept.parts())._listed is rows


def test_records_accepted_one_at_a_time_are_the_list_itself() -> None:
    kept = KeptRecords()
    kept.one(0, {"a": 1})
    kept.one(2, {"a": 2})
    assert kept.records() == [{"a": 1}, {"a": 2}]
    assert kept.records() is kept.records()
    assert kept.positions() == [0, 2]


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(1, 4)), max_size=15), st.integers(1, 4))
def test_runs_given_together_keep_what_runs_given_one_by_one_keep(
    gaps_and_lengths: list[tuple[int, int]], group: int
) -> None:
    """``runs`` (a chunk's runs at once, as ``_settle`` gives them) against ``run``."""
    bounds: list[tuple[int, int]] = []
    at = 0
    for gap, n in gaps_and_lengths:
        at += gap
        bounds.append((at, at + n))
        at += n + 1  # a record not kept after each run
    rows = [b"%d" % i for i in range(at + 1)]
    one_by_one, together = KeptRecords(), KeptRecords()
    for lo, hi in bounds:
        one_by_one.run(rows, 7, lo, hi)
    for first in range(0, len(bounds), group):
        part = bounds[first : first + group]
        together.runs(rows, 7, [lo for lo, _ in part], [hi for _, hi in part])
    assert together.positions() == one_by_one.positions()
    assert list(together.positions()) == [7 + i for lo, hi in bounds for i in range(lo, hi)]
    assert (
        together.records() == one_by_one.records() == [r for lo, hi in bounds for r in rows[lo:hi]]
    )
    assert together.parts()[1:] == one_by_one.parts()[1:]
