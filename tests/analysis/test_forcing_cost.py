"""The forcing section leads with how far forcing goes and at what cost, the perplexity median
beside every mean, and shows forced answers beside their `ordered` ones."""

import numpy as np
import pandas as pd
import pytest

from ocg.analysis import forcing
from ocg.analysis.report import save_table
from ocg.site import sections
from ocg.site.render import fragment

CONCEPTS = ["dog", "frisbee", "catch", "throw"]
# per condition: (in_order, copies_list, perplexity, answer) of templates 0 and 1
ROWS = {
    "original": [
        (False, False, 40.0, "A dog caught it."),
        (True, True, 60.0, "Dog, frisbee, catch, throw."),
    ],
    "ordered": [
        (True, False, 50.0, "The dog and the frisbee, caught, thrown."),
        (True, True, 70.0, "Dog frisbee catch throw."),
    ],
    "ordered_constrained": [
        (True, False, 100.0, "Dog frisbees catching throws."),
        (True, False, 9000.0, "A fun andenge dog frisbee catch throw."),
    ],
}


def _answers():
    rows = []
    for condition, per_template in ROWS.items():
        for t, (inside, copy, ppl, text) in enumerate(per_template):
            for p in range(
                3
            ):  # three permutations: the third answer of each prompt is 10x as perplexing
                rows.append(
                    {
                        "model": "m",
                        "condition": condition,
                        "template_id": t,
                        "set_id": "s",
                        "perm_index": p,
                        "instance_id": f"{condition}-{t}-{p}",
                        "concepts": CONCEPTS,
                        "pos_pattern": "NNVV",
                        "all_present": True,
                        "in_order": inside,
                        "copies_list": copy,
                        "truncated": p == 2 and condition == "ordered_constrained",
                        "answer": f"{text} ({p})",
                        "perplexity": ppl * (10 if p == 2 else 1),
                    }
                )
    return pd.DataFrame(rows)


def test_outcomes_lead_with_order_and_cost_and_give_the_median_over_every_answer():
    o = forcing.outcomes(_answers()).set_index("condition")
    assert list(o.columns[1:7]) == forcing.LEAD
    forced = o.loc["ordered_constrained"]
    assert forced["perplexity median"] == pytest.approx(
        np.median([100, 100, 1000, 9000, 9000, 90000])
    )  # pooled over templates, as Tables 1 and 4 show it
    assert forced["perplexity mean"] == pytest.approx(
        np.mean([(100 + 100 + 1000) / 3, (9000 + 9000 + 90000) / 3])
    )
    assert (forced["w/ order %"], forced["cut by budget"]) == (100.0, 2)
    assert o.loc["ordered", "list copies"] == 3 and o.loc["ordered", "Ordered Rate %"] == 100.0
    shown = forcing.cost_view(o.reset_index())
    assert list(shown.columns[:6]) == forcing.LEAD


def test_a_mean_far_above_its_median_is_marked_and_the_median_shown_beside_it():
    o = forcing.outcomes(
        _answers().assign(
            perplexity=lambda d: np.where(d.perm_index == 2, d.perplexity * 100, d.perplexity)
        )
    )
    shown = forcing.cost_view(o)
    assert shown.loc[("m", "ordered_constrained"), "perplexity mean"].endswith(" ‡")
    long = pd.DataFrame(
        [
            {
                "model": "m",
                "metric": m,
                "value": v,
                "delta_vs_ordered": 1.0,
                "delta_vs_original": 2.0,
            }
            for m, v in (("pbleu", 3.0), ("perplexity", 5000.0), ("coverage_w_order", 100.0))
        ]
    )
    wide = forcing.forced_wide(long, {"m": 150.0})
    assert [c[0] for c in wide.columns][:2] == [
        "coverage_w_order",
        "coverage_w_order",
    ]  # order first
    assert wide.loc["m", ("perplexity", "value")] == "5000.00 ‡ (median 150.00)"


def test_forced_answers_are_shown_beside_their_ordered_ones():
    same = (
        _answers()
    )  # an answer forcing did not change says nothing: only pairs that differ are shown
    same.loc[(same.condition == "ordered_constrained") & (same.template_id == 0), "answer"] = (
        same.loc[(same.condition == "ordered") & (same.template_id == 0), "answer"].to_numpy()
    )
    assert set(forcing.examples(same, n=5)["forced"]).isdisjoint(
        same.loc[same.template_id == 0, "answer"]
    )
    ex = forcing.examples(_answers(), n=1)
    top = ex.iloc[0]
    assert (
        top["forced"] == "A fun andenge dog frisbee catch throw. (2)"
        and top["forced perplexity"] == 90000.0
    )
    assert top["ordered"] == "Dog frisbee catch throw. (2)"  # the same prompt, decoded freely
    assert len(ex) == 2 and ex.iloc[1]["why shown"].startswith("drawn at random")


