"""Table-building functions on hand-made score tables; LaTeX structure; paper join; statistics."""

import math
import re

import numpy as np
import pandas as pd
import pytest

from ocg.analysis import difficulty, latex, paper, uncertainty
from ocg.analysis import paper_tables as tables
from ocg.analysis.paper import paper_table
from tests.helpers import hand_summary


def test_table1_averages_templates_and_takes_differences():
    t = tables.table1(hand_summary())
    v = t.set_index(["model", "metric"])
    assert v.loc[("m1", "coverage_wo_order"), "value"] == pytest.approx(60.0)  # (55 + 65) / 2
    assert v.loc[("m1", "coverage_wo_order"), "delta_vs_original_commongen"] == pytest.approx(5.0)
    assert v.loc[("m2", "coverage_w_order"), "value"] == pytest.approx(35.0)
    assert v.loc[("m1", "pbleu"), "delta_vs_original_commongen"] == pytest.approx(-5.0)
    assert np.isnan(v.loc[("m1", "pbleurt"), "value"])  # missing stays missing, never 0
    # Ordered Rate pooled over templates: (10 + 10) / (45 + 15), not the mean of 22.2 and 66.7
    assert v.loc[("m1", "ordered_rate"), "value"] == pytest.approx(100 * 20 / 60)
    assert v.loc[("m1", "ordered_rate"), "delta_vs_original_commongen"] == pytest.approx(
        100 * 20 / 60 - 100 * 20 / 50
    )
    assert len(t) == 2 * 8


def test_table4_is_one_shot_minus_zero_shot():
    s = hand_summary()
    shot = s[s.condition == "ordered"].assign(
        condition="ordered_one_shot", coverage_wo_order=lambda d: d.coverage_wo_order + 3
    )
    t = tables.table4(pd.concat([s, shot])).set_index(["model", "metric"])
    assert t.loc[("m2", "coverage_wo_order"), "delta_vs_zero_shot_ordered"] == pytest.approx(3.0)


def test_table3_mean_and_sd_over_models():
    t = tables.table3(hand_summary()).set_index(["template_id", "condition", "metric"])
    row = t.loc[(1, "with_phrase", "coverage_wo_order")]
    assert row.mean_over_llms == pytest.approx(70.0)  # m1: 0 + 50 + 10 + 5, m2: 10 + 50 + 10 + 5
    assert row.sd_over_llms == pytest.approx(np.std([65, 75], ddof=1))
    assert (
        list(t.index.get_level_values("condition")[:8])
        == ["without_phrase"] * 4 + ["with_phrase"] * 4
    )


def test_table2_diverse_rates_tie_within_noun_verb_classes():
    rng = np.random.default_rng(0)
    rows = []
    sets = {"a": "NNVV", "b": "NNNV", "c": "NVVV"}
    import itertools

    for model in ("m1", "m2"):
        for set_id, pos in sets.items():
            dr = rng.uniform(0.3, 1.0)  # one Diverse Rate per group...
            for p, perm in enumerate(itertools.permutations(pos)):
                rows.append(
                    {
                        "model": model,
                        "condition": "ordered",
                        "set_id": set_id,
                        "perm_index": p,
                        "pos_pattern": "".join(perm),
                        "all_present": rng.random() < 0.7,
                        "in_order": rng.random() < 0.3,
                        "diverse_rate": dr,
                    }
                )  # ...given to each permutation
    answers = pd.DataFrame(rows)
    answers["in_order"] &= answers["all_present"]
    t = tables.table2(answers)
    dr = t[t.metric == "diverse_rate"].set_index("pos_pattern")
    for _, g in dr.groupby(lambda p: p.count("N")):
        assert g.mean_over_llms.max() - g.mean_over_llms.min() < 1e-9
        assert g.sd_over_llms.max() - g.sd_over_llms.min() < 1e-9
    assert list(dr.index) == sorted(dr.index)


