"""The analysis notebooks but 11 (tests/analysis/test_samples_notebook.py runs it on a sampled run) execute
under papermill on a small scored fixture, with the parameters the run plan gives them (as a
sweep with its own models file would), and write their tables."""

import json
import re

import nbformat
import pandas as pd
import pytest

from ocg.analysis import paper_tables as tables
from ocg.jobs.notebook_runner import run_notebook
from ocg.jobs.pipeline import StepFailed, run_step
from ocg.jobs.plan import Dirs, notebook_params
from ocg.metrics.matching import MATCHING_RULES, ORDER_READINGS
from ocg.results.scores import load_scores
from tests.analysis.notebooks import MODELS, output_text
from tests.helpers import checked_run

pytestmark = pytest.mark.slow


def run(nb, scored, **extra):
    out = scored / "reports"
    cfg = checked_run(
        MODELS,
        ["ordered"],
        models_file=str(scored / "models.yaml"),
        table7_pairs=extra.pop("pairs", None),
        table7_note=extra.pop("pairs_note", ""),
    )
    params = notebook_params(nb, cfg, Dirs(scored / "gen", scored / "scores", out), MODELS)
    run_notebook(nb, {**params, **extra}, out_dir=out)
    return out


def test_03_main_results(scored):
    out = run("03_main_results", scored, n_boot=200, seed=7)
    t1 = pd.read_csv(out / "tables" / "table1.csv")
    assert set(t1.model) == set(MODELS)
    assert (
        len(t1) == 2 * 9
    )  # nine metrics scored here (coverage's five with PoS, pBLEU, distinct, Diverse, non-words)
    assert {
        "value",
        "delta_vs_original_commongen",
        "paper_value",
        "paper_delta",
        "diff_vs_paper",
    } <= set(t1)
    papers = t1.metric.isin(
        [
            "coverage_wo_order",
            "coverage_w_order",
            "ordered_rate",
            "pbleu",
            "distinct_2",
            "diverse_rate",
        ]
    )  # the paper reports no PoS-correct coverage or non-words
    assert (
        t1[(t1.model == "my-qwen") & papers].paper_value.notna().all()
        and t1[~papers].paper_value.isna().all()
    )
    assert t1[t1.model == "smollm2-135m-instruct"].paper_value.isna().all()
    assert (out / "tables" / "table1.tex").read_text().count(r"\\") == 1 + 2
    ci = pd.read_csv(out / "tables" / "table1_bootstrap_ci.csv")
    assert len(ci) == 2 * 9 and (ci.ci_low <= ci.value).all() and (ci.value <= ci.ci_high).all()
    paired = pd.read_csv(out / "tables" / "table1_paired_test.csv")
    assert len(paired) == 2 * 9 and paired.p_value.between(0, 1).all()
    assert (
        (ci.n_sets == 2).all() and ci.small_sample.all() and paired.small_sample.all()
    )  # 2 concept sets
    prov = json.loads((out / "tables" / "table1.provenance.json").read_text())
    assert prov["git"]["commit"] and set(prov["scored_models"]) == set(MODELS)
    assert prov["scored_models"]["my-qwen"]["pbleu"]["sacrebleu"].startswith("nrefs:1")
    shown = output_text(out / "03_main_results.ipynb")
    assert "diff_vs_paper" not in shown and ">diff<" in shown and "my-qwen" in shown  # side by side
    sens = pd.read_csv(out / "tables" / "table1_sensitivity.csv")  # every rule x reading, per model
    rules = (
        sens[sens.metric == "coverage_w_order"]
        .groupby("model")[["choice", "variant"]]
        .apply(lambda g: len(g.drop_duplicates()))
    )
    # every rule x reading, PoS-correct coverage, and the list copies excluded on both sides,
    # paired on the prompts where neither answer copies, or counted as failures
    assert rules.to_dict() == {m: len(MATCHING_RULES) * len(ORDER_READINGS) + 4 for m in MODELS}
    assert {"median", "median_delta", "mean_median_disagree"} <= set(t1)
    assert set(paired.holm_family) == {"paper", "extra"}  # PoS-correct coverage, non-words: extra
    assert (
        set(paired.p_method) == {"exact: all 4 sign vectors"}
        and (paired.p_holm >= paired.p_value).all()
    )
    assert "Largest shifts" in shown
    assert "Small samples:" in shown and "rest on 2 concept sets, under 20" in shown
    assert (
        (ci.unit == "sets").all() and (ci.n == 2).all() and "(95%, 2 concept sets)" in shown
    )  # beside each interval
    for name in (
        "table1_bootstrap_ci",
        "table1_paired_test",
    ):  # the settings that made the intervals
        settings = json.loads((out / "tables" / f"{name}.provenance.json").read_text())["bootstrap"]
        assert (settings["n_boot"], settings["seed"], settings["unit"]) == (200, 7, "sets")


