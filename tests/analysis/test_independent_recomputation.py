"""Table 1, the sensitivity rows and results.json recomputed from the scored records alone, with
pandas and numpy and none of the code that made them: each answer's
verdicts and each group's values are read from the score set's parquet files and averaged here
by the definitions docs/METHODS.md gives (a rate per template, then the mean over templates;
Ordered Rate pooled; the list-copy rows pooled over templates on both sides)."""

import json
import math

import numpy as np
import pandas as pd
import pytest

ANSWERS = [
    "The boy rides a bike down the street.",
    "Boy ride bike street.",
    "The boy rode.",
    "A street, a bike and a boy ride.",
    "The boy, ride, bike and street.",
]


@pytest.fixture(scope="module")
def made(scored_run):
    """A report's tables and results.json, made by ocg as notebook 03 and `ocg report` make them."""
    from ocg.analysis import paper_tables as tables
    from ocg.analysis import sensitivity
    from ocg.analysis.report import save_table
    from ocg.results.scores import load_scores
    from ocg.site.results_file import results
    from tests.helpers import checked_run

    root = scored_run(
        "independent",
        lambda m, c: [
            {
                "set_id": s,
                "template_id": t,
                "perm_index": p,
                "concepts": ["boy", "ride", "bike", "street"],
                "pos_pattern": "NVNN",
                "answer": ANSWERS[
                    (p * (1 + t) + (s == "s2") + 2 * (m == "b") + (c == "ordered") * (p % 2)) % 5
                ],
            }
            for s in ("s1", "s2", "s3")
            for t in (0, 2)
            for p in range(5)
        ],
        ["coverage", "pbleu", "distinct", "diverse"],
        models=("a", "b"),
        conditions=("original", "ordered"),
    )
    scores = load_scores(root / "scores")
    answers = scores.answers.assign(
        perplexity=lambda d: 10.0 + d["answer"].str.len() ** 1.5 * (1 + d["template_id"])
    )
    out = root / "report"
    save_table(tables.table1(scores.summary), "table1", out)
    save_table(sensitivity.table1_sensitivity(answers), "table1_sensitivity", out)
    doc = results(out, checked_run(["a", "b"], ["original", "ordered"], name="r"), scores)
    return (
        root,
        out,
        json.loads(json.dumps(doc)),
        answers[["model", "condition", "template_id", "perplexity", "instance_id"]],
    )


def _records(root):
    answers = pd.concat(
        [pd.read_parquet(root / "scores" / m / "answers.parquet") for m in ("a", "b")]
    )
    groups = pd.concat(
        [pd.read_parquet(root / "scores" / m / "groups.parquet") for m in ("a", "b")]
    )
    return answers, groups


def _table1(answers, groups):
    """{(model, metric): (value, Δ vs original)} by the paper's definitions."""
    values = {}
    for (model, condition), a in answers.groupby(["model", "condition"]):
        g = groups[(groups.model == model) & (groups.condition == condition)]
        per_t = {
            t: (
                100 * x.all_present.mean(),
                100 * x.in_order.mean(),
                100 * x.distinct_2.mean(),
                100 * x.pos_all_present.mean(),
                100 * x.pos_in_order.mean(),
            )
            for t, x in a.groupby("template_id")
        }
        values[(model, condition)] = {
            "coverage_wo_order": np.mean([v[0] for v in per_t.values()]),
            "coverage_w_order": np.mean([v[1] for v in per_t.values()]),
            "ordered_rate": 100 * a.in_order.sum() / a.all_present.sum(),
            # PoS-correct coverage: a concept counts only with the part of speech its set gives it
            "pos_coverage_wo_order": np.mean([v[3] for v in per_t.values()]),
            "pos_coverage_w_order": np.mean([v[4] for v in per_t.values()]),
            "pbleu": np.mean([x.pbleu.mean() for _, x in g.groupby("template_id")]),
            "distinct_2": np.mean([v[2] for v in per_t.values()]),
            "diverse_rate": np.mean(
                [100 * x.diverse_rate.mean() for _, x in g.groupby("template_id")]
            ),
        }
    return {
        (m, k): (v, v - values[(m, "original")][k])
        for (m, c), row in values.items()
        if c == "ordered"
        for k, v in row.items()
    }


