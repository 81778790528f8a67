"""The judge's agreement with ocg's checks (ocg/analysis/agreement.py) against independent
computations: Cohen's kappa against scikit-learn's on the answers a 2x2 table stands for, the
share's interval against scipy's Wilson interval, kappa's interval against the delta method's
variance of kappa under multinomial sampling (a numerical gradient, not the closed form). Every
2x2 table of up to 12 answers, and seeded random ones up to 5,000; the degenerate tables give
null with the reason, never a crash or a number that means nothing."""

import itertools
import math
import random
import warnings

import numpy as np
import pytest
from scipy.stats import binomtest
from sklearn.metrics import cohen_kappa_score

from ocg.analysis import agreement as ag
from tests.helpers import nulls_without_reason


def tables(max_n):
    """Every 2x2 table (both, judge_only, ocg_only, neither) of 0 to `max_n` answers."""
    for n in range(max_n + 1):
        for a, b, c in itertools.product(range(n + 1), repeat=3):
            if a + b + c <= n:
                yield ag.Cells(a, b, c, n - a - b - c)


def random_tables(count, seed=61):
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        n = rng.randint(ag.MIN_JUDGED, 5000)
        cuts = sorted(rng.randint(0, n) for _ in range(3))
        out.append(ag.Cells(cuts[0], cuts[1] - cuts[0], cuts[2] - cuts[1], n - cuts[2]))
    return out


def sklearn_kappa(c: ag.Cells) -> float:
    """scikit-learn's kappa of the answers the table stands for (judge, ocg: 1 yes, 0 no)."""
    judge = [1] * c.both + [1] * c.judge_only + [0] * c.ocg_only + [0] * c.neither
    ocg = [1] * c.both + [0] * c.judge_only + [1] * c.ocg_only + [0] * c.neither
    with warnings.catch_warnings():  # one label only: sklearn warns, then says nan
        warnings.simplefilter("ignore")
        return float(cohen_kappa_score(judge, ocg, labels=[0, 1]))


def delta_method_se(c: ag.Cells, h=1e-7) -> float:
    """sqrt(g' S g / n): g the numerical gradient of kappa in the four cell probabilities, S the
    multinomial covariance diag(p) - p p' of one answer."""

    def kappa_of(q):
        q = q / q.sum()
        po = q[0] + q[3]
        judge, ocg = q[0] + q[1], q[0] + q[2]
        pe = judge * ocg + (1 - judge) * (1 - ocg)
        return (po - pe) / (1 - pe)

    p = np.array([c.both, c.judge_only, c.ocg_only, c.neither], float) / c.n
    g = np.array([(kappa_of(p + h * e) - kappa_of(p - h * e)) / (2 * h) for e in np.eye(4)])
    return math.sqrt(g @ (np.diag(p) - np.outer(p, p)) @ g / c.n)


def check_against_references(c: ag.Cells):
    a = ag.agreement("order", c)
    assert nulls_without_reason(a.record()) == []
    assert a.small_sample == (c.n < 20) and a.judged == c.n and a.agree == c.both + c.neither
    if c.n == 0:
        assert a.share is None and a.kappa is None
        assert a.reasons["share"] == a.reasons["kappa"] == ag.NOTHING_JUDGED
        return
    ci = binomtest(a.agree, c.n).proportion_ci(confidence_level=0.95, method="wilson")
    assert a.share == pytest.approx(100 * a.agree / c.n)
    assert (a.share_low, a.share_high) == pytest.approx(
        (100 * ci.low, 100 * ci.high), rel=1e-9, abs=1e-9
    )
    reference = sklearn_kappa(c)
    if math.isnan(reference):  # sklearn: undefined (one label on both sides)
        assert a.kappa is None and a.reasons["kappa"].startswith("undefined: the judge and ocg")
        assert "for every judged answer" in a.reasons["kappa"]
        assert c.both == c.n or c.neither == c.n
        return
    assert a.kappa == pytest.approx(reference, abs=1e-12)
    one_sided = {c.both + c.judge_only, c.both + c.ocg_only} & {0, c.n}
    if one_sided:  # one of the two always says the same: kappa 0, with no interval
        assert a.kappa == 0 and a.kappa_low is None and a.kappa_high is None
        assert "for every judged answer: kappa is 0" in a.reasons["kappa_low"]
    elif c.n < ag.MIN_JUDGED:
        assert a.kappa_low is None and a.reasons["kappa_low"].startswith("small sample")
    elif abs(a.kappa) == 1:  # at its bound the standard error is 0: no interval
        assert delta_method_se(c) == pytest.approx(0, abs=1e-6) and a.kappa_low is None
        assert "its bound" in a.reasons["kappa_low"]
    else:
        se = delta_method_se(c)
        assert a.kappa_low == pytest.approx(max(-1.0, a.kappa - 1.959963984540054 * se), abs=1e-6)
        assert a.kappa_high == pytest.approx(min(1.0, a.kappa + 1.959963984540054 * se), abs=1e-6)
        assert -1 <= a.kappa_low <= a.kappa <= a.kappa_high <= 1


