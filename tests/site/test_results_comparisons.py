"""results.json's Table 4 and forced-order blocks (docs/DATA.md, "results.json"): equal to the
tables notebooks 06 and 12 save (table4*.csv, forced_order*.csv), each interval with its unit and
n, small samples as Table 1's, the pooled perplexity median beside its mean, every null with its
reason, a report without the conditions given a null block that says why."""

import copy
import json
import math
import shutil

import pandas as pd
import pytest

from ocg.analysis import deltas, forcing, skew, uncertainty
from ocg.analysis import paper_tables as tables
from ocg.analysis.report import save_table, sources
from ocg.results.scores import load_scores
from ocg.site.results_file import SCHEMA_VERSION, results
from ocg.site.results_reasons import with_reasons
from tests.helpers import checked_run, documented_keys, nulls_without_reason

ANSWERS = ["The boy rides a bike down the street.", "A bike, a boy and a street.", "The boy rode."]
CONDITIONS = ["original", "ordered", "ordered_one_shot", "ordered_constrained"]
SETTINGS = {
    "name": "r",
    "file": "r.yaml",
    "models": ["a", "b"],
    "conditions": CONDITIONS,
    "n_concepts": 4,
    "subset_k": 2,
    "permutations": None,
    "template_ids": [0, 1],
    "samples": 1,
    "sampling": None,
}
RUN = checked_run(**SETTINGS)
RESAMPLING = uncertainty.Resampling("clusters", 200, 7)


def _answer(model, condition, s, t, p):
    """Each condition answers in order from a different permutation on (a Δ that is no zero)."""
    shift = CONDITIONS.index(condition)
    in_order = p < 1 + t + shift + 2 * (s == "s2") + (model == "b")
    return ANSWERS[0 if in_order else 1 + (p + shift) % 2]


@pytest.fixture(scope="module")
def report(scored_run):
    root = scored_run(
        "results_comparisons",
        lambda model, condition: [
            {
                "set_id": s,
                "template_id": t,
                "perm_index": p,
                "concepts": ["boy", "ride", "bike", "street"],
                "pos_pattern": "NVNN",
                "answer": _answer(model, condition, s, t, p),
            }
            for s in ("s1", "s2")
            for t in (0, 1)
            for p in range(6)
        ],
        ["coverage", "pbleu", "pbleurt", "distinct", "diverse"],
        models=("a", "b"),
        conditions=tuple(CONDITIONS),
    )
    scores = load_scores(root / "scores")
    summary, answers, groups = scores.summary, scores.answers, scores.groups
    out, meta = root / "report", {**sources(scores), **RESAMPLING.settings(n_perm=200)}
    save_table(tables.table1(summary), "table1", out, meta=sources(scores))
    # notebook 06's tables, as it computes them
    t4 = skew.with_medians(
        tables.table4(summary), answers, "ordered_one_shot", "ordered", "delta_vs_zero_shot_ordered"
    )
    save_table(t4, "table4", out, meta=sources(scores))
    cis = deltas.intervals(answers, groups, "ordered_one_shot", RESAMPLING, table="table4")
    save_table(cis, "table4_bootstrap_ci", out, meta={**sources(scores), **RESAMPLING.settings()})
    both = ("ordered_one_shot", "ordered")
    paired = deltas.tests(answers, groups, both, RESAMPLING, n_perm=200, table="table4")
    save_table(paired, "table4_paired_test", out, meta=meta)
    # notebook 12's
    save_table(tables.forced_order(summary), "forced_order", out, meta=sources(scores))
    forced = pd.concat(
        [
            deltas.tests(
                answers, groups, (tables.FORCED, base), RESAMPLING, n_perm=200, table="table4"
            )
            for base in (tables.ASKED, tables.UNORDERED)
        ],
        ignore_index=True,
    )
    save_table(forced, "forced_order_paired_test", out, meta=meta)
    save_table(forcing.outcomes(answers), "forced_order_outcomes", out, meta=sources(scores))
    doc = json.loads(
        json.dumps(results(out, RUN, scores)),  # NaN or Infinity would fail any other parser
        parse_constant=lambda c: pytest.fail(f"results.json holds {c}"),
    )
    return out, doc, scores