def test_table2_without_the_diverse_family_shows_the_column_missing_with_its_reason():
    answers = pd.DataFrame(
        {
            "model": ["m1", "m1", "m2", "m2"],
            "condition": "ordered",
            "pos_pattern": "NNVV",
            "all_present": [True, False, True, True],
            "in_order": [True, False, False, True],
        }
    )
    t = tables.table2(answers).set_index("metric")
    assert math.isnan(t.at["diverse_rate", "mean_over_llms"])
    assert "diverse" in t.at["diverse_rate", "missing_reason"]
    assert t.at["coverage_wo_order", "mean_over_llms"] == pytest.approx(75.0)  # m1 50, m2 100
    assert pd.isna(t.at["coverage_wo_order", "missing_reason"])
    tex = latex.latex_from_long(
        t.reset_index(), "pos_pattern", "mean_over_llms", "sd_over_llms", "sd", table="table2"
    )
    assert tex.splitlines()[4].endswith("& -- \\\\")  # the Diverse Rate cell, shown as missing
    assert tex.splitlines()[2].startswith("POS & ")  # a POS pattern's row key, as in Table 2


def test_table7_pairs_reasoning_with_base_on_template_0():
    s = hand_summary()
    t = tables.table7(s, {"m2": "m1"})
    assert list(t.drop_duplicates("model").role) == ["base", "reasoning"]
    v = t.set_index(["model", "metric"])
    assert v.loc[("m1", "coverage_wo_order"), "value"] == pytest.approx(55.0)  # template 0 only
    assert set(t.metric) == {"coverage_wo_order", "coverage_w_order", "ordered_rate"}


def test_paper_join_by_hub_id():
    pub = paper_table("table1")
    qwen = pub[pub.paper_id == "Qwen/Qwen2.5-7B-Instruct"].set_index("metric")
    ours = pd.DataFrame(
        {
            "model": "qwen2.5-7b",
            "metric": ["coverage_wo_order", "pbleu"],
            "value": [90.0, 20.0],
            "delta_vs_original_commongen": [1.0, 2.0],
        }
    )
    c = paper.compare(ours, "table1").set_index("metric")
    assert c.loc["coverage_wo_order", "paper_value"] == qwen.loc["coverage_wo_order", "value"]
    assert c.loc["pbleu", "paper_delta"] == qwen.loc["pbleu", "delta_vs_original_commongen"]
    assert c.loc["coverage_wo_order", "diff_vs_paper"] == pytest.approx(
        90.0 - qwen.loc["coverage_wo_order", "value"]
    )
    olmo = paper.compare(
        ours.assign(model="olmo2-7b"), "table1"
    )  # paper_id differs from the id we load
    assert olmo.paper_value.notna().all()
    unknown = paper.compare(ours.assign(model="smollm2-135m-instruct"), "table1")
    assert unknown.paper_value.isna().all() and len(unknown) == 2


def test_paper_join_tables_2_3_and_7():
    t2 = pd.DataFrame(
        {
            "pos_pattern": ["NNNN"],
            "metric": ["coverage_w_order"],
            "mean_over_llms": [50.0],
            "sd_over_llms": [1.0],
            "n_models": [2],
        }
    )
    assert paper.compare(t2, "table2").paper_value.iloc[0] == pytest.approx(40.92)
    t3 = pd.DataFrame(
        {
            "template_id": [0],
            "condition": ["with_phrase"],
            "metric": ["coverage_wo_order"],
            "mean_over_llms": [80.0],
            "sd_over_llms": [1.0],
            "n_models": [2],
        }
    )
    assert paper.compare(t3, "table3").paper_value.iloc[0] == pytest.approx(85.05)
    t7 = pd.DataFrame(
        {
            "model": ["marco-o1"],
            "role": ["reasoning"],
            "pair": ["marco-o1"],
            "metric": ["coverage_wo_order"],
            "value": [70.0],
            "delta_vs_original_commongen": [1.0],
        }
    )
    assert paper.compare(t7, "table7").paper_value.iloc[0] == pytest.approx(79.88)