def test_table1_and_results_json_equal_a_recomputation_from_the_records(made):
    root, out, doc, _ = made
    want = _table1(*_records(root))
    t1 = pd.read_csv(out / "tables" / "table1.csv").set_index(["model", "metric"])
    for (model, metric), (value, delta) in want.items():
        assert t1.loc[(model, metric), "value"] == pytest.approx(value, abs=1e-9)
        assert t1.loc[(model, metric), "delta_vs_original_commongen"] == pytest.approx(
            delta, abs=1e-9
        )
        entry = doc["models"][model]["metrics"][metric]
        assert (entry["value"], entry["delta_vs_original"]) == (
            pytest.approx(value, abs=1e-9),
            pytest.approx(delta, abs=1e-9),
        )
    assert {k for k in want} == {k for k in t1.index if not math.isnan(t1.loc[k, "value"])}


def test_results_json_counts_equal_the_records(made):
    root, _, doc, _ = made
    answers, _ = _records(root)
    for model, entry in doc["models"].items():
        mine = answers[answers.model == model]
        for condition, counts in entry["list_copies"].items():
            a = mine[mine.condition == condition]
            assert counts == {
                "answers": len(a),
                "in_order": int(a.in_order.sum()),
                "copies_list": int(a.copies_list.sum()),
                "bare_list": int(a.bare_list.sum()),
            }
        ordered = mine[mine.condition == "ordered"]
        assert entry["metrics"]["coverage_w_order"]["n"] == len(ordered)
        assert entry["metrics"]["ordered_rate"]["n"] == int(ordered.all_present.sum())
    assert (
        sum(c["copies_list"] for e in doc["models"].values() for c in e["list_copies"].values()) > 0
    )


def test_the_sensitivity_rows_equal_a_recomputation_from_the_records(made):
    root, out, _, ppl = made
    answers, _ = _records(root)
    sens = pd.read_csv(out / "tables" / "table1_sensitivity.csv")
    t1 = _table1(*_records(root))
    for model in ("a", "b"):
        mine = answers[answers.model == model]
        # list copies: pooled over templates, each condition on its own answers
        for variant, keep in (
            ("excluding copies on both sides", lambda a: a[~a.copies_list].assign(c=False)),
            ("counting copies as failures", lambda a: a.assign(c=a.copies_list)),
        ):
            rates = {}
            for condition in ("ordered", "original"):
                a = keep(mine[mine.condition == condition])
                present, inside = a.all_present & ~a.c, a.in_order & ~a.c
                rates[condition] = {
                    "coverage_wo_order": 100 * present.mean(),
                    "coverage_w_order": 100 * inside.mean(),
                    "ordered_rate": 100 * inside.sum() / present.sum(),
                }
            rows = sens[(sens.model == model) & (sens.variant == variant)].set_index("metric")
            for metric, value in rates["ordered"].items():
                assert rows.loc[metric, "value"] == pytest.approx(value, abs=1e-9)
                assert rows.loc[metric, "delta"] == pytest.approx(
                    value - rates["original"][metric], abs=1e-9
                )
                assert rows.loc[metric, "default"] == pytest.approx(
                    t1[(model, metric)][0], abs=1e-9
                )
                assert rows.loc[metric, "default_delta"] == pytest.approx(
                    t1[(model, metric)][1], abs=1e-9
                )
        # CommonGen's rule: its own verdict columns, per template then over templates
        o = mine[mine.condition == "ordered"]
        rule = sens[
            (sens.model == model)
            & (sens.choice == "matching: spaCy lemma (CommonGen's)")
            & (sens.variant == "order: any increasing sequence (ours)")
        ].set_index("metric")
        assert rule.loc["coverage_wo_order", "value"] == pytest.approx(
            np.mean(
                [100 * x["all_present@commongen_lemma"].mean() for _, x in o.groupby("template_id")]
            ),
            abs=1e-9,
        )
        # perplexity: each average per template, then the mean over templates
        p = ppl[(ppl.model == model) & (ppl.condition == "ordered")]
        rows = sens[(sens.model == model) & (sens.metric == "perplexity")].set_index("variant")
        for variant, how in (
            ("mean (the paper's)", np.mean),
            ("median per template, averaged over templates", np.median),
            ("geometric mean", lambda x: math.exp(np.mean(np.log(x)))),
        ):
            want = np.mean([how(x.perplexity.to_numpy()) for _, x in p.groupby("template_id")])
            assert rows.loc[variant, "value"] == pytest.approx(want, rel=1e-12)
        # the median Tables 1 and 4 show: over every answer at once
        assert rows.loc["median over every answer", "value"] == pytest.approx(
            np.median(p.perplexity.to_numpy()), rel=1e-12
        )
