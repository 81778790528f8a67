"""The concept sets a comparison needs (analysis/sample_size.py): each count is the fewest at
which its condition holds when computed directly (the interval's half-width, the test's power by
the normal CDF), it moves the right way with the spread and Δ, and the spread is the per-set
differences' own."""

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import assume, given
from scipy import stats

from ocg.analysis import sample_size as ss

SD = st.floats(1e-3, 1e3, allow_nan=False)
DELTA = st.floats(-1e3, 1e3, allow_nan=False).filter(lambda d: abs(d) > 1e-3)
Z = stats.norm.ppf(0.975)


def _power(n, sd, delta):
    """A two-sided 5% z-test's power at n sets, both tails."""
    shift = abs(delta) * np.sqrt(n) / sd
    return stats.norm.cdf(shift - Z) + stats.norm.cdf(-shift - Z)


@given(SD, st.floats(1e-3, 1e3, allow_nan=False))
def test_the_interval_count_is_the_fewest_whose_half_width_is_within(sd, h):
    n = ss.sets_for_interval(sd, h)
    assume(n < 10**9)
    assert Z * sd / np.sqrt(n) <= h * (1 + 1e-9)
    assert n == 2 or Z * sd / np.sqrt(n - 1) > h * (1 - 1e-9)


@given(SD, DELTA)
def test_the_power_count_is_the_fewest_reaching_80_percent(sd, delta):
    n = ss.sets_for_power(sd, delta)
    assume(n < 10**9)
    assert _power(n, sd, delta) >= 0.8 - 1e-6
    # the formula ignores the far tail, which adds at most cdf(-2 z) ~ 0.0001 below n
    assert n == 2 or _power(n - 1, sd, delta) < 0.8 + 1e-3


@given(SD, SD, DELTA, DELTA)
def test_more_spread_needs_more_sets_a_larger_difference_fewer(sd1, sd2, d1, d2):
    lo, hi = sorted((sd1, sd2))
    small, large = sorted((abs(d1), abs(d2)))
    assert ss.sets_for_power(lo, d1) <= ss.sets_for_power(hi, d1)
    assert ss.sets_for_power(sd1, large) <= ss.sets_for_power(sd1, small)
    assert ss.sets_for_power(sd1, d1) == ss.sets_for_power(sd1, -d1)
    assert ss.sets_for_interval(lo, large) <= ss.sets_for_interval(hi, small)


@given(st.lists(st.floats(-100, 100, allow_nan=False), min_size=2, max_size=40), DELTA)
def test_sets_needed_reads_the_spread_of_the_per_set_differences(d, delta):
    with_missing = [*d, float("nan")]  # a set one side has no value on is left out
    plan = ss.sets_needed(with_missing, delta)
    assert plan.n_sets == len(d) and plan.sd == pytest.approx(np.std(d, ddof=1))
    assert plan.half_width == pytest.approx(abs(delta) / 2)
    assert plan.for_interval == ss.sets_for_interval(plan.sd, abs(delta) / 2)
    assert plan.for_power == ss.sets_for_power(plan.sd, delta) and plan.reason is None


def test_what_no_number_of_sets_can_give_is_null_with_its_reason():
    one = ss.sets_needed([1.0, float("nan")], 2.0)
    assert one.for_power is None and "fewer than 2" in one.reason
    zero = ss.sets_needed([1.0, -1.0, 3.0], 0.0)
    assert zero.for_interval is None and zero.for_power is None and "is 0" in zero.reason
    assert zero.sd == pytest.approx(2.0)
