"""The paired sign-flip test: exact p-values by enumeration on few units, sampled beyond, and
Holm's adjustment."""

import itertools

import numpy as np
import pandas as pd
import pytest

from ocg.analysis import uncertainty


def _answers(in_order: dict[str, tuple[list[int], list[int]]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per set: (ordered, original) answers' in_order verdicts, every concept present."""
    rows = [
        {
            "model": "m",
            "condition": cond,
            "template_id": 0,
            "set_id": s,
            "all_present": True,
            "in_order": bool(v),
        }
        for s, pair in in_order.items()
        for cond, verdicts in zip(("ordered", "original"), pair)
        for v in verdicts
    ]
    return pd.DataFrame(rows), pd.DataFrame(columns=["model", "condition", "template_id", "set_id"])


def _hand_p(answers: pd.DataFrame) -> float:
    """Two-sided sign-flip p by hand: swap the conditions of each subset of sets, recount w/ order."""
    sets = sorted(answers["set_id"].unique())

    def diff(frame):
        o, r = frame[frame.condition == "ordered"], frame[frame.condition == "original"]
        return 100 * o.in_order.mean() - 100 * r.in_order.mean()

    observed, hits, total = diff(answers), 0, 0
    for flips in itertools.product((False, True), repeat=len(sets)):
        swapped = {s for s, f in zip(sets, flips) if f}
        frame = answers.assign(
            condition=[
                ("original" if c == "ordered" else "ordered") if s in swapped else c
                for s, c in zip(answers.set_id, answers.condition)
            ]
        )
        hits += abs(diff(frame)) >= abs(observed) - 1e-12
        total += 1
    return hits / total


def test_few_sets_get_the_exact_p_value_of_a_hand_enumeration():
    verdicts = {
        "s0": ([1, 1, 1, 0], [0, 0, 1, 0]),
        "s1": ([1, 1, 0, 0], [1, 0, 0, 0]),
        "s2": ([1, 1, 1, 1], [1, 1, 0, 0]),
        "s3": ([0, 1, 0, 0], [0, 1, 1, 0]),
        "s4": ([1, 0, 1, 0], [0, 0, 0, 0]),
    }
    answers, groups = _answers(verdicts)
    row = (
        uncertainty.paired_test(answers, groups, "m", uncertainty.Resampling(n_boot=20))
        .set_index("metric")
        .loc["coverage_w_order"]
    )
    assert row.p_value == pytest.approx(_hand_p(answers), abs=1e-12)
    assert row.p_value * 32 == pytest.approx(round(row.p_value * 32))  # a multiple of 1/2^5
    assert row.p_method == "exact: all 32 sign vectors"


def test_two_sets_cannot_give_a_p_value_below_one_half():
    answers, groups = _answers(
        {"s0": ([1, 1, 1, 1], [0, 0, 0, 0]), "s1": ([1, 1, 1, 0], [0, 0, 0, 1])}
    )
    test = uncertainty.paired_test(answers, groups, "m", uncertainty.Resampling(n_boot=20))
    assert (test["p_value"] >= 0.5).all()  # the Monte Carlo estimate gave 0.4882 here
    assert set(test["p_method"]) == {"exact: all 4 sign vectors"}


def test_many_sets_are_sampled_and_say_so():
    rng = np.random.default_rng(0)
    n = uncertainty.EXACT_MAX_UNITS + 5
    verdicts = {
        f"s{i}": (list(rng.integers(0, 2, 4)), list(rng.integers(0, 2, 4))) for i in range(n)
    }
    answers, groups = _answers(verdicts)
    row = (
        uncertainty.paired_test(answers, groups, "m", uncertainty.Resampling(n_boot=20), n_perm=200)
        .set_index("metric")
        .loc["coverage_w_order"]
    )
    assert row.p_method == f"sampled: 200 of 2^{n} sign vectors, (b+1)/(m+1)"
    assert row.p_value * 201 == pytest.approx(round(row.p_value * 201)) and row.p_value >= 1 / 201


def test_holm_matches_a_worked_example():
    # sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04; then running maximum
    adjusted = uncertainty.holm([0.01, 0.04, 0.03, 0.005, np.nan])
    assert adjusted[:4] == pytest.approx([0.03, 0.06, 0.06, 0.02]) and np.isnan(adjusted[4])
    assert uncertainty.holm([0.6, 0.9]) == pytest.approx([1.0, 1.0])  # capped at 1


def test_each_model_s_tests_are_adjusted_together():
    answers, groups = _answers(
        {f"s{i}": ([1, 1, i % 2, 0], [0, i % 3 == 0, 0, 0]) for i in range(6)}
    )
    test = uncertainty.paired_test(answers, groups, "m", uncertainty.Resampling(n_boot=20))
    assert list(test["p_holm"]) == pytest.approx(list(uncertainty.holm(test["p_value"])))
    assert (test["p_holm"] >= test["p_value"]).all()
