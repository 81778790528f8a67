"""results.json (docs/DATA.md, "results.json"): one machine-readable file per report, equal to
its Table 1 CSV, with each interval's unit and n, each metric's direction and unit from the
registry, the signature key and the design; every key documented."""

import json
import math
import shutil
from dataclasses import replace

import pandas as pd
import pytest

from ocg.analysis import paper_tables as tables
from ocg.analysis import uncertainty
from ocg.analysis.report import save_table, sources
from ocg.core.layout import ModelGenerations
from ocg.metrics.registry import PAPER_METRICS, metric, names
from ocg.records import RunCard
from ocg.results.scores import load_scores
from ocg.site.landing import write_index
from ocg.site.results_file import results
from tests.helpers import checked_run, documented_keys, nulls_without_reason

ANSWERS = ["The boy rides a bike down the street.", "A bike, a boy and a street.", "The boy rode."]
RUN = checked_run(
    **{
        "name": "r",
        "file": "r.yaml",
        "models": ["a", "b"],
        "conditions": ["original", "ordered"],
        "n_concepts": 4,
        "subset_k": 2,
        "permutations": None,
        "template_ids": [0, 1],
        "samples": 1,
        "sampling": None,
    }
)


@pytest.fixture(scope="module")
def report(scored_run):
    root = scored_run(
        "results_file",
        lambda model, _: [
            {
                "set_id": s,
                "template_id": t,
                "perm_index": p,
                "concepts": ["boy", "ride", "bike", "street"],
                "pos_pattern": "NVNN",  # clusters that differ: intervals that are not points
                "answer": ANSWERS[0 if p < 1 + t + 2 * (s == "s2") + (model == "b") else 1 + p % 2],
            }
            for s in ("s1", "s2")
            for t in (0, 1)
            for p in range(6)
        ],
        ["coverage", "pbleu", "pbleurt", "distinct", "diverse"],
        models=("a", "b"),
        conditions=("original", "ordered"),
    )
    scores = load_scores(root / "scores")
    out = root / "report"
    save_table(tables.table1(scores.summary), "table1", out, meta=sources(scores))
    cis = pd.concat(
        [
            uncertainty.bootstrap_ci(
                scores.answers,
                scores.groups,
                m,
                resampling=uncertainty.Resampling("clusters", 200, 7),
            )
            for m in ("a", "b")
        ]
    )
    save_table(
        cis,
        "table1_bootstrap_ci",
        out,
        meta={**sources(scores), **uncertainty.Resampling("clusters", 200, 7).settings()},
    )
    paired = pd.concat(
        [
            uncertainty.paired_test(
                scores.answers,
                scores.groups,
                m,
                uncertainty.Resampling("clusters", 200, 7),
                n_perm=200,
            )
            for m in ("a", "b")
        ]
    )
    save_table(
        paired,
        "table1_paired_test",
        out,
        meta={**sources(scores), **uncertainty.Resampling("clusters", 200, 7).settings(n_perm=200)},
    )
    for model in ("a", "b"):  # the run card that names each model's weights
        RunCard(
            model=model,
            settings={
                "id": f"org/{model}",
                "dtype": "bfloat16",
                "quantization": "none",
                "resolved_revision": "abc123",
            },
        ).write(ModelGenerations.of(model, root / "gen").run_card)
    page = write_index(
        out, "t", [], run=RUN, scores_root=root / "scores", generations_root=root / "gen"
    ).read_text()
    strict = json.loads(
        (out / "results.json").read_text(),  # NaN or Infinity would fail any other parser
        parse_constant=lambda c: pytest.fail(f"results.json holds {c}"),
    )
    return out, page, strict, scores