def test_03_resamples_the_unit_asked(scored):
    out = run("03_main_results", scored, n_boot=50, bootstrap_unit="clusters", compare_paper=False)
    ci = pd.read_csv(out / "tables" / "table1_bootstrap_ci.csv")
    assert (ci.unit == "clusters").all() and (ci.n == 2 * 6).all() and (ci.n_sets == 2).all()
    assert "rest on 12 (set, template) clusters, under 20" in output_text(
        out / "03_main_results.ipynb"
    )
    settings = json.loads((out / "tables" / "table1_bootstrap_ci.provenance.json").read_text())[
        "bootstrap"
    ]
    assert (settings["n_boot"], settings["seed"], settings["unit"]) == (50, 0, "clusters")


def test_04_pos_patterns(scored):
    out = run("04_pos_patterns", scored)
    t2 = pd.read_csv(out / "tables" / "table2.csv")
    assert t2.pos_pattern.nunique() == 6 + 4 and len(t2) == 10 * 4
    assert t2.n_models.eq(2).all() and t2.paper_value.notna().all()


def test_05_templates(scored):
    out = run("05_templates", scored)
    t3 = pd.read_csv(out / "tables" / "table3.csv")
    assert len(t3) == 6 * 2 * 4 and set(t3.condition) == {"without_phrase", "with_phrase"}
    assert t3.paper_value.notna().all()


def test_06_priming(scored):
    out = run("06_priming", scored)
    t4 = pd.read_csv(out / "tables" / "table4.csv")
    assert len(t4) == 2 * 7 and "delta_vs_zero_shot_ordered" in t4  # the paper's six and non-words
    paired = pd.read_csv(out / "tables" / "table4_paired_test.csv")  # as Table 1's (notebook 03)
    assert set(paired.condition) == {"ordered_one_shot"} and set(paired.base) == {"ordered"}
    assert len(paired) == 2 * 7 and paired.small_sample.all() and paired.p_value.between(0, 1).all()
    ci = pd.read_csv(out / "tables" / "table4_bootstrap_ci.csv")
    assert (ci.condition == "ordered_one_shot").all() and len(ci) == 2 * 7
    assert "Small samples:" in output_text(out / "06_priming.ipynb")
    papers = t4.metric != "nonword_rate"  # the paper reports no non-words
    assert (
        t4[(t4.model == "my-qwen") & papers].paper_value.notna().all()
        and t4[~papers].paper_value.isna().all()
    )


def test_07_reasoning_models(scored):
    out = run(
        "07_reasoning_models",
        scored,
        pairs={"my-qwen": "smollm2-135m-instruct"},
        pairs_note="test pairing",
    )
    t7 = pd.read_csv(out / "tables" / "table7.csv")
    assert len(t7) == 2 * 3 and list(t7.drop_duplicates("model").role) == ["base", "reasoning"]
    shown = output_text(out / "07_reasoning_models.ipynb")
    assert "**Note:** test pairing" in shown and "raw" in shown  # the note and the answer sources