def _csv(out, name):
    return pd.read_csv(out / "tables" / f"{name}.csv")


def _num(x):
    return None if isinstance(x, float) and math.isnan(x) else x


def _tests_of(out, name, condition, base):
    t = _csv(out, name)
    return t[(t.condition == condition) & (t.base == base)].set_index(["model", "metric"])


def test_table4_equals_its_csvs_with_each_interval_unit_and_n(report):
    out, doc, _ = report
    block = doc["table4"]
    assert doc["schema_version"] == SCHEMA_VERSION == 4
    assert (block["condition"], block["base"]) == ("ordered_one_shot", "ordered")
    t4 = _csv(out, "table4")
    got = [
        (model, name, m["value"], m["delta_vs_ordered"])
        for model, metrics in block["models"].items()
        for name, m in metrics.items()
    ]
    want = [
        (r.model, r.metric, _num(r.value), _num(r.delta_vs_zero_shot_ordered))
        for r in t4.itertuples()
    ]
    assert sorted(got, key=str) == sorted(want, key=str) and len(got) == 2 * 7
    assert any(d for *_, d in got)  # a Δ that is not zero: one-shot answers differ here
    ci = _csv(out, "table4_bootstrap_ci").set_index(["model", "metric"])
    tests = _tests_of(out, "table4_paired_test", "ordered_one_shot", "ordered")
    for model, metrics in block["models"].items():
        shown = dict(metrics)
        missing = shown.pop("pbleurt")  # no checkpoint: no value, its reason beside it
        assert missing["value"] is None and "BLEURT" in missing["missing_reason"]["value"]
        assert missing["interval"] is None and "interval" in missing["missing_reason"]
        for name, m in shown.items():
            row, test = ci.loc[(model, name)], tests.loc[(model, name)]
            assert m["interval"]["unit"] == row.unit == "clusters"
            assert (m["interval"]["n"], m["interval"]["n_sets"]) == (row.n, row.n_sets) == (4, 2)
            # 4 clusters: a small sample, no bounds and no p-value, each with its reason
            assert m["interval"]["small_sample"] is True and row.small_sample
            assert (m["interval"]["low"], m["interval"]["high"]) == (None, None)
            assert "small sample" in m["interval"]["missing_reason"]["low"]
            assert m["delta_test"]["p_value"] is None is m["delta_test"]["p_holm"]
            assert "small sample" in m["delta_test"]["missing_reason"]["p_holm"]
            assert (m["delta_test"]["holm_family"], m["delta_test"]["p_method"]) == (
                test.holm_family,
                test.p_method,
            )
            assert m["label"] and m["n_of"] in ("answers", "groups", "answers where all_present")
    assert block["bootstrap"]["unit"] == "clusters" and block["paired_test"]["n_perm"] == 200


def _large(out, tmp_path, names):
    """A copy of the report whose `names` tables rest on enough units (as 20 sets and more do)."""
    copied = tmp_path / "report"
    shutil.copytree(out, copied)
    for name in names:
        path = copied / "tables" / f"{name}.csv"
        pd.read_csv(path).assign(small_sample=False).to_csv(path, index=False)
    return copied


