"""Reference entries beside, not inside, the means over models: load_scores names them from their
run cards, and Tables 2 and 3 on `without_references` are the run's model's values alone."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from ocg.analysis import paper_tables
from ocg.analysis.references import left_out, without_references
from ocg.records import RunCard
from ocg.results.scores import load_scores

ANSWERS = {  # the reference writes every concept in order; the model does not
    "m": ["A boy rides.", "The street is wide.", "A boy on a bike."],
    "ref-x": ["A boy rides a bike down the street."],
}


def _rows(model, _condition):
    return [
        {
            "set_id": s,
            "template_id": t,
            "perm_index": p,
            "concepts": ["boy", "ride", "bike", "street"],
            "pos_pattern": "NVNN",
            "answer": ANSWERS[model][(p + t) % len(ANSWERS[model])],
        }
        for s in ("s1", "s2")
        for t in (0, 1)
        for p in range(6)
    ]


@pytest.fixture(scope="module")
def root(scored_run):
    built = scored_run(
        "references-over-models",
        _rows,
        ["coverage"],
        models=("m", "ref-x"),
        conditions=("original", "ordered"),
    )
    RunCard(model="ref-x", settings={"reference": "CommonGen-Eval: X"}).write(
        built / "gen" / "ref-x" / "run_card.json"
    )
    RunCard(model="m", settings={"id": "m"}).write(built / "gen" / "m" / "run_card.json")
    return built


def test_load_scores_names_the_reference(root):
    scores = load_scores(root / "scores")
    assert scores.references == {"ref-x": "CommonGen-Eval: X"}
    assert set(without_references(scores.summary, scores)["model"]) == {"m"}
    assert left_out(scores) == (
        "the reference entry is left out of the mean over models: docs/METHODS.md, Reference rows"
    )


def test_an_unreadable_card_is_no_reference(root, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    (copy / "gen" / "ref-x" / "run_card.json").write_text("{not json")
    # the signature names the folder scored: point it at the copy's generations
    for model in ("m", "ref-x"):
        sig = copy / "scores" / model / "signature.json"
        sig.write_text(sig.read_text().replace(str(root / "gen"), str(copy / "gen")))
    scores = load_scores(copy / "scores")
    assert scores.references == {}
    assert left_out(scores) == ""
    assert without_references(scores.summary, scores).equals(scores.summary)


def test_table3_is_the_models_values_alone(root):
    scores = load_scores(root / "scores")
    summary = scores.summary
    t = paper_tables.table3(without_references(summary, scores))
    t = t[t["mean_over_llms"].notna()]  # the metrics scored (coverage)
    assert set(t["n_models"]) == {1}
    own = summary[summary["model"] == "m"].copy()
    own["condition"] = own["condition"].map(
        {"original": "without_phrase", "ordered": "with_phrase"}
    )
    checked = 0
    for r in t.itertuples():
        value = own.loc[
            (own["template_id"] == r.template_id) & (own["condition"] == r.condition), r.metric
        ]
        assert len(value) == 1 and np.isclose(r.mean_over_llms, value.iloc[0])
        checked += 1
    assert checked >= 4
    both = paper_tables.table3(summary)  # with the reference the mean moves: it was in it
    both = both[both["mean_over_llms"].notna()]
    assert 2 in set(both["n_models"])
    merged = both.merge(t, on=["template_id", "condition", "metric"])
    assert (merged["mean_over_llms_x"] != merged["mean_over_llms_y"]).any()


def test_table2_is_the_models_values_alone(root):
    scores = load_scores(root / "scores")
    answers = scores.answers
    t = paper_tables.table2(without_references(answers, scores), "ordered").set_index("metric")
    ordered = answers[(answers["model"] == "m") & (answers["condition"] == "ordered")]
    assert t.loc["coverage_wo_order", "n_models"] == 1
    assert np.isclose(
        t.loc["coverage_wo_order", "mean_over_llms"], 100 * ordered["all_present"].mean()
    )
    assert np.isclose(t.loc["coverage_w_order", "mean_over_llms"], 100 * ordered["in_order"].mean())
    both = paper_tables.table2(answers, "ordered").set_index("metric")
    assert both.loc["coverage_wo_order", "n_models"] == 2
    assert not np.isclose(
        both.loc["coverage_wo_order", "mean_over_llms"],
        t.loc["coverage_wo_order", "mean_over_llms"],
    )


def test_the_page_says_so_under_tables_2_and_3(root, tmp_path):
    from ocg.analysis.report import save_table
    from ocg.site import explain
    from ocg.site.render import fragment

    scores = load_scores(root / "scores")
    save_table(paper_tables.table2(without_references(scores.answers, scores)), "table2", tmp_path)
    save_table(paper_tables.table3(without_references(scores.summary, scores)), "table3", tmp_path)
    line = left_out(scores)
    tables = explain.other_tables(tmp_path, left_out=line)
    assert [t.left_out for t in tables] == [line, line]
    page = fragment("sections.html", "other_tables", tables)
    assert page.count("the reference entry is left out of the mean over models") == 2
    plain = fragment("sections.html", "other_tables", explain.other_tables(tmp_path))
    assert "left out of the mean over models" not in plain


def test_no_notebook_counts_models_with_the_reference_entries():
    # the audit: notebook 11 took summary.model.nunique() and composed_by(answers) over every
    # entry, so its Figure 4 ran k = 1..13 with 12 reference entries among 1 model
    import json
    import re
    from pathlib import Path

    counting = re.compile(r"model\.nunique\(\)|composed_by\(")
    found = []
    for path in sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] != "code":
                continue
            for line in "".join(cell["source"]).splitlines():
                if counting.search(line) and "without_references" not in line:
                    found.append(f"{path.name}: {line.strip()}")
    assert found == []