@pytest.mark.parametrize("n", range(0, 13))
def test_every_table_of_up_to_12_answers_equals_the_references(n):
    for c in tables(n):
        if c.n == n:
            check_against_references(c)


def test_random_tables_of_20_to_5000_answers_equal_the_references():
    for c in random_tables(300):
        check_against_references(c)


@pytest.mark.parametrize(
    "c",
    [ag.Cells(30, 2, 1, 0), ag.Cells(25, 0, 0, 1), ag.Cells(40, 3, 3, 2), ag.Cells(12, 5, 6, 9)],
)
def test_unbalanced_tables_at_the_interval_threshold_and_beyond(c):
    """Tables whose kappa's interval leans on the closed form's off-diagonal term (a wrong index
    in it gives a different variance for an asymmetric table)."""
    check_against_references(c)
    if c.n >= ag.MIN_JUDGED:
        a = ag.agreement("coverage", c)
        assert ag.kappa_se(c, a.kappa) == pytest.approx(delta_method_se(c), rel=1e-5)


def test_the_reviewers_order_table():
    """21 of 32 agree: 66%, Wilson 48-80% (the reviewer's 47-81% is Clopper-Pearson's)."""
    a = ag.agreement("order", ag.Cells(11, 5, 6, 10))
    assert (round(a.share), round(a.share_low), round(a.share_high)) == (66, 48, 80)
    ci = binomtest(21, 32).proportion_ci(method="exact")
    assert (round(100 * ci.low), round(100 * ci.high)) == (47, 81)
    assert a.kappa == pytest.approx(sklearn_kappa(ag.Cells(11, 5, 6, 10)))


@pytest.mark.parametrize(
    ("cells", "check", "why"),
    [
        (ag.Cells(25, 0, 0, 0), "coverage", "undefined: the judge and ocg both say every concept"),
        (ag.Cells(0, 0, 0, 25), "order", "undefined: the judge and ocg both say not in order"),
        (ag.Cells(0, 25, 0, 0), "order", "the judge says in order and ocg says not in order"),
        (ag.Cells(20, 5, 0, 0), "order", "the judge says in order for every judged answer"),
        (ag.Cells(0, 0, 9, 16), "order", "the judge says not in order for every judged answer"),
        (ag.Cells(20, 0, 5, 0), "coverage", "ocg says every concept present for every judged"),
        (ag.Cells(15, 0, 0, 10), "order", "kappa is +1, its bound"),
        (ag.Cells(0, 12, 12, 0), "order", "kappa is -1, its bound"),
    ],
)
def test_degenerate_tables_give_null_with_the_reason(cells, check, why):
    a = ag.agreement(check, cells)
    record = a.record()
    assert record["kappa_low"] is None and why in record["missing_reason"]["kappa_low"]
    assert record["share"] is not None and nulls_without_reason(record) == []
    if "undefined" in why:
        assert record["kappa"] is None and record["share"] == 100.0
    elif "bound" in why:
        assert abs(record["kappa"]) == 1
    else:
        assert record["kappa"] == 0


def test_a_summary_before_the_cells_gives_the_share_alone():
    a = ag.share_only("order", 21, 32, "predates the cells")
    record = a.record()
    assert record["kappa"] is None and record["cells"] is None
    assert record["missing_reason"]["kappa"] == "predates the cells"
    assert round(record["share_low"]) == 48 and nulls_without_reason(record) == []
    assert ag.share_only("order", 0, 0, "x").record()["missing_reason"]["share"] == (
        ag.NOTHING_JUDGED
    )


def test_small_samples_are_marked_and_keep_the_wilson_interval():
    a = ag.agreement("order", ag.Cells(5, 2, 3, 9))  # 19 answers
    assert a.small_sample and a.kappa is not None and a.kappa_low is None
    assert a.share_low is not None and "small sample" in a.reasons["kappa_low"]
    b = ag.agreement("order", ag.Cells(5, 2, 3, 10))  # 20 answers
    assert not b.small_sample and b.kappa_low is not None