def test_on_enough_units_bounds_and_p_values_are_the_csvs(report, tmp_path):
    out, _, scores = report
    copied = _large(
        out, tmp_path, ["table4_bootstrap_ci", "table4_paired_test", "forced_order_paired_test"]
    )
    doc = results(copied, RUN, scores)
    ci = _csv(copied, "table4_bootstrap_ci").set_index(["model", "metric"])
    blocks = {
        ("table4", "delta_test"): _tests_of(
            copied, "table4_paired_test", "ordered_one_shot", "ordered"
        ),
        ("forced_order", "delta_test"): _tests_of(
            copied, "forced_order_paired_test", "ordered_constrained", "ordered"
        ),
        ("forced_order", "delta_vs_original_test"): _tests_of(
            copied, "forced_order_paired_test", "ordered_constrained", "original"
        ),
    }
    seen = 0
    for (key, test_key), want in blocks.items():
        for model, metrics in doc[key]["models"].items():
            for name, m in metrics.items():
                if (model, name) not in want.index:
                    assert m[test_key] is None and m["missing_reason"][test_key]
                    continue
                row, test = want.loc[(model, name)], m[test_key]
                assert (test["low"], test["high"]) == (row.ci_low, row.ci_high)
                assert (test["p_value"], test["p_holm"]) == (row.p_value, row.p_holm)
                seen += 1
                if key == "table4":
                    bounds = ci.loc[(model, name), ["ci_low", "ci_high"]]
                    assert (m["interval"]["low"], m["interval"]["high"]) == tuple(bounds)
    assert seen == 3 * 2 * 6  # every metric with a value, of each model, in each test
    p = [
        m["delta_test"]["p_value"]
        for metrics in doc["table4"]["models"].values()
        for m in metrics.values()
        if m["delta_test"]
    ]
    assert len(set(p)) > 1  # p-values read per metric, not one copied across


def test_the_forced_order_equals_its_csvs_and_says_it_has_no_interval_of_its_own(report):
    out, doc, _ = report
    block = doc["forced_order"]
    assert (block["condition"], block["base"]) == ("ordered_constrained", "ordered")
    t = _csv(out, "forced_order")
    got = {
        (model, name): (m["value"], m["delta_vs_ordered"], m["delta_vs_original"])
        for model, metrics in block["models"].items()
        for name, m in metrics.items()
    }
    want = {
        (r.model, r.metric): (_num(r.value), _num(r.delta_vs_ordered), _num(r.delta_vs_original))
        for r in t.itertuples()
    }
    assert got == want and len(got) == 2 * 7
    assert block["bootstrap"] is None and "notebook 12" in block["missing_reason"]["bootstrap"]
    cov = block["models"]["a"]["coverage_w_order"]
    assert cov["interval"] is None
    assert cov["missing_reason"]["interval"] == block["missing_reason"]["bootstrap"]
    vs_original = _tests_of(out, "forced_order_paired_test", "ordered_constrained", "original")
    test = vs_original.loc[("a", "coverage_w_order")]
    assert cov["delta_vs_original_test"]["p_method"] == test.p_method
    assert cov["delta_vs_original_test"]["n"] == test.n
    summary = report[2].summary
    forced = summary[(summary.model == "a") & (summary.condition == "ordered_constrained")]
    assert (cov["n"], cov["n_of"]) == (int(forced.n_answers.sum()), "answers") == (24, "answers")


def _with_perplexity(out, tmp_path, *, mean, median, base_median):
    """A copy of the report as one that scored perplexity: a row of it in table4.csv (skew's
    columns) and forced_order.csv, and its pooled medians in forced_order_outcomes.csv."""
    copied = tmp_path / "report"
    shutil.copytree(out, copied)
    row = {"model": "a", "metric": "perplexity", "value": mean}
    t4 = pd.concat(
        [
            _csv(copied, "table4"),
            pd.DataFrame(
                [
                    {
                        **row,
                        "delta_vs_zero_shot_ordered": 5.0,
                        "median": median,
                        "median_base": base_median,
                        "median_delta": median - base_median,
                        "dagger": True,
                        "mean_median_disagree": True,
                    }
                ]
            ),
        ]
    )
    save_table(t4, "table4", copied)
    forced = [row | {"delta_vs_ordered": 5.0, "delta_vs_original": 7.0}]
    save_table(
        pd.concat([_csv(copied, "forced_order"), pd.DataFrame(forced)]), "forced_order", copied
    )
    o = _csv(copied, "forced_order_outcomes")
    o["perplexity median"] = o.condition.map(
        {"ordered_constrained": median, "ordered": base_median, "original": 1.0}
    )
    save_table(o, "forced_order_outcomes", copied)
    return copied


