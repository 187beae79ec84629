"""Widened bounds: outward by the margin, rounded outward, never excluding what was seen."""

from __future__ import annotations

from fractions import Fraction

from hypothesis import given
from hypothesis import strategies as st

from stream_validator.lifecycle.bounds import ceiling_pct, widen_count, widen_float, widen_int

TENTH = Fraction(1, 10)


def test_float_bounds_round_to_four_significant_digits_outward() -> None:
    """101.37 - 10 % is 91.233: the minimum is 91.23, the maximum of 101.37 is 111.6."""
    assert widen_float(101.37, TENTH, upper=False) == 91.23
    assert widen_float(101.37, TENTH, upper=True) == 111.6


def test_an_int_beyond_a_floats_precision_is_never_cut_inward() -> None:
    """With no margin, an int above 2**53 in a float field gets the float just outside it."""
    value = 2**53 + 1
    assert widen_float(value, Fraction(0), upper=True) >= value
    assert widen_float(value, Fraction(0), upper=False) <= value


def test_bounds_past_the_float_range_fall_back_to_the_observed_value() -> None:
    """1.7e308 + 10 % overflows: the bound is the value itself, never infinite."""
    assert widen_float(1.7e308, TENTH, upper=True) == 1.7e308


def test_zero_stays_zero_and_counts_keep_a_minimum_of_one() -> None:
    """A bound of 0 does not move; an array never seen empty keeps min_items >= 1."""
    assert widen_int(0, TENTH, upper=False) == 0
    assert widen_count(1, TENTH, upper=False) == 1
    assert widen_count(0, TENTH, upper=False) == 0
    assert widen_count(10, TENTH, upper=True) == 11


def test_the_null_ceiling_is_rounded_up_and_capped_at_100() -> None:
    """7.5 % + 10 % is 8.25; 95 % + 10 % caps at 100."""
    assert ceiling_pct(Fraction(15, 2), TENTH) == 8.25
    assert ceiling_pct(Fraction(95), TENTH) == 100.0
    assert ceiling_pct(Fraction(1, 3), Fraction(0)) == 0.34


@given(
    st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**64), 2**64),
    st.sampled_from([Fraction(0), Fraction(1, 1000), TENTH, Fraction(5)]),
)
def test_a_widened_bound_never_excludes_the_value(value: float, margin: Fraction) -> None:
    """For any number and margin: min bound <= value <= max bound, exactly."""
    assert widen_float(value, margin, upper=False) <= value <= widen_float(value, margin, True)
    if isinstance(value, int):
        assert widen_int(value, margin, upper=False) <= value <= widen_int(value, margin, True)