def test_the_landing_page_leads_with_the_cost_and_shows_examples(tmp_path):
    answers = _answers()
    o = forcing.outcomes(answers)
    save_table(o, "forced_order_outcomes", tmp_path)
    save_table(forcing.examples(answers), "forced_order_examples", tmp_path)
    long = pd.DataFrame(
        [
            {
                "model": "m",
                "metric": m,
                "value": v,
                "delta_vs_ordered": -93.0,
                "delta_vs_original": -90.0,
            }
            for m, v in (("coverage_w_order", 100.0), ("perplexity", 1456.9))
        ]
    )
    save_table(long, "forced_order", tmp_path)
    page = fragment("sections.html", "forced", sections.forced(tmp_path))
    cost, examples, table4 = (
        page.index(s)
        for s in ("How far forcing goes", "Forced answers beside", "Table 4's pattern")
    )
    assert cost < examples < table4
    median = o.set_index("condition").loc["ordered_constrained", "perplexity median"]
    assert f"1456.90 (median {median:.2f})" in page
    assert "A fun andenge" in page


def test_the_summary_keeps_the_perplexity_median_beside_the_mean():
    from ocg.analysis import paper_tables as tables
    from ocg.scoring.run import summarise

    a = _answers().assign(distinct_2=0.5)
    from ocg.metrics.degenerate import FLAG_COLUMNS

    for flag in FLAG_COLUMNS:
        if flag not in a:
            a[flag] = False
    s = summarise(a, pd.DataFrame())
    row = s[(s.condition == "ordered_constrained") & (s.template_id == 1)].iloc[0]
    assert (row.perplexity_median, row.perplexity) == (
        9000.0,
        pytest.approx((9000 + 9000 + 90000) / 3),
    )
    assert tables.summary_medians(s, "ordered_constrained") == {
        "m": pytest.approx((100.0 + 9000.0) / 2)
    }


def test_slor_is_shown_beside_its_median_as_perplexity_is():
    """Every SLOR shown beside its median (no ‡: SLOR is a difference of logs)."""
    from ocg.analysis import paper_tables as tables
    from ocg.metrics.registry import label
    from ocg.site import caveats

    summary = pd.DataFrame(
        {
            "model": ["a", "a", "b"],
            "condition": ["ordered"] * 3,
            "template_id": [0, 1, 0],
            "slor_median": [1.0, 2.0, -0.5],
        }
    )
    medians = tables.summary_medians(summary, "ordered", "slor")
    assert medians == {"a": 1.5, "b": -0.5}  # per template, then over templates
    table = pd.DataFrame(
        {(label("slor"), ""): [1.25, float("nan")], (label("slor"), "Δ"): [0.1, 0.2]},
        index=["a", "b"],
    )
    shown = caveats.mark_slor(table, medians)
    assert list(shown[(label("slor"), "")]) == ["1.25 (median 1.50)", "–"]
    assert list(shown[(label("slor"), "Δ")]) == [0.1, 0.2]  # the Δ column is left as it is


def test_the_forced_order_marks_each_delta_its_median_contradicts():
    # the audit: a Δ vs original of -2957.39 against a median Δ the other way showed no mark
    long = pd.DataFrame(
        [
            {
                "model": "m",
                "metric": "perplexity",
                "value": 3000.0,
                "delta_vs_ordered": 10.0,
                "delta_vs_original": -2957.39,
                "median": 250.0,
                "dagger": True,
                "median_delta_vs_ordered": 5.0,
                "dagger_ordered": False,
                "mean_median_disagree_vs_ordered": True,  # ‡ on the forced side
                "median_delta_vs_original": 127.0,
                "dagger_original": True,
                "mean_median_disagree_vs_original": True,
            },
            {
                "model": "m",
                "metric": "coverage_w_order",
                "value": 90.0,
                "delta_vs_ordered": 1.0,
                "delta_vs_original": 2.0,
            },
        ]
    )
    wide = forcing.forced_wide(long)
    assert wide.loc["m", ("perplexity", "value")] == "3000.00 ‡ (median 250.00)"
    assert wide.loc["m", ("perplexity", "Δ vs ordered")] == "+10.00 ‡ (median Δ +5.00)"
    assert wide.loc["m", ("perplexity", "Δ vs original")] == "-2957.39 ‡ (median Δ +127.00)"
    calm = long.assign(dagger=False, mean_median_disagree_vs_ordered=False)
    assert forcing.forced_wide(calm).loc["m", ("perplexity", "Δ vs ordered")] == "+10.00"