def test_the_pooled_perplexity_median_stands_beside_its_mean(report, tmp_path):
    out, _, scores = report
    copied = _with_perplexity(out, tmp_path, mean=500.0, median=20.0, base_median=30.0)
    doc = results(copied, RUN, scores)
    t4 = _csv(copied, "table4").set_index(["model", "metric"]).loc[("a", "perplexity")]
    ppl = doc["table4"]["models"]["a"]["perplexity"]
    assert (ppl["median"], ppl["median_delta_vs_ordered"]) == (t4["median"], t4.median_delta)
    assert ppl["median_pooled"] is True and ppl["mean_median_disagree"] is True
    o = _csv(copied, "forced_order_outcomes").set_index(["model", "condition"])
    forced = doc["forced_order"]["models"]["a"]["perplexity"]
    want = o.loc[("a", "ordered_constrained"), "perplexity median"]
    assert forced["median"] == want == 20.0 and forced["median_pooled"] is True
    assert forced["median_delta_vs_ordered"] == want - o.loc[("a", "ordered"), "perplexity median"]
    # 500 is over 10x its median of 20 (‡): the mean's Δ is not to be read alone
    assert forced["mean_median_disagree"] is True
    calm = _with_perplexity(out, tmp_path / "calm", mean=25.0, median=20.0, base_median=15.0)
    forced = results(calm, RUN, scores)["forced_order"]["models"]["a"]["perplexity"]
    assert forced["mean_median_disagree"] is False  # both Δs up, no mean far above its median


def test_the_forced_order_s_medians_come_from_its_own_columns_for_both_bases(report, tmp_path):
    # the audit: the forced order's Δ vs original showed no mark; its medians are now its table's
    out, _, scores = report
    copied = _with_perplexity(out, tmp_path, mean=25.0, median=20.0, base_median=15.0)
    t = _csv(copied, "forced_order")
    ppl = t["metric"] == "perplexity"
    columns = {
        "median": 20.0,
        "dagger": False,
        "median_ordered": 18.0,
        "median_delta_vs_ordered": 1.5,
        "n_pairs_vs_ordered": 12,
        "dagger_ordered": False,
        "mean_median_disagree_vs_ordered": False,
        "median_original": 30.0,
        "median_delta_vs_original": -4.0,
        "n_pairs_vs_original": 12,
        "dagger_original": False,
        "mean_median_disagree_vs_original": True,  # Δ vs original +7.0, its median Δ -4.0
    }
    for column, value in columns.items():
        t[column] = t["metric"].map(lambda m, v=value: v if m == "perplexity" else None)
    save_table(t, "forced_order", copied)
    forced = results(copied, RUN, scores)["forced_order"]["models"]["a"]["perplexity"]
    row = t[ppl].iloc[0]
    assert forced["median"] == row["median"] == 20.0
    assert forced["median_delta_vs_ordered"] == row["median_delta_vs_ordered"] == 1.5
    assert forced["median_delta_vs_original"] == row["median_delta_vs_original"] == -4.0
    assert forced["mean_median_disagree"] is False
    assert forced["mean_median_disagree_vs_original"] is True


def test_a_report_without_the_conditions_gets_null_blocks_that_say_why(report, tmp_path):
    out, _, scores = report
    copied = tmp_path / "report"
    shutil.copytree(out, copied)
    for name in ("table4", "forced_order"):
        (copied / "tables" / f"{name}.csv").unlink()
    doc = results(copied, RUN, scores)
    assert doc["table4"] is None is doc["forced_order"]
    assert "notebook 06" in doc["missing_reason"]["table4"]
    assert "notebook 12" in doc["missing_reason"]["forced_order"]
    bare = checked_run(**{**SETTINGS, "conditions": ["original", "ordered"]})
    doc = results(copied, bare, scores)
    assert "no `ordered_one_shot` condition" in doc["missing_reason"]["table4"]
    assert "no `ordered_constrained` condition" in doc["missing_reason"]["forced_order"]
    assert doc["models"]["a"]["metrics"]["coverage_w_order"]["value"] is not None  # Table 1 stays