def parse_tabular(tex: str) -> tuple[int, list[int]]:
    """(declared columns, cells per row) of a booktabs tabular; fails on unbalanced structure."""
    m = re.fullmatch(
        r"\\begin\{tabular\}\{([lcr]+)\}\n\\toprule\n(.*)\\bottomrule\n\\end\{tabular\}\n",
        tex,
        re.S,
    )
    assert m, tex
    body = m.group(2).replace("\\midrule\n", "")
    rows = [r for r in body.split("\\\\\n") if r.strip()]
    cells = [len(re.split(r"(?<!\\)&", r)) for r in rows]
    for r in rows:
        assert r.count("{") == r.count("}") and r.count("$") % 2 == 0, r
    return len(m.group(1)), cells


def test_latex_bold_best_and_underline_second_by_direction():
    values = pd.DataFrame(
        {"coverage_w_order": [30.0, 50.0, 40.0], "pbleu": [10.0, 30.0, 20.0]},
        index=pd.Index(["a_1", "b", "c"], name="model"),
    )
    deltas = values * 0 + 1.5
    tex = latex.latex_table(values, deltas)
    lines = {
        line.split(" & ")[0]: line
        for line in tex.splitlines()
        if " & " in line and "order" not in line
    }
    assert r"\textbf{50.00}_{+1.50}" in lines["b"] and r"\underline{40.00}" in lines["c"]
    assert (
        r"\textbf{10.00}" in lines[r"a\_1"] and r"\underline{20.00}" in lines["c"]
    )  # lower pBLEU is better
    n_cols, cells = parse_tabular(tex)
    assert n_cols == 3 and cells == [3, 3, 3, 3]  # header + 3 rows


def _cells(tex: str) -> list[list[str]]:
    """Each body row of a tabular, split into its cells."""
    return [line.removesuffix(" \\\\").split(" & ") for line in tex.splitlines()[4:-2]]


def test_latex_marks_table3_within_each_template_as_the_paper_does():
    """Table 3 bolds the better of w/o and w/ within each template, nothing else is marked."""
    long = pd.DataFrame(
        [
            {
                "template_id": t,
                "condition": c,
                "metric": "coverage_w_order",
                "mean_over_llms": v,
                "sd_over_llms": 1.0,
            }
            for t, c, v in [
                (0, "without_phrase", 20.0),
                (0, "with_phrase", 30.0),
                (1, "without_phrase", 50.0),
                (1, "with_phrase", 40.0),
            ]
        ]
    )
    rows = _cells(
        latex.latex_from_long(
            long,
            ["template_id", "condition"],
            "mean_over_llms",
            "sd_over_llms",
            "sd",
            table="table3",
        )
    )
    marked = [r[2].startswith("$\\textbf") for r in rows]
    assert marked == [
        False,
        True,
        True,
        False,
    ]  # 30 beats 20 in template 0; 50 beats 40 in template 1
    assert not any("underline" in r[2] for r in rows)


