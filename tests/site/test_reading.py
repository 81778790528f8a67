"""Reading the pages and notebook 12: a wide table's key column stays in place,
notebook 12's tables have headers in words, "–" for a missing value and rows keyed by model, the
small-sample mark is said once per table, one unit is singular, and the README says where replay
entries come from."""

import re

import pandas as pd
import pytest

from ocg.analysis import forcing
from ocg.analysis.uncertainty import interval_text, units
from ocg.core.paths import PROJECT_ROOT
from ocg.site import caveats
from ocg.site.render import fragment, frame, static_text


def test_a_wide_tables_key_column_stays_in_place():
    assert re.search(
        r"\.scroll tr>:first-child\{position:sticky;left:0;[^}]*background:#fff",
        static_text("landing.css"),
    )
    t = pd.DataFrame(
        {
            "model": ["a", "a", "b", "b"],
            "condition": ["ordered", "forced"] * 2,
            **{f"m{i}": [1.0, 2.0, 3.0, 4.0] for i in range(20)},
        }
    ).set_index(["model", "condition"])
    body = frame(t).split("<tbody>")[1]
    firsts = re.findall(r"<tr>\s*<th>([^<]*)</th>", body)
    assert (
        firsts == ["a", "a", "b", "b"] and "rowspan" not in body
    )  # every row's first cell is its model


def test_one_unit_is_singular():
    assert units(1, "sets") == "1 concept set" and units(2, "sets") == "2 concept sets"
    assert units(1, "clusters") == "1 (set, template) cluster" and units(1, "prompts") == "1 prompt"
    assert interval_text(1.0, 2.0, "sets", 1).endswith("(95%, 1 concept set)")


def _basis(tmp_path, n_by_model: dict) -> str:
    rows = [
        {
            "model": m,
            "metric": metric,
            "n_sets": n,
            "unit": "sets",
            "n": n,
            "small_sample": n < 20,
            "ci_low": 40.0,
            "ci_high": 60.0,
        }
        for m, n in n_by_model.items()
        for metric in ("coverage_w_order", "coverage_wo_order", "ordered_rate")
    ]
    (tmp_path / "tables").mkdir(exist_ok=True)
    pd.DataFrame(rows).to_csv(tmp_path / "tables" / "table1_bootstrap_ci.csv", index=False)
    summary = pd.DataFrame({"model": list(n_by_model), "condition": "ordered", "n_answers": 48})
    return fragment("notes.html", "table1_basis", caveats.table1_basis(tmp_path, summary))


def test_small_sample_is_said_once_per_table(tmp_path):
    every = _basis(tmp_path, {"a": 2, "b": 2})
    assert every.count("small sample") == 1 and "2 concept sets &lt; 20" in every
    assert (
        "no bootstrap interval for any metric" in every and "<td>–</td>" not in every
    )  # no column of marks
    some = _basis(tmp_path, {"a": 2, "b": 25})
    assert some.count("2 concept sets &lt; 20") == 1 and some.count("<td>small sample</td>") == 3
    assert "[40.00, 60.00] (95%, 25 concept sets)" in some


def test_notebook_12_tables_read_as_words(tmp_path):
    answers = pd.DataFrame(
        {
            "model": ["a"] * 4,
            "condition": ["ordered", "ordered", "ordered_constrained", "ordered_constrained"],
            "instance_id": ["i1", "i2", "i3", "i4"],
            "concepts": [["x"]] * 4,
            "pos_pattern": "N",
            "answer": ["x y", "y", "x", "x"],
            "in_order": [False, False, True, False],
            "truncated": False,
            "copies_list": False,
        }
    )
    html = forcing.shown(forcing.outcomes(answers)).to_html()
    assert (
        "nan" not in html.lower() and "–" in html
    )  # no in-order answer: its list-copy share is missing
    assert re.search(r"<th[^>]*>model</th>\s*<th[^>]*>condition</th>", html)
    assert (
        ">0<" not in html.split("<tbody>")[1].split("</th>")[0]
    )  # keyed by model, not a row number
    odd = forcing.shown(forcing.unexplained(answers)).to_html()
    assert "instance id" in odd and "instance_id" not in odd and "pos pattern" in odd
    assert re.search(r'class="row_heading level0 row0" >a</th>', odd)  # rows keyed by model
    long = pd.DataFrame(
        {
            "model": "a",
            "metric": ["coverage_w_order", "pbleurt"],
            "value": [50.0, None],
            "delta_vs_ordered": [1.0, None],
            "delta_vs_original": [2.0, None],
        }
    )
    wide = forcing.shown(forcing.forced_wide(long)).to_html()
    assert "coverage_w_order" not in wide and "delta_vs" not in wide and "nan" not in wide.lower()


def test_the_docs_say_where_replay_entries_come_from():
    from ocg.config.model_registry import load_models

    assert not [s for s in load_models().values() if s.backend == "replay"]
    readme = " ".join((PROJECT_ROOT / "docs" / "gpus.md").read_text().split())  # the costs guide
    assert "`backend: replay` in `params/models.yaml`)" not in readme
    assert "`backend: replay` entries it writes into its own models file" in readme


@pytest.mark.slow
def test_notebook_12_runs_and_its_page_reads_as_words(scored_run, tmp_path):
    from ocg.jobs.notebook_runner import run_notebook
    from tests.helpers import two_models_rows

    answers = ["Boy ride bike street.", "The boy rides a bike down the street.", "The boy rode."]
    root = scored_run(
        "forcing12",
        two_models_rows(answers),
        ["coverage"],
        models=("a",),
        conditions=("original", "ordered", "ordered_constrained"),
    )
    executed = run_notebook(
        "12_forcing_order", {"scores_dir": str(root / "scores")}, out_dir=tmp_path
    )
    page = (
        executed.with_suffix(".results.html")
        if executed.with_suffix(".results.html").exists()
        else next(tmp_path.glob("*.results.html"))
    )
    text = page.read_text()
    for hidden in (
        "NaN",
        "coverage_w_order",
        "delta_vs_",
        "instance_id",
        "list copies % of in order</th>\n      <td>nan",
    ):
        assert hidden not in text, hidden
    assert "Δ vs ordered" in text and "list copies % of in order" in text
