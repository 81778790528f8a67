"""`ocg compare`'s medians and small samples (ocg/analysis/versus_medians.py,
ocg/site/comparison_page.py): one extreme perplexity answer makes A's mean, its median and the
median of the paired differences say otherwise, recomputed here with numpy; under 20 concept sets
no interval and no p-value on the page or in comparison.json (null, with the reason), from 20 on
both."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import ocg.scoring  # noqa: F401  (declares SLOR's family)
from ocg.analysis.uncertainty import MIN_SETS
from ocg.analysis.versus import Side, compare_answers
from ocg.results.designs import design
from ocg.site.comparison_page import write_comparison

KEY = ["condition", "template_id", "set_id", "perm_index"]
EXTREME = 1e6  # A's perplexity on its first answer


def _answers(model: str, n_sets: int) -> pd.DataFrame:
    """Two templates, three permutations per set, `ordered`: A's perplexity about 40-50 but one
    answer at EXTREME, B's about 60-70 (A lower on every answer but that one); SLOR the other way."""
    rng = np.random.default_rng(0 if model == "a" else 1)
    rows = [
        {
            "model": model,
            "condition": "ordered",
            "template_id": t,
            "set_id": f"s{s:02d}",
            "perm_index": p,
            "pos_pattern": "NVNN",
            "concept_words": "boy ride bike street",
            "answer": f"{model} {s} {t} {p}",
            "all_present": True,
            "in_order": bool((s + p) % 2) if model == "a" else True,
            "perplexity": (40.0 if model == "a" else 60.0) + 10 * rng.random(),
            "slor": (1.0 if model == "a" else 2.0) + rng.random(),
        }
        for s in range(n_sets)
        for t in (0, 1)
        for p in range(3)
    ]
    out = pd.DataFrame(rows)
    if model == "a":
        out.loc[0, "perplexity"] = EXTREME
    return out


def _side(model: str, answers: pd.DataFrame) -> Side:
    return Side(
        name=f"run-{model}",
        folder=Path(f"/reports/run-{model}"),
        model=model,
        models=[model],
        design=design(answers[[*KEY, "pos_pattern"]]),
        n=len(answers),
    )


def _compare(n_sets: int, folder: Path):
    a, b = _answers("a", n_sets), _answers("b", n_sets)
    c = compare_answers(_side("a", a), a, _side("b", b), b)
    page, data = write_comparison(c, folder)
    return a, b, page.read_text(), json.loads(data.read_text())


def _row(data: dict, metric: str) -> dict:
    return next(t for t in data["tests"] if (t["condition"], t["metric"]) == ("ordered", metric))


def _table(page: str) -> str:
    """The page's table of tests (its first)."""
    return page.split("<table", 1)[1].split("</table>", 1)[0]


def test_an_extreme_answer_shows_the_medians_beside_the_means(tmp_path):
    a, b, page, data = _compare(2, tmp_path)
    ppl = _row(data, "perplexity")
    pa, pb = a["perplexity"].to_numpy(), b["perplexity"].to_numpy()
    assert ppl["value_a"] == pytest.approx(pa.mean()) and ppl["value_b"] == pytest.approx(pb.mean())
    assert ppl["difference"] == pytest.approx(pa.mean() - pb.mean()) and ppl["difference"] > 0
    assert ppl["median_a"] == pytest.approx(np.median(pa))
    assert ppl["median_b"] == pytest.approx(np.median(pb))
    paired = np.median(pa - pb)  # same instance order on both sides
    assert ppl["median_difference"] == pytest.approx(paired) and paired < 0
    assert paired != pytest.approx(np.median(pa) - np.median(pb))  # the paired one, not the other
    assert ppl["median_pairs"] == len(pa) == 12
    assert ppl["dagger_a"] is True and pa.mean() > 10 * np.median(pa)
    assert ppl["dagger_b"] is False and ppl["mean_median_disagree"] is True
    assert f"{pa.mean():.2f} ‡ (median {np.median(pa):.2f})" in page
    assert f"{pb.mean():.2f} (median {np.median(pb):.2f})" in page
    assert (
        f"{pa.mean() - pb.mean():+.2f} (median Δ {paired:+.2f}; mean and median disagree)" in page
    )
    assert f"Perplexity (ordered), mean Δ {pa.mean() - pb.mean():+.2f} but median Δ" in page
    # SLOR: medians beside, no ‡ (a difference of logs), mean and median agree
    slor = _row(data, "slor")
    sa, sb = a["slor"].to_numpy(), b["slor"].to_numpy()
    assert slor["median_a"] == pytest.approx(np.median(sa))
    assert slor["median_difference"] == pytest.approx(np.median(sa - sb))
    assert not slor["dagger_a"] and not slor["mean_median_disagree"]
    assert f"{np.mean(sa) - np.mean(sb):+.2f} (median Δ {np.median(sa - sb):+.2f})" in page
    # a metric without a median carries no median keys
    assert "median_a" not in _row(data, "coverage_w_order")


def test_a_small_sample_gives_no_interval_and_no_p_but_its_differences(tmp_path):
    a, b, page, data = _compare(2, tmp_path)
    for metric in ("perplexity", "coverage_w_order"):
        row = _row(data, metric)
        assert row["small_sample"] is True and row["n"] == 2
        assert row["difference"] is not None
        for key in ("ci_low", "ci_high", "p_value", "p_holm"):
            assert row[key] is None and row["missing_reason"][key].startswith("small sample")
    assert f"small sample (2 concept sets &lt; {MIN_SETS})" in page
    assert "[" not in _table(page) and "exact: all 4 sign vectors" not in page
    assert "Small sample: the shared instances hold 2 concept sets" in page


def test_from_twenty_sets_the_interval_and_p_are_given(tmp_path):
    a, b, page, data = _compare(MIN_SETS, tmp_path)
    row = _row(data, "perplexity")
    assert row["small_sample"] is False and row["n"] == MIN_SETS and "missing_reason" not in row
    assert row["ci_low"] <= row["difference"] <= row["ci_high"]
    assert 0 < row["p_value"] <= row["p_holm"] <= 1
    assert f"[{row['ci_low']:.2f}, {row['ci_high']:.2f}]" in page
    assert f"exact: all {2**MIN_SETS} sign vectors" in page
    assert "small sample" not in _table(page) and "Small sample:" not in page