def test_latex_marks_table7_within_each_pair_and_table1_differences():
    long = pd.DataFrame(
        [
            {
                "pair": p,
                "role": role,
                "model": m,
                "metric": "ordered_rate",
                "value": v,
                "delta_vs_original_commongen": d,
            }
            for p, role, m, v, d in [
                ("r1", "base", "b1", 38.0, 7.0),
                ("r1", "reasoning", "r1", 41.0, 5.0),
                ("r2", "base", "b2", 49.0, 17.0),
                ("r2", "reasoning", "r2", 85.0, 70.0),
            ]
        ]
    )
    rows = _cells(
        latex.latex_from_long(
            long,
            ["pair", "role", "model"],
            "value",
            "delta_vs_original_commongen",
            "delta",
            table="table7",
        )
    )
    assert [r[3].startswith("$\\textbf") for r in rows] == [False, True, False, True]
    assert not any("underline" in r[3] for r in rows)  # no second place within a pair of two
    t1 = pd.DataFrame(
        [
            {"model": m, "metric": "pbleu", "value": v, "delta_vs_original_commongen": d}
            for m, v, d in [("a", 10.0, -11.0), ("b", 12.0, -3.0), ("c", 11.0, -9.0)]
        ]
    )
    rows = _cells(
        latex.latex_from_long(
            t1, "model", "value", "delta_vs_original_commongen", "delta", table="table1"
        )
    )
    # lower pBLEU is better: the largest fall is the best difference, as the paper marks them
    assert (
        rows[0][1] == "$\\textbf{10.00}_{\\textbf{-11.00}}$"
        and rows[2][1] == "$\\underline{11.00}_{\\underline{-9.00}}$"
    )


def test_latex_from_tables_has_one_row_per_key():
    s = hand_summary()
    tex = latex.latex_from_long(
        tables.table1(s), "model", "value", "delta_vs_original_commongen", "delta"
    )
    n_cols, cells = parse_tabular(tex)
    assert n_cols == 9 and cells == [9] * 3
    t3 = tables.table3(s)
    tex3 = latex.latex_from_long(
        t3, ["template_id", "condition"], "mean_over_llms", "sd_over_llms", "sd"
    )
    n_cols, cells = parse_tabular(tex3)
    assert n_cols == 6 and len(cells) == 1 + 4 and r"_{\pm " in tex3


def set_answers(n_sets, p_ordered, p_original, seed):
    rng = np.random.default_rng(seed)
    rows = []
    for cond, p in (("ordered", p_ordered), ("original", p_original)):
        for s in range(n_sets):
            for _ in range(24):
                ok = rng.random() < p
                rows.append(
                    {
                        "model": "m",
                        "condition": cond,
                        "set_id": f"s{s}",
                        "all_present": True,
                        "in_order": ok,
                        "distinct_2": 0.9,
                    }
                )
    answers = pd.DataFrame(rows)
    groups = answers.groupby(["model", "condition", "set_id"]).size().rename("n").reset_index()
    groups["diverse_rate"] = 0.8
    return answers, groups


def test_bootstrap_interval_and_paired_test():
    answers, groups = set_answers(40, 0.6, 0.3, 0)
    ci = uncertainty.bootstrap_ci(
        answers, groups, "m", resampling=uncertainty.Resampling(n_boot=500)
    ).set_index("metric")
    row = ci.loc["coverage_w_order"]
    assert row.ci_low < row.value < row.ci_high and row.ci_high - row.ci_low < 10
    assert row.value == pytest.approx(100 * answers[answers.condition == "ordered"].in_order.mean())
    strong = uncertainty.paired_test(answers, groups, "m", n_perm=2000).set_index("metric")
    assert strong.loc["coverage_w_order", "p_value"] < 0.01
    assert strong.loc["coverage_w_order", "difference"] == pytest.approx(30, abs=6)
    null_answers, null_groups = set_answers(40, 0.4, 0.4, 1)
    null = uncertainty.paired_test(null_answers, null_groups, "m", n_perm=2000).set_index("metric")
    assert null.loc["coverage_w_order", "p_value"] > 0.05


def test_a_model_without_the_condition_gets_no_interval_and_stops_nothing():
    """A reference row answers only `original`: its `ordered` interval is absent, not a crash."""
    answers, groups = set_answers(10, 0.6, 0.3, 0)
    reference = answers[answers.condition == "original"].assign(model="ref")
    both = pd.concat([answers, reference], ignore_index=True)
    assert uncertainty.bootstrap_ci(both, groups, "ref").empty
    assert not uncertainty.bootstrap_ci(both, groups, "m").empty


