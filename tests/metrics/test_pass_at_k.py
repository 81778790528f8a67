"""pass@k against brute force: the share of all k-subsets of n samples (c passing) that hold a pass."""

from itertools import combinations

import pytest

from ocg.core.errors import OcgInputError
from ocg.metrics.pass_at_k import pass_at_k


def enumerated(n: int, c: int, k: int) -> float:
    samples = [True] * c + [False] * (n - c)
    subsets = list(combinations(range(n), k))
    return sum(any(samples[i] for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n", range(1, 9))
def test_pass_at_k_equals_enumeration_of_every_subset(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert pass_at_k(n, c, k) == pytest.approx(enumerated(n, c, k), abs=1e-12), (n, c, k)


def test_pass_at_1_is_the_share_passing_and_large_n_stays_finite():
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    value = pass_at_k(10_000, 5, 100)  # C(10000, 100) overflows a float; the product does not
    assert 0 < value < 1 and value == pytest.approx(1 - (1 - 100 / 10_000) ** 5, rel=1e-2)


@pytest.mark.parametrize(
    "args, field",
    [
        ((3, 1, 4), "k"),
        ((3, 4, 1), "c"),
        ((3, -1, 1), "c"),
        ((0, 0, 1), "pass_at_k"),
        ((3, 1, 0), "pass_at_k"),
        ((3.0, 1, 1), "n"),
        ((3, True, 1), "c"),
    ],
)
def test_bad_arguments_name_what_is_wrong(args, field):
    with pytest.raises(OcgInputError) as exc:
        pass_at_k(*args)
    assert field in exc.value.where
