"""The page's medians (ocg/site/medians.py): pooled medians beside means, the median Δ beside a
mean Δ it contradicts, ‡ on a dominated mean."""

import pandas as pd

from ocg.analysis.paper_tables import wide
from ocg.site import medians


def _long() -> pd.DataFrame:
    return pd.DataFrame(
        [
            # a: one-shot mean below zero-shot's only through three answers of 10^5 (median Δ > 0)
            {
                "model": "a",
                "metric": "perplexity",
                "value": 150.0,
                "delta": -42000.0,
                "median": 150.0,
                "median_base": 40.0,
                "median_delta": 110.0,
                "dagger": True,
                "mean_median_disagree": True,
            },
            {
                "model": "b",
                "metric": "perplexity",
                "value": 900.0,
                "delta": 5.0,
                "median": 60.0,
                "median_base": 58.0,
                "median_delta": 2.0,
                "dagger": True,
                "mean_median_disagree": True,
            },
            {
                "model": "c",
                "metric": "perplexity",
                "value": 62.0,
                "delta": -3.0,
                "median": 60.0,
                "median_base": 63.0,
                "median_delta": -3.0,
                "dagger": False,
                "mean_median_disagree": False,
            },
            {
                "model": "a",
                "metric": "coverage_w_order",
                "value": 50.0,
                "delta": 1.0,
                "median": None,
                "median_base": None,
                "median_delta": None,
                "dagger": False,
                "mean_median_disagree": False,
            },
        ]
    )


def test_cells_show_the_pooled_median_and_a_contradicting_median_delta():
    long = _long()
    table = wide(long[long.model.isin(["a", "b", "c"])], "model", "value", "delta")
    table.columns = pd.MultiIndex.from_tuples(
        [
            (("Perplexity" if m == "perplexity" else m), "" if k == "value" else "Δ")
            for m, k in table.columns
        ]
    )
    shown = medians.mark(table, long, "delta")
    value, delta = shown[("Perplexity", "")], shown[("Perplexity", "Δ")]
    assert value["a"] == "150.00 (median 150.00)"  # its own side is not dominated
    assert delta["a"] == "-42000.00 ‡ (median Δ +110.00)"
    assert value["b"] == "900.00 ‡ (median 60.00)"
    assert delta["c"] == "-3.00" and value["c"] == "62.00 (median 60.00)"
    assert shown[("coverage_w_order", "")]["a"] == 50.0  # other metrics untouched


def test_dominated_and_contradicted_read_the_table():
    long = _long()
    assert [m for m, *_ in medians.dominated(long)] == ["b"]
    assert medians.contradicted(long, "delta") == [
        ("a", "Perplexity", -42000.0, 110.0),
        ("b", "Perplexity", 5.0, 2.0),
    ]
    assert medians.has_medians(long) and not medians.has_medians(long.drop(columns="median"))