def test_concept_difficulty_counts():
    rows = []
    for model, composed in (("m1", {("a", 0), ("a", 1)}), ("m2", {("a", 0)})):
        for set_id in ("a", "b"):
            for p in range(2):
                for t in (0, 1):
                    rows.append(
                        {
                            "model": model,
                            "condition": "ordered",
                            "set_id": set_id,
                            "perm_index": p,
                            "template_id": t,
                            "concepts": ["x", "y"],
                            "pos_pattern": "NV",
                            "in_order": (set_id, p) in composed and t == 1,
                        }
                    )
    c = difficulty.composed_by(pd.DataFrame(rows)).set_index(["set_id", "perm_index"]).n_models
    assert c.to_dict() == {("a", 0): 2, ("a", 1): 1, ("b", 0): 0, ("b", 1): 0}
    comp = difficulty.composed_by(pd.DataFrame(rows))
    assert difficulty.figure3_data(comp, 2).n_lists.tolist() == [2, 1, 1]
    assert difficulty.set_summary(comp)["all_permutations_composed"] == 1
    assert difficulty.set_summary(comp)["no_permutation_composed"] == 1
    f4 = difficulty.figure4_data(comp, 2)
    assert f4.loc[2, 1] == 1 and f4.loc[0, 1] == 1 and f4.loc[1, 2] == 1


def test_compare_reports_finds_changed_numbers(tmp_path):
    from ocg.analysis.compare import compare_reports

    for name in ("a", "b"):
        (tmp_path / name / "tables").mkdir(parents=True)
    t = pd.DataFrame(
        {"model": ["m", "n"], "metric": ["pbleu", "pbleu"], "value": [1.5, float("nan")]}
    )
    t.to_csv(tmp_path / "a" / "tables" / "table1.csv", index=False)
    t.to_csv(tmp_path / "b" / "tables" / "table1.csv", index=False)
    assert compare_reports(tmp_path / "a", tmp_path / "b") == []
    t.assign(value=[1.5 + 1e-6, float("nan")]).to_csv(
        tmp_path / "b" / "tables" / "table1.csv", index=False
    )
    (tmp_path / "b" / "tables" / "table2.csv").write_text("x\n1\n")
    problems = compare_reports(tmp_path / "a", tmp_path / "b")
    assert (
        problems[0].endswith("table2.csv")
        and "column 'value' differs in 1 row(s), first row 0" in problems[1]
    )


def test_paper_join_names_a_model_its_models_file_lacks(tmp_path):
    from ocg.analysis import paper
    from ocg.core.errors import OcgInputError

    models_file = tmp_path / "models.yaml"
    models_file.write_text("models:\n  my-qwen: {id: Qwen/Qwen2.5-7B-Instruct}\n")
    ours = pd.DataFrame(
        {
            "model": ["my-qwen", "other"],
            "metric": ["pbleu", "pbleu"],
            "value": [1.0, 2.0],
            "delta_vs_original_commongen": [0.1, 0.2],
        }
    )
    with pytest.raises(OcgInputError, match=r"models.yaml: no entry for \['other'\]"):
        paper.compare(ours, "table1", models_file)
    joined = paper.compare(ours[ours.model == "my-qwen"], "table1", models_file)
    assert joined.paper_value.notna().all()  # found through the sweep's own models file