def test_every_value_equals_table1s_csv_with_its_interval_unit_and_n(report):
    out, _, doc, scores = report
    t1 = pd.read_csv(out / "tables" / "table1.csv")
    ci = pd.read_csv(out / "tables" / "table1_bootstrap_ci.csv").set_index(["model", "metric"])
    got = [
        (model, name, m["value"], m["delta_vs_original"])
        for model, entry in doc["models"].items()
        for name, m in entry["metrics"].items()
    ]
    want = [
        (
            r.model,
            r.metric,
            None if math.isnan(r.value) else r.value,
            None if math.isnan(r.delta_vs_original_commongen) else r.delta_vs_original_commongen,
        )
        for r in t1.itertuples()
    ]
    assert sorted(got, key=str) == sorted(want, key=str) and len(got) == 2 * 9
    for model, entry in doc["models"].items():
        summary = scores.summary[
            (scores.summary.model == model) & (scores.summary.condition == "ordered")
        ]
        shown = dict(entry["metrics"])
        missing = shown.pop("pbleurt")  # no checkpoint here: no value, its reason beside it
        assert (
            missing["value"] is None
            and missing["interval"] is None
            and "BLEURT" in missing["missing_reason"]["value"]
            and "interval" in missing["missing_reason"]
        )
        assert (missing["n"], missing["n_of"]) == (0, None)  # not "6 groups": nothing was averaged
        for name, m in shown.items():
            reg = metric(name)
            assert (m["higher_is_better"], m["metric_unit"], m["label"]) == (
                reg.higher_is_better,
                reg.unit,
                reg.label,
            )
            assert {
                k: v for k, v in m["signature_key"].items() if k != "missing_reason"
            } == scores.signatures[model].metric_keys[reg.family]
            # 4 clusters: a small sample, so no bounds, as the page gives none (one rule for both)
            assert (m["interval"]["low"], m["interval"]["high"]) == (None, None) and ci.loc[
                (model, name)
            ].small_sample
            assert (m["interval"]["unit"], m["interval"]["n"], m["interval"]["n_sets"]) == (
                "clusters",
                4,
                2,
            )
            assert m["interval"]["level"] == 0.95 and m["interval"]["small_sample"] is True
            # and no p-value either: a sign-flip test over 4 units cannot give a small one
            test = m["delta_test"]
            assert test["unit"] == "clusters" and test["p_value"] is None is test["p_holm"]
            assert "small sample" in test["missing_reason"]["p_value"]
            assert test["holm_family"] == ("paper" if name in PAPER_METRICS else "extra")
        cov = entry["metrics"]["coverage_wo_order"]
        assert (
            (cov["n"], cov["n_of"]) == (int(summary.n_answers.sum()), "answers") == (24, "answers")
        )
        orate = entry["metrics"]["ordered_rate"]
        assert (
            orate["n"] == int(summary.n_all_present.sum())
            and entry["metrics"]["pbleu"]["n_of"] == "groups"
        )
        assert entry["design"] == scores.designs[model] and entry["design"]["templates"] == [
            0,
            1,
        ]
    assert doc["bootstrap"]["unit"] == "clusters" and (
        doc["bootstrap"]["n_boot"],
        doc["bootstrap"]["seed"],
    ) == (200, 7)
    assert doc["run"]["template_ids"] == [0, 1] and doc["run"]["conditions"] == [
        "original",
        "ordered",
    ]
    assert doc["provenance"]["git"]["commit"] and "pandas" in doc["provenance"]["packages"]


def test_intervals_over_enough_units_carry_the_csv_bounds(report, tmp_path):
    out, _, _, scores = report
    copy = tmp_path / "report"
    shutil.copytree(out, copy)
    for name in (
        "table1_bootstrap_ci",
        "table1_paired_test",
    ):  # as a run with 20 sets and more would save them
        path = copy / "tables" / f"{name}.csv"
        pd.read_csv(path).assign(small_sample=False).to_csv(path, index=False)
    doc = results(copy, RUN, scores)
    ci = pd.read_csv(copy / "tables" / "table1_bootstrap_ci.csv").set_index(["model", "metric"])
    shown = [
        (
            m["interval"]["low"],
            m["interval"]["high"],
            tuple(ci.loc[(model, name), ["ci_low", "ci_high"]]),
        )
        for model, entry in doc["models"].items()
        for name, m in entry["metrics"].items()
        if m["interval"]
    ]
    assert shown and all((low, high) == want for low, high, want in shown)
    spread = [
        m["interval"]["low"] < m["value"] < m["interval"]["high"]
        for entry in doc["models"].values()
        for m in entry["metrics"].values()
        if m["interval"]
    ]
    assert (
        sum(spread) >= 4
    )  # intervals that are no points: low, value and high cannot be swapped unseen


def test_each_model_names_its_weights_and_counts_its_list_copies(report):
    *_, doc, scores = report
    for model, entry in doc["models"].items():
        assert (entry["model_id"], entry["dtype"]) == (f"org/{model}", "bfloat16")
        assert entry["quantization"] == "none" and entry["revision"] == "abc123"
        summary = scores.summary[scores.summary.model == model]
        for condition, counts in entry["list_copies"].items():
            rows = summary[summary.condition == condition]
            assert counts == {
                "answers": int(rows.n_answers.sum()),
                "in_order": int(rows.n_in_order.sum()),
                "copies_list": int(rows.n_copies_list.sum()),
                "bare_list": int(rows.n_bare_list.sum()),
            }


def test_the_perplexity_median_stands_beside_its_mean(report, tmp_path):
    out, _, _, scores = report
    summary = scores.summary.assign(
        perplexity=50.0, perplexity_median=[10.0 + i for i in range(len(scores.summary))]
    )
    t1 = pd.concat(
        [
            pd.read_csv(out / "tables" / "table1.csv"),
            pd.DataFrame(
                {
                    "model": ["a"],
                    "metric": ["perplexity"],
                    "value": [50.0],
                    "delta_vs_original_commongen": [0.0],
                }
            ),
        ]
    )
    copy = tmp_path / "report"
    shutil.copytree(out, copy)
    save_table(t1, "table1", copy)
    doc = results(copy, RUN, replace(scores, summary=summary))
    ppl = doc["models"]["a"]["metrics"]["perplexity"]
    a = summary[summary.model == "a"]
    want = a[a.condition == "ordered"].perplexity_median.mean()
    assert ppl["median"] == pytest.approx(want)
    assert ppl["median_delta_vs_original"] == pytest.approx(
        want - a[a.condition == "original"].perplexity_median.mean()
    )


