"""Scoring k samples: group metrics within each (group, sample), the summary as the mean over
samples with its spread, k = 1 as before; ordered pass@k and the spread across samples."""

import numpy as np
import pandas as pd
import pytest

from ocg.analysis.difficulty import composed_by
from ocg.analysis.repeated_samples import pass_at_k_table, sample_spread, samples_per_instance
from ocg.results.scores import load_scores
from ocg.scoring import cpu_families

CONCEPTS = ["boy", "ride", "bike", "street"]
# per sample: which answer each permutation gets (sample 0 varied, sample 1 all alike)
ANSWERS = {
    0: [
        "The boy rides a bike down the street.",
        "A boy rode his bike on the street.",
        "The street where a boy rides a bike.",
        "A bike.",
    ],
    1: ["The boy rides a bike down the street."] * 3 + ["A street, a bike, a boy who rides."],
}
METRICS = cpu_families()


def rows(samples, with_field=True):
    return [
        {
            "set_id": "s1",
            "template_id": t,
            "perm_index": p,
            "concepts": CONCEPTS,
            "pos_pattern": "NVNN",
            "answer": ANSWERS[s][(p + t) % 4],
            **({"sample": s} if with_field else {}),
        }
        for t in (0, 1)
        for p in range(24)
        for s in samples
    ]


@pytest.fixture(scope="module")
def scored(scored_run):
    by_model = {
        "both": rows([0, 1]),
        "only0": rows([0], with_field=False),
        "only1": rows([1], with_field=False),
        "k1": rows([0]),
    }  # k1: a sampled run of one sample, sample 0 recorded
    root = scored_run("samples", lambda model, _: by_model[model], METRICS, models=tuple(by_model))
    return load_scores(root / "scores")


def of(frame, model):
    return frame[frame["model"] == model].reset_index(drop=True)


def test_a_samples_groups_score_as_that_sample_alone(scored):
    g = of(scored.groups, "both")
    assert len(g) == 2 * 2 and set(g["n"]) == {24}  # (template, sample) groups of 24, never 48
    for s, alone in ((0, "only0"), (1, "only1")):
        mine = g[g["sample"] == s].reset_index(drop=True)
        ref = of(scored.groups, alone)
        for col in ("pbleu", "diverse_rate"):
            assert mine[col].tolist() == pytest.approx(ref[col].tolist()), (s, col)
    assert (
        g.loc[g["sample"] == 0, "diverse_rate"].iloc[0]
        != g.loc[g["sample"] == 1, "diverse_rate"].iloc[0]
    )


def test_the_summary_is_the_mean_over_samples_with_its_spread(scored):
    both, a, b = (of(scored.summary, m) for m in ("both", "only0", "only1"))
    for col in ("pbleu", "diverse_rate", "coverage_w_order", "ordered_rate", "distinct_2"):
        if col != "ordered_rate":  # pooled: below
            assert both[col].tolist() == pytest.approx(((a[col] + b[col]) / 2).tolist()), col
        sd = np.std(np.vstack([a[col], b[col]]), axis=0, ddof=1)
        assert both[f"{col}_sample_sd"].tolist() == pytest.approx(sd.tolist()), col
    assert both["n_answers"].tolist() == (a["n_answers"] + b["n_answers"]).tolist()
    assert both["n_in_order"].tolist() == (a["n_in_order"] + b["n_in_order"]).tolist()
    pooled = 100 * (a.n_in_order + b.n_in_order) / (a.n_all_present + b.n_all_present)
    assert both["ordered_rate"].tolist() == pytest.approx(pooled.tolist())  # a ratio of sums
    assert both["ordered_rate"].tolist() == pytest.approx(
        (100 * both.coverage_w_order / both.coverage_wo_order).tolist()
    )
    assert set(both["n_samples"]) == {2}


# Per sample, 24 permutations of template 0: sample 0 half complete (all in order: OR 100), sample 1
# all complete, half in order (OR 50), sample 2 all complete and in order (OR 100). The mean of the
# per-sample ratios is 83.33; pooled, 48 / 60 = 80, as w/ order / w/o order gives.
IN_ORDER, OUT_OF_ORDER, INCOMPLETE = ANSWERS[0][0], ANSWERS[0][2], ANSWERS[0][3]
THREE = {
    0: [IN_ORDER] * 12 + [INCOMPLETE] * 12,
    1: [IN_ORDER] * 12 + [OUT_OF_ORDER] * 12,
    2: [IN_ORDER] * 24,
}