def test_a_block_without_its_tests_keeps_its_values_and_says_why(report, tmp_path):
    out, _, scores = report
    copied = tmp_path / "report"
    shutil.copytree(out, copied)
    for name in ("table4_bootstrap_ci", "table4_paired_test"):
        (copied / "tables" / f"{name}.csv").unlink()
        (copied / "tables" / f"{name}.provenance.json").unlink()
    block = results(copied, RUN, scores)["table4"]
    assert block["bootstrap"] is None is block["paired_test"]
    assert "table4_paired_test" in block["missing_reason"]["paired_test"]
    cov = block["models"]["a"]["coverage_w_order"]
    assert cov["value"] is not None and cov["delta_test"] is None
    assert cov["missing_reason"]["delta_test"] == block["missing_reason"]["paired_test"]


def _all_null(test: dict) -> dict:
    """An interval or test with every value null (`small_sample`, a bool, is never null)."""
    return {k: None for k in test if k != "missing_reason"} | {"small_sample": True}


def _reasons(obj) -> list[str]:
    """Every reason an object gives, nested objects too."""
    if not isinstance(obj, dict):
        return []
    return list((obj.get("missing_reason") or {}).values()) + [
        why for k, v in obj.items() if k != "missing_reason" for why in _reasons(v)
    ]


def test_every_key_that_can_be_null_in_the_blocks_has_its_own_reason(report):
    _, doc, _ = report
    assert nulls_without_reason({k: doc[k] for k in ("table4", "forced_order")}) == []
    # every key null at once: model a's objects (tests, the paper's) with each of their keys
    # null, model b's objects null themselves; each null has a reason of its own
    test = doc["table4"]["models"]["a"]["coverage_w_order"]["delta_test"]
    hollow = copy.deepcopy(doc)
    for key in ("table4", "forced_order"):
        block = hollow[key]
        block["bootstrap"] = block["paired_test"] = None  # the block's own reasons kept
        for model, metrics in block["models"].items():
            for name, m in metrics.items():
                nulls = {k: None for k in m if k != "missing_reason"}
                nulls |= {"median": None, "median_delta_vs_ordered": None}
                nulls |= {"mean_median_disagree": None, "median_pooled": True}
                if model == "a":
                    tests = [
                        k for k in ("interval", "delta_test", "delta_vs_original_test") if k in m
                    ]
                    nulls |= {k: _all_null(test) for k in tests}
                    nulls["paper"] = {"value": None, "delta_vs_ordered": None}
                metrics[name] = nulls
    hollow = with_reasons(hollow)
    assert nulls_without_reason({k: hollow[k] for k in ("table4", "forced_order")}) == []
    reasons = _reasons({k: hollow[k] for k in ("table4", "forced_order")})
    assert len(reasons) > 100 and "not computed" not in reasons  # the default: a key unnamed
    forced = hollow["forced_order"]["models"]["b"]["coverage_w_order"]
    assert set(forced["missing_reason"]) == set(forced) - {"missing_reason", "median_pooled"}
    assert "`ordered_constrained` or in `original`" in forced["missing_reason"]["delta_vs_original"]
    assert "notebook 12" in forced["missing_reason"]["interval"]
    table4 = hollow["table4"]["models"]["a"]["coverage_w_order"]
    assert "small sample" in table4["delta_test"]["missing_reason"]["p_value"]
    assert table4["paper"]["missing_reason"]["value"] == "the paper gives none"


def test_every_key_of_the_blocks_is_documented_in_data_md(report):
    _, doc, _ = report
    docs = documented_keys()
    assert {"table4", "forced_order"} <= docs["top"]
    for key in ("table4", "forced_order"):
        block = doc[key]
        assert set(block) - {"missing_reason"} <= docs["comparison"]
        for metrics in block["models"].values():
            for m in metrics.values():
                assert set(m) - {"missing_reason", "paper"} <= docs["compared"], key
    assert docs["comparison"] - set(doc["table4"]) - {"missing_reason"} == set()
