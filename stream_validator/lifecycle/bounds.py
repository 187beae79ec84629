"""Observed extremes widened by a margin, exactly: a bound never excludes what was observed.

Each bound moves *outward* (the minimum down, the maximum up) by ``margin`` times its own
magnitude, so a bound of 0 stays 0 and a bound
never changes sign (sizes seen from 0 never get a negative minimum). Float bounds are then
rounded outward to ``SIGNIFICANT_DIGITS`` digits (``90.0``, not ``91.23299999999999``) and
converted to the nearest float, moved one step out only when that would exclude the
observed value (an int too large for a float, a margin of 0); int bounds are whole numbers.
Arithmetic is on fractions, so a 64-bit int or a float near a power of two is never moved
inward by rounding. PURE.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Final

#: Digits kept of a widened float bound (with a margin of 0, bounds are the observed values).
SIGNIFICANT_DIGITS: Final = 4


def widen_float(value: int | float, margin: Fraction, upper: bool) -> float:
    """A float bound at least as far out as ``value`` (the observed min or max)."""
    observed = Fraction(value)
    exact = _moved(observed, margin, upper)
    if margin:
        exact = _round_out(exact, upper)
    try:
        bound = float(exact)  # Fraction -> float is correctly rounded: the shortest repr
    except OverflowError:
        bound = math.inf
    if not math.isfinite(bound):
        # Past the float range: no margin is better than an infinite bound.
        bound = float(value)
    # Only the observed value must stay inside (a rounded bound may be a hair inward of
    # its decimal, never of the value: the margin lies between them, or is 0).
    if upper and Fraction(bound) < observed:
        bound = math.nextafter(bound, math.inf)
    elif not upper and Fraction(bound) > observed:
        bound = math.nextafter(bound, -math.inf)
    return bound


def widen_int(value: int, margin: Fraction, upper: bool) -> int:
    """An int bound at least as far out as ``value``."""
    exact = _moved(Fraction(value), margin, upper)
    return math.ceil(exact) if upper else math.floor(exact)


def widen_count(value: int, margin: Fraction, upper: bool) -> int:
    """An item count bound: as ``widen_int``, but a minimum of 1 or more stays at least 1
    (an array never seen empty is not drafted as one that may be)."""
    bound = widen_int(value, margin, upper)
    return max(bound, 1) if not upper and value >= 1 else bound


def ceiling_pct(rate: Fraction, margin: Fraction) -> float:
    """A null ceiling (percent) above an observed rate: ``rate * (1 + margin)``, rounded up
    to hundredths, at most 100."""
    hundredths = math.ceil(rate * (1 + margin) * 100)
    return min(hundredths, 10_000) / 100


def _moved(exact: Fraction, margin: Fraction, upper: bool) -> Fraction:
    step = abs(exact) * margin
    return exact + step if upper else exact - step


def _round_out(exact: Fraction, upper: bool) -> Fraction:
    if exact == 0:
        return exact
    magnitude = abs(exact)
    digits = len(str(magnitude.numerator // magnitude.denominator)) if magnitude >= 1 else 0
    if magnitude < 1:  # leading zeros after the point
        digits = -_leading_zeros(magnitude)
    scale = Fraction(10) ** (digits - SIGNIFICANT_DIGITS)
    units = exact / scale
    return (math.ceil(units) if upper else math.floor(units)) * scale


def _leading_zeros(magnitude: Fraction) -> int:
    """Zeros right after the decimal point of a number in (0, 1): 0.0012 -> 2."""
    zeros = 0
    while magnitude * 10 < 1:
        magnitude *= 10
        zeros += 1
    return zeros