def test_case_browser_is_built_model_by_model_and_shows_api_prompts_as_text(tmp_path):
    """At paper size all answers would not fit in memory: the browser reads one model at a
    time; a prompt stored as API messages is shown as text, not as '[object Object]'."""
    import json

    from ocg.generation import GenerationStore
    from ocg.scoring import score_model
    from ocg.site.browser import read_index, write_case_browser_from
    from ocg.site.chunks import read_chunk
    from tests.helpers import write_generations

    rows = [
        {
            "set_id": "s1",
            "template_id": 0,
            "perm_index": p,
            "concepts": ["dog", "catch", "frisbee", "throw"],
            "pos_pattern": "NVNV",
            "answer": f"The dog caught the frisbee I threw {p} times.",
        }
        for p in range(3)
    ]
    for model in ("a", "b"):
        model_dir = write_generations(tmp_path / "gen", model, rows)
        path = model_dir / "ordered.jsonl"
        records = list(GenerationStore.read(path))
        path.write_text(
            "".join(
                json.dumps(
                    {
                        **r,
                        "prompt": [
                            {"role": "system", "content": "Be brief."},
                            {"role": "user", "content": f"Concepts for {model}"},
                        ],
                    }
                )
                + "\n"
                for r in records
            )
        )
        score_model(model_dir, metrics=["coverage"], out_dir=tmp_path / "scores", progress=False)
    page = write_case_browser_from(
        tmp_path / "site", ["a", "b", "not-scored"], tmp_path / "scores", tmp_path / "gen"
    )
    index = read_index(page)
    assert [(e["model"], e["n"]) for e in index] == [("a", 3), ("b", 3)]
    payload = read_chunk(tmp_path / "site" / index[1]["file"])
    prompt = payload["rows"][0][payload["fields"].index("prompt")]
    assert prompt == "[system]\nBe brief.\n\n[user]\nConcepts for b"
    assert payload["rows"][0][payload["fields"].index("all_present")] is True


def test_case_browser_highlights_the_positions_the_order_verdict_used(tmp_path):
    """An answer judged in order through a concept's second mention is highlighted there, so its
    highlights read in order ([4, 8, 9, 13]), not at first occurrences ([4, 1, 9, 13])."""

    from ocg.scoring import score_model
    from ocg.site.browser import read_index, write_case_browser_from
    from ocg.site.chunks import read_chunk
    from tests.helpers import write_generations

    rows = [
        {
            "set_id": "s1",
            "template_id": 0,
            "perm_index": 0,
            "concepts": ["frisbee", "dog", "catch", "throw"],
            "pos_pattern": "NNVV",
            "answer": "A dog saw the frisbee, and the dog caught it after I threw it.",
        }
    ]
    score_model(
        write_generations(tmp_path / "gen", "a", rows),
        metrics=["coverage"],
        out_dir=tmp_path / "scores",
        progress=False,
    )
    page = write_case_browser_from(tmp_path / "site", ["a"], tmp_path / "scores", tmp_path / "gen")
    index = read_index(page)
    payload = read_chunk(tmp_path / "site" / index[0]["file"])
    row = dict(zip(payload["fields"], payload["rows"][0]))
    assert row["in_order"] is True
    assert row["match_positions"] == [4, 8, 9, 13]


def test_intervals_and_p_values_on_few_concept_sets_are_marked():
    from ocg.analysis.uncertainty import MIN_SETS, Resampling, bootstrap_ci, paired_test

    rows = []
    for n_sets in (2, MIN_SETS):
        for s in range(n_sets):
            for cond in ("ordered", "original"):
                for p in range(4):
                    rows.append(
                        {
                            "model": f"m{n_sets}",
                            "condition": cond,
                            "template_id": 0,
                            "set_id": f"s{s}",
                            "all_present": (s + p) % 3 > 0,
                            "in_order": (s + p + (cond == "ordered")) % 3 > 1,
                        }
                    )
    answers = pd.DataFrame(rows)
    groups = pd.DataFrame(columns=["model", "condition", "template_id", "set_id"])
    for n_sets, small in ((2, True), (MIN_SETS, False)):
        ci = bootstrap_ci(answers, groups, f"m{n_sets}", resampling=Resampling(n_boot=50))
        test = paired_test(answers, groups, f"m{n_sets}", Resampling(n_boot=50), n_perm=200)
        assert set(ci["n_sets"]) == set(test["n_sets"]) == {n_sets}
        assert set(ci["small_sample"]) == set(test["small_sample"]) == {small}