def test_08_concept_difficulty(scored):
    out = run("08_concept_difficulty", scored)
    for ext in ("png", "pdf"):
        assert (out / "figures" / f"figure3.{ext}").stat().st_size > 5000
        assert (out / "figures" / f"figure4.{ext}").stat().st_size > 5000
    f3 = pd.read_csv(out / "tables" / "figure3_data.csv")
    assert f3.n_lists.sum() == 2 * 24 and f3.cumulative_percent.iloc[-1] == pytest.approx(100)
    f4 = pd.read_csv(out / "tables" / "figure4_data.csv")
    assert list(f4.columns) == ["permutations_composed", "1", "2"] and f4["1"].sum() == 2
    nb = nbformat.read(out / "08_concept_difficulty.ipynb", as_version=4)
    images = [o for c in nb.cells for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
    assert len(images) == 2  # Figures 3 and 4 themselves, not a figure's repr
    reprs = [
        o
        for c in nb.cells
        for o in c.get("outputs", [])
        if "<Figure size" in str(o.get("data", {}).get("text/plain", "")) + o.get("text", "")
    ]
    assert all("image/png" in o.get("data", {}) for o in reprs)  # a repr only beside its image
    html = (out / "08_concept_difficulty.html").read_text()
    assert (
        len(re.findall(r'<img [^>]*src="data:image/png;base64', html)) == 2
    )  # inline, in the HTML


def test_09_cases(scored):
    out = run("09_cases", scored)
    shown = output_text(out / "09_cases.ipynb")
    assert "The dog runs." in shown and "written_order" in shown and "n_permutations" in shown


def test_10_positions(scored):
    out = run("10_positions", scored)
    shown = output_text(out / "10_positions.ipynb")
    assert "conditions: original, ordered, ordered_one_shot" in shown
    assert (
        "in place if complete" in shown and "1–2" in shown and "3–4" in shown
    )  # both tables shown
    by_place = pd.read_csv(out / "tables" / "positions_by_place.csv")
    # 2 models x 3 conditions x 4 places, each over 2 sets x 6 templates x 24 permutations
    assert len(by_place) == 2 * 3 * 4 and by_place.n_answers.eq(2 * 6 * 24).all()
    assert (
        by_place.present_pct.between(0, 100).all()
        and (by_place.in_place_pct <= by_place.present_pct).all()
    )
    pairs = pd.read_csv(out / "tables" / "positions_out_of_order.csv")
    assert len(pairs) == 2 * 3 * 6 and (pairs.n_out_of_order <= pairs.n_both).all()
    summary = pd.read_csv(out / "tables" / "preferred_order_summary.csv")
    assert (
        len(summary) == 2 * 3
        and summary.permutations.eq(24).all()
        and summary.baseline_pct.eq(100 / 24).all()
    )
    assert summary[summary.condition == "original"].preferred_pct_vs_original.eq(0).all()
    prefs = pd.read_csv(out / "tables" / "preferred_orders.csv")
    assert (
        len(prefs) == 2 * 3 * 6 * 2
        and prefs.n_answers.eq(24).all()
        and (prefs.n_preferred <= prefs.n_complete).all()
    )
    strongest = prefs[prefs.condition == "ordered"].groupby("model").n_preferred.max()
    assert (
        all(f"{k} of 24" in shown for k in strongest) and "most_common_answer" in shown
    )  # the examples
    assert set(pd.read_csv(out / "tables" / "first_concept_pos.csv").first_pos) == {"N", "V"}
    patterns = pd.read_csv(out / "tables" / "pos_pattern_places.csv")
    assert patterns.pos_pattern.nunique() == 6 + 4 and {
        "table2_coverage_w_order",
        "in_place_4_pct",
    } <= set(patterns)
    t2 = tables.table2(
        load_scores(scored / "scores", MODELS).answers, "ordered"
    )  # beside Table 2, unchanged
    w = t2[t2.metric == "coverage_w_order"].set_index("pos_pattern").mean_over_llms
    assert patterns.set_index("pos_pattern").table2_coverage_w_order.to_dict() == pytest.approx(
        w.to_dict()
    )


def test_failing_notebook_names_cell_and_keeps_partial_copy(scored, tmp_path):
    with pytest.raises(StepFailed) as info:
        run_step(
            "03_main_results", {"scores_dir": str(tmp_path / "empty")}, tmp_path, "03_main_results"
        )
    message = str(info.value)
    assert "notebook 03_main_results failed in cell" in message and "OcgInputError" in message
    assert "no scored models" in message
    partial = tmp_path / "03_main_results.ipynb"
    assert partial.exists() and "no scored models" in partial.read_text()
    assert (tmp_path / "03_main_results.html").exists()