def test_a_sampled_runs_ordered_rate_is_one_number_in_tables_1_3_and_7(scored_run):
    """Pooled over samples in the summary, so Table 3 (the summary's row), Table 1 and Table 7
    (pooled over templates) agree: alone, and beside a greedy model of another design (the
    summary rebuilt on the shared instances, per sample as scoring does it)."""
    from ocg.analysis import paper_tables as tables

    by_model = {
        "s": [
            {
                "set_id": "s1",
                "template_id": 0,
                "perm_index": p,
                "concepts": CONCEPTS,
                "pos_pattern": "NVNN",
                "answer": THREE[k][p],
                "sample": k,
            }
            for k in range(3)
            for p in range(24)
        ],
        "g": [
            {
                "set_id": "s1",
                "template_id": t,
                "perm_index": p,
                "concepts": CONCEPTS,  # greedy, and
                "pos_pattern": "NVNN",
                "answer": ANSWERS[0][p % 4],
            }  # templates 0 and 1: another design
            for t in (0, 1)
            for p in range(24)
        ],
    }
    root = scored_run(
        "sampled_and_greedy", lambda model, _: by_model[model], METRICS, models=("s", "g")
    )
    for models in (["s"], ["s", "g"]):
        summary = load_scores(root / "scores", models).summary
        mine = summary[summary["model"] == "s"]
        assert mine["n_samples"].tolist() == [3] and mine["ordered_rate_sample_sd"].notna().all()
        t1 = tables.table1(mine)
        t3 = tables.table3(mine)
        t7 = tables.table7(summary, {"s": "g"})
        values = [
            t1.loc[t1.metric == "ordered_rate", "value"].item(),
            t3.loc[
                (t3.metric == "ordered_rate") & (t3.condition == "with_phrase"), "mean_over_llms"
            ].item(),
            t7.loc[(t7.model == "s") & (t7.metric == "ordered_rate"), "value"].item(),
            100 * mine.coverage_w_order.item() / mine.coverage_wo_order.item(),
        ]
        assert values == pytest.approx([80.0] * 4), models


def test_one_sample_scores_exactly_as_a_greedy_run(scored):
    k1, greedy = (
        of(scored.summary, "k1"),
        of(scored.summary, "only0").dropna(axis=1, how="all"),
    )
    assert len(greedy.columns) > 20 and set(k1["n_samples"]) == {1}
    for col in greedy.columns.drop("model"):
        assert (
            k1[col].tolist() == pytest.approx(greedy[col].tolist())
            if greedy[col].dtype.kind == "f"
            else k1[col].tolist() == greedy[col].tolist()
        ), col
    assert "sample" not in of(scored.answers, "only0").dropna(axis=1, how="all")


def test_pass_at_k_counts_samples_composed_in_order(scored):
    a = scored.answers
    table = pass_at_k_table(a[a["model"] == "both"])
    assert table["k"].tolist() == [1, 2, 1, 2] and set(table["n_samples"]) == {2}
    per = (
        a[a["model"] == "both"]
        .groupby(["template_id", "instance_id"])["in_order"]
        .agg(["sum", "size"])
    )
    for t in (0, 1):
        c = per.loc[t, "sum"]
        assert table[(table.template_id == t) & (table.k == 1)][
            "pass_at_k"
        ].item() == pytest.approx(100 * (c / 2).mean())
        assert table[(table.template_id == t) & (table.k == 2)][
            "pass_at_k"
        ].item() == pytest.approx(100 * (c > 0).mean())
    assert samples_per_instance(a).to_dict() == {"both": 2, "k1": 1, "only0": 1, "only1": 1}


def test_the_spread_is_across_samples_and_figures_3_4_count_any_sample(scored):
    a, g = scored.answers, scored.groups
    spread = sample_spread(a[a["model"] == "both"], g[g["model"] == "both"]).set_index("metric")
    s = scored.summary
    per_sample = [of(s, m)["pbleu"].mean() for m in ("only0", "only1")]
    assert spread.loc["pbleu", "mean_over_samples"] == pytest.approx(np.mean(per_sample))
    assert spread.loc["pbleu", "sd_over_samples"] == pytest.approx(np.std(per_sample, ddof=1))
    composed = composed_by(a[a["model"].isin(["both", "only0", "only1"])]).set_index(
        ["set_id", "perm_index"]
    )
    alone = [
        composed_by(a[a["model"] == m]).set_index(["set_id", "perm_index"])["n_models"]
        for m in ("only0", "only1")
    ]
    either = ((alone[0] > 0) | (alone[1] > 0)).astype(int)
    assert composed["n_models"].tolist() == (either + alone[0] + alone[1]).tolist()
    assert pd.Series(composed["n_models"]).max() == 3