def test_a_report_whose_tests_are_empty_still_gets_its_results(report, tmp_path):
    out, _, _, scores = report
    copy = tmp_path / "report"
    shutil.copytree(out, copy)
    for name in (
        "table1_paired_test",
        "table1_bootstrap_ci",
    ):  # as notebook 03 saves them for an ordered-only run
        save_table(pd.DataFrame(), name, copy, meta=sources(scores))
    doc = results(copy, RUN, scores)
    metrics = [m for entry in doc["models"].values() for m in entry["metrics"].values()]
    assert len(metrics) == 18 and all(
        m["interval"] is None and m["delta_test"] is None for m in metrics
    )
    assert doc["models"]["a"]["metrics"]["coverage_w_order"]["value"] is not None


def test_the_landing_page_links_it(report):
    _, page, _, _ = report
    assert "<a href='results.json'>results.json</a>" in page


def test_every_key_is_documented_in_data_md_and_every_documented_key_is_there(report):
    *_, doc, _ = report
    entry = doc["models"]["a"]
    metric_entry = entry["metrics"]["coverage_w_order"]
    seen = {
        "top": set(doc),
        "model": set(entry),
        "metric": set(metric_entry),
        "interval": set(metric_entry["interval"]),
        "list_copies": set(entry["list_copies"]["ordered"]),
        "delta_test": set(metric_entry["delta_test"]) - set(metric_entry["interval"]),
        "bootstrap": set(doc["bootstrap"]),
        "paired_test": set(doc["paired_test"]) - set(doc["bootstrap"]),
    }
    docs = documented_keys()
    optional = {
        "top": {"note", "missing_reason"},  # no Table 1; a null at this level
        "model": {"missing_reason"},
        "metric": {
            "paper",
            "missing_reason",
            "median",
            "median_delta_vs_original",
            "median_pooled",
            "mean_median_disagree",
        },
        "interval": {"missing_reason"},  # small-sample bounds are null, with their reason
        "delta_test": {"missing_reason"},
    }
    for level, keys in seen.items():
        assert keys - docs.get(level, set()) == set(), f"{level} keys missing from docs/DATA.md"
        assert docs.get(level, set()) - keys - optional.get(level, set()) == set(), (
            f"{level}: documented, not there"
        )


# records copied whole, whose nulls mean something of their own (a signature key's absent revision)
def test_every_null_of_every_registered_metric_carries_its_missing_reason(report, tmp_path):
    out, _, _, scores = report
    copy = tmp_path / "report"
    shutil.copytree(out, copy)
    t1 = pd.read_csv(copy / "tables" / "table1.csv")
    absent = [n for n in names() if n not in set(t1["metric"])]
    assert absent  # perplexity, SLOR, the judge...: not scored in this report
    unscored = pd.DataFrame(
        [{"model": m, "metric": n, "value": float("nan")} for m in ("a", "b") for n in absent]
    )
    save_table(pd.concat([t1, unscored], ignore_index=True), "table1", copy)
    doc = results(copy, RUN, scores)  # no generations folder: the run cards' fields are null too
    assert {n for e in doc["models"].values() for n in e["metrics"]} == set(names())
    assert nulls_without_reason(doc["models"]) == []
    ppl = doc["models"]["a"]["metrics"]["perplexity"]
    assert ppl["value"] is None and "not scored" in ppl["missing_reason"]["value"]
    assert (
        doc["models"]["a"]["model_id"] is None and doc["models"]["a"]["missing_reason"]["model_id"]
    )
    # the check itself finds a null left unexplained
    assert nulls_without_reason({"a": {"m": {"value": None}}}) == ["/a/m/value"]


def test_a_share_of_nothing_says_so(scored_run, tmp_path):
    """Ordered Rate is a share of the answers holding every concept: where none does, its null
    says 0/0 (with the count), not that the family was never scored."""
    root = scored_run(
        "zero_of_zero",
        lambda model, _: [
            {
                "set_id": s,
                "template_id": 0,
                "perm_index": p,
                "concepts": ["boy", "ride", "bike", "street"],
                "pos_pattern": "NVNN",
                "answer": ANSWERS[0] if model == "a" else "A boy sat.",
            }
            for s in ("s1", "s2")
            for p in range(6)
        ],
        ["coverage"],
        models=("a", "b"),
        conditions=("original", "ordered"),
    )
    scores = load_scores(root / "scores")
    out = tmp_path / "report"
    save_table(tables.table1(scores.summary), "table1", out, meta=sources(scores))
    doc = results(out, RUN, scores)
    rate = doc["models"]["b"]["metrics"]["ordered_rate"]
    assert rate["value"] is None and (rate["n"], rate["n_of"]) == (0, "answers where all_present")
    assert rate["missing_reason"]["value"].startswith(
        "0 of 12 answers in `ordered` have all_present (every concept)"
    ), rate["missing_reason"]
    assert doc["models"]["a"]["metrics"]["ordered_rate"]["value"] is not None
    assert nulls_without_reason(doc["models"]) == []