@pytest.mark.parametrize("table", [tables.table1, tables.table4])
@pytest.mark.parametrize("asked", [[0, 1, 2], [2, 3], [0, "1"]])
def test_templates_the_run_lacks_are_refused_naming_those_it_has(table, asked):
    s = hand_summary()  # templates 0 and 1
    s = pd.concat([s, s[s.condition == "ordered"].assign(condition="ordered_one_shot")])
    from ocg.core.errors import OcgInputError  # a ValueError, as every bad input

    with pytest.raises(
        OcgInputError, match=r"not in this run's `ordered\w*` answers; it has templates \[0, 1\]"
    ):
        table(s, template_ids=asked)
    assert set(table(s, template_ids=[1]).model) == {"m1", "m2"}  # a template it has still works


def test_a_template_one_model_lacks_is_refused_naming_that_model():
    s = hand_summary()  # m1 and m2, templates 0 and 1
    s = s[~((s.model == "m2") & (s.template_id == 1))]  # m2 was run on template 0 only
    from ocg.core.errors import OcgInputError

    with pytest.raises(
        OcgInputError,
        match=r"template\(s\) \[1\] not in this run's `ordered` answers; "
        r"it has templates \[0\] for model 'm2'",
    ):
        tables.table1(s, template_ids=[0, 1])  # m2's row would average template 0 alone
    asked = iter([0])  # an iterator is read once, not used up by the check
    assert set(tables.table1(s, template_ids=asked).model) == {"m1", "m2"}


def two_sets_three_templates(samples=1):
    """2 concept sets alike in total, differing by template: a concept-set bootstrap is degenerate
    (the demo's 9.72-9.72), a cluster or prompt bootstrap is not."""
    rows = []
    for cond in ("ordered", "original"):
        for s in ("a", "b"):
            for t in (0, 1, 2):
                for p in range(24):
                    for k in range(samples):
                        rows.append(
                            {
                                "model": "m",
                                "condition": cond,
                                "set_id": s,
                                "template_id": t,
                                "perm_index": p,
                                "sample": k,
                                "all_present": True,
                                "distinct_2": 0.9,
                                "in_order": (p + k) < 4 * (t + 1) + 4 * (cond == "ordered"),
                            }
                        )
    answers = pd.DataFrame(rows)
    groups = (
        answers.groupby(["model", "condition", "set_id", "template_id"])
        .size()
        .rename("n")
        .reset_index()
    )
    groups["diverse_rate"] = groups["template_id"] / 4
    return answers, groups


def test_the_bootstrap_resamples_the_unit_asked_and_says_which_and_how_many():
    answers, groups = two_sets_three_templates()
    by = {
        u: uncertainty.bootstrap_ci(
            answers, groups, "m", resampling=uncertainty.Resampling(u, 300, 7)
        ).set_index("metric")
        for u in ("sets", "clusters", "prompts")
    }
    w = {u: ci.loc["coverage_w_order"] for u, ci in by.items()}
    assert w["sets"].ci_low == w["sets"].ci_high  # both sets alike: no spread across sets
    assert w["clusters"].ci_low < w["sets"].value < w["clusters"].ci_high
    assert w["prompts"].ci_low < w["sets"].value < w["prompts"].ci_high
    assert len({w[u].value for u in w}) == 1  # the point value does not depend on the unit
    assert [(w[u].unit, w[u].n, w[u].n_sets) for u in w] == [
        ("sets", 2, 2),
        ("clusters", 6, 2),
        ("prompts", 144, 2),
    ]
    diverse = by["prompts"].loc["diverse_rate"]  # a group metric has no value per prompt
    assert (diverse.unit, diverse.n) == ("clusters", 6)
    assert by["sets"].small_sample.all() and by["clusters"].small_sample.all()
    assert not by["prompts"].loc["coverage_w_order"].small_sample
    paired = uncertainty.paired_test(
        answers, groups, "m", uncertainty.Resampling("clusters", n_boot=200), n_perm=500
    ).set_index("metric")
    assert (paired.loc["coverage_w_order", "unit"], paired.loc["coverage_w_order", "n"]) == (
        "clusters",
        6,
    )
    assert paired.loc["coverage_w_order", "ci_low"] < paired.loc["coverage_w_order", "ci_high"]
    text = uncertainty.interval_text(w["clusters"].ci_low, w["clusters"].ci_high, "clusters", 6)
    assert text.endswith("(95%, 6 (set, template) clusters)")
    from ocg.core.errors import OcgInputError

    with pytest.raises(
        OcgInputError,
        match=r"unit: unknown bootstrap unit 'answers'; expected one of \['sets', 'clusters', 'prompts'\]",
    ):
        uncertainty.bootstrap_ci(answers, groups, "m", resampling=uncertainty.Resampling("answers"))


def test_a_prompt_is_resampled_with_all_its_samples():
    answers, groups = two_sets_three_templates(samples=3)
    ci = uncertainty.bootstrap_ci(
        answers, groups, "m", resampling=uncertainty.Resampling("prompts", 50)
    ).set_index("metric")
    assert ci.loc["coverage_w_order", "n"] == 144  # prompts, not their 432 answers


def test_case_browser_chunks_are_gzipped_and_read_back_whole(tmp_path):
    """Each chunk holds its rows as gzip'd JSON in base64 (the page inflates it; Chromium checks in
    tests/site/test_case_browser.py): rows that repeat a prompt's template take a fraction of their JSON."""
    import json

    from ocg.site.browser import BASE_FIELDS, FIELDS, write_chunks
    from ocg.site.chunks import read_chunk

    template = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nWrite one sentence using: "
    answers = pd.DataFrame(
        [
            {
                "instance_id": f"ordered-t0-s{s}-p{p}",
                "model": "m",
                "condition": "ordered",
                "template_id": 0,
                "set_id": f"s{s}",
                "perm_index": p,
                "concepts": ["dog", "ball", f"w{s}"],
                "pos_pattern": "NNN",
                "answer": f"The dog threw the ball to w{s} ({p}).",
                "answer_status": "ok",
            }
            for s in range(40)
            for p in range(24)
        ]
    )
    generations = pd.DataFrame(
        {
            "instance_id": answers.instance_id,
            "raw": answers.answer,
            "prompt": [template + ", ".join(c) + "<|im_end|>\n" for c in answers.concepts],
        }
    )
    index = write_chunks(tmp_path, answers, {"m": generations})
    path = tmp_path / index[0]["file"]
    payload = read_chunk(path)
    # answers without quality or judge columns: neither scored nor asked
    assert payload["fields"] == BASE_FIELDS and len(payload["rows"]) == 960
    assert payload["rows"][5][FIELDS.index("prompt")] == generations.prompt[5]
    assert path.stat().st_size < len(json.dumps(payload, ensure_ascii=False)) / 5


def test_latex_bolds_nothing_where_every_row_ties():
    # the audit: table1.tex bolded ties at 0.00 (PoS-correct coverage no model reached)
    import re

    from ocg.analysis import latex

    values = pd.DataFrame(
        {"coverage_w_order": [0.0, 0.001, 0.0], "ordered_rate": [50.0, 40.0, 40.0]},
        index=pd.Index(["a", "b", "c"], name="model"),
    )
    tex = latex.latex_table(values)
    rows = [line.split(" & ") for line in tex.splitlines() if re.match(r"^[abc] &", line)]
    assert not any(r"\textbf" in r[1] or r"\underline" in r[1] for r in rows)  # all 0.00
    assert r"\textbf{50.00}" in rows[0][2] and rows[1][2].count(r"\underline") == 1
