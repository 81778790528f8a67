"""`ocg verify`'s I4: a report whose every view (page, LaTeX, results.json, CSV) is built from its
tables, and the tables from a small scored run by the functions the notebooks use; then the same
report with one number changed in its CSV before the views are built from it, consistently
everywhere: only re-deriving the number from the scores can catch it, and it must. And the
comparisons `ocg compare` writes, against the report a side was drawn from.

The scored run has no perplexity scorer on CPU: a per-answer perplexity is added to its loaded
answers (and its template means to the summary), and verify is handed those scores, so the
medians and median Δs (analysis/skew.py) are re-derived as a real report's are."""

from __future__ import annotations

import dataclasses
import json
import shutil
from fractions import Fraction

import hypothesis.strategies as st
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings

from ocg.analysis import latex, uncertainty
from ocg.analysis.paper_tables import wide
from ocg.analysis.permutation import holm
from ocg.analysis.report import save_table, sources
from ocg.analysis.versus import AGGREGATION, Side, compare_answers
from ocg.core.frames import INSTANCE_KEY
from ocg.metrics.registry import label
from ocg.results.designs import design
from ocg.results.scores import load_scores
from ocg.site import medians as site_medians
from ocg.site import verify as v
from ocg.site import verify_derive as d
from ocg.site.comparison_page import write_comparison
from ocg.site.render import frame
from ocg.site.results_file import results
from ocg.site.verify_checks import Check
from tests.helpers import checked_run

CONDITIONS = ["original", "ordered", "ordered_one_shot", "ordered_constrained"]
SETS = ("s1", "s2", "s3")  # three concept sets: an exact p is a multiple of 2/8
RUN = checked_run(["a", "b"], CONDITIONS, subset_k=3, template_ids=[0, 1])
RESAMPLING = uncertainty.Resampling("sets", 40, 5)
N_PERM = 100
ANSWERS = ["The boy rides a bike down the street.", "A bike, a boy and a street.", "The boy rode."]


def _answer(model, condition, s, t, p):
    shift = CONDITIONS.index(condition)
    in_order = p < 1 + t + shift + SETS.index(s) + (model == "b")
    return ANSWERS[0 if in_order else 1 + (p + shift) % 2]


def _with_perplexity(scores):
    """The scores with a per-answer perplexity, skewed (a few answers far above the rest)."""
    a = scores.answers.copy()
    rank = (
        a["perm_index"] * 7
        + a["template_id"] * 13
        + a["condition"].map(CONDITIONS.index) * 5
        + a["set_id"].map(SETS.index) * 3
        + (a["model"] == "b") * 11
    )
    a["perplexity"] = (20.0 + rank % 17 + np.where(rank % 9 == 0, 900.0, 0.0)).astype(float)
    means = a.groupby(["model", "condition", "template_id"])["perplexity"].mean()
    s = scores.summary.copy()
    s["perplexity"] = [
        means.get((r.model, r.condition, r.template_id), np.nan) for r in s.itertuples()
    ]
    return dataclasses.replace(scores, answers=a, summary=s)


@pytest.fixture(scope="module")
def scored(scored_run):
    root = scored_run(
        "verify_derive",
        lambda model, condition: [
            {
                "set_id": s,
                "template_id": t,
                "perm_index": p,
                "concepts": ["boy", "ride", "bike", "street"],
                "pos_pattern": "NVNN",
                "answer": _answer(model, condition, s, t, p),
            }
            for s in SETS
            for t in (0, 1)
            for p in range(4)
        ],
        ["coverage", "pbleu", "distinct", "diverse"],
        models=("a", "b"),
        conditions=tuple(CONDITIONS),
    )
    return _with_perplexity(load_scores(root / "scores"))


@pytest.fixture(scope="module")
def tables(scored) -> dict[str, pd.DataFrame]:
    """Every table I4 re-derives, computed as the notebooks compute them."""
    inputs = d.Inputs(scored.summary, scored.answers, scored.groups, RESAMPLING, N_PERM)
    return {t.name: t.compute(inputs) for t in d.DERIVED}


def _page(t1: pd.DataFrame) -> str:
    """Table 1 as the landing page shows it (test_verify.py's page)."""
    delta = d.D1
    shown = wide(t1, "model", "value", delta)
    shown.columns = pd.MultiIndex.from_tuples(
        [(label(m), "" if k == "value" else "Δ") for m, k in shown.columns]
    )
    shown.index.name = None
    shown = site_medians.mark(shown, t1, delta)
    return f"<html><body>{frame(shown, table_id='table1')}</body></html>"


def _build(folder, scores, tables, edit=None):
    """The report folder: its tables (after `edit`), then every view built from those."""
    tables = {k: t.copy() for k, t in tables.items()}
    if edit is not None:
        edit(tables)
    meta = {**sources(scores), **RESAMPLING.settings(n_perm=N_PERM)}
    for t in d.DERIVED:
        tex = (
            latex.latex_from_long(tables[t.name], "model", "value", d.D1, "delta", table="table1")
            if t.name == "table1"
            else None
        )
        save_table(
            tables[t.name], t.name, folder, latex=tex, meta=meta if t.seeded else sources(scores)
        )
    (folder / "results.json").write_text(json.dumps(results(folder, RUN, scores)))
    (folder / "index.html").write_text(_page(tables["table1"]), encoding="utf-8")
    return folder


@pytest.fixture
def build(scored, tables, tmp_path, monkeypatch):
    monkeypatch.setattr(v, "load", lambda report: scored)  # the scores with their perplexity
    return lambda edit=None, name="report": _build(tmp_path / name, scored, tables, edit)


def _broken(folder, **options):
    return v.verify(folder, **options).broken


def _row(t: pd.DataFrame, model: str, metric: str) -> int:
    return int(t.index[(t["model"] == model) & (t["metric"] == metric)][0])


def test_the_report_built_from_its_scores_verifies_every_derived_table(build):
    verdict = v.verify(build())
    assert verdict.ok, verdict.lines()[:5]
    assert verdict.not_rederived == [] and "not re-derived" not in verdict.summary()


def test_a_median_delta_changed_in_every_view_is_caught_by_re_deriving_it(build, tables):
    t1 = tables["table1"]
    i = _row(t1, "a", "perplexity")
    assert t1.at[i, "median_delta"] != t1.at[i, "median_delta"] + 5.0

    def edit(t):
        t["table1"].loc[i, "median_delta"] += 5.0

    broken = _broken(build(edit))
    assert [(b.invariant, b.where.rsplit(".", 1)[-1]) for b in broken] == [
        ("I4.table1.csv≠scores", "median_delta")
    ]
    assert "tables/table1.csv a / perplexity" in broken[0].where


def test_a_p_changed_everywhere_to_another_attainable_one_is_caught(build, tables):
    """The p (and Holm's p of its family, recomputed) moved to another multiple of 2/2^n: I2 and
    I3 hold, the views agree; the sign flip over the scores gives the old one."""
    pt = tables["table1_paired_test"]
    i = _row(pt, "a", "coverage_w_order")
    n = int(pt.at[i, "n"])
    old = Fraction(float(pt.at[i, "p_value"])).limit_denominator(2**n)
    new = float(old - Fraction(2, 2**n)) if old > Fraction(2, 2**n) else 2 * 2.0 / 2**n

    def edit(t):
        p = t["table1_paired_test"]
        p.loc[i, "p_value"] = new
        family = p.index[(p.model == "a") & (p.holm_family == p.at[i, "holm_family"])]
        p.loc[family, "p_holm"] = holm(p.loc[family, "p_value"])

    broken = _broken(build(edit))
    assert {b.invariant for b in broken} == {"I4.table1_paired_test.csv≠scores"}
    assert any(b.where.endswith("coverage_w_order.p_value") for b in broken)


def test_a_value_a_bound_and_a_forced_median_changed_are_each_caught(build):
    def edit(t):
        t["table1"].loc[0, "value"] += 0.5
        t["table4_bootstrap_ci"].loc[0, "ci_low"] -= 0.25
        f = t["forced_order"]
        f.loc[_row(f, "b", "perplexity"), "median_delta_vs_original"] *= -2

    found = {(b.invariant, b.where.rsplit(".", 1)[-1]) for b in _broken(build(edit))}
    assert found == {
        ("I4.table1.csv≠scores", "value"),
        ("I4.table4_bootstrap_ci.csv≠scores", "ci_low"),
        ("I4.forced_order.csv≠scores", "median_delta_vs_original"),
    }


def test_a_row_dropped_from_a_table_is_caught(build):
    def edit(t):
        t["table4_paired_test"] = t["table4_paired_test"].iloc[1:]

    broken = _broken(build(edit))
    assert [b.invariant for b in broken] == ["I4.table4_paired_test.csv≠scores"]
    assert broken[0].detail == "a row the scores give, the CSV lacks"


def test_a_table_without_its_seed_is_said_not_re_derived(build):
    folder = build()
    path = folder / "tables" / "table4_bootstrap_ci.provenance.json"
    doc = json.loads(path.read_text())
    del doc["bootstrap"]
    path.write_text(json.dumps(doc))
    verdict = v.verify(folder)
    assert verdict.ok and len(verdict.not_rederived) == 1
    assert (
        "table4_bootstrap_ci.csv" in verdict.not_rederived[0]
        and "seed" in verdict.summary() + (verdict.not_rederived[0])
    )
    assert verdict.to_json()["not_rederived"] == verdict.not_rederived


def test_no_pinned_scores_leaves_i4_said_undone(tables, scored, tmp_path):
    folder = _build(tmp_path / "r", scored, tables)  # verify's own loader: no scores/ here
    verdict = v.verify(folder)
    assert verdict.ok and len(verdict.not_rederived) == len(d.DERIVED)
    assert all("no pinned score sets" in line for line in verdict.not_rederived)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_every_number_i4_re_derives_is_compared(tables, data):
    """Any saved number of any derived table, moved by more than rounding, is a broken I4 at
    exactly that cell; unmoved, nothing is broken."""
    t = data.draw(st.sampled_from([x for x in d.DERIVED if len(tables[x.name])]))
    saved = tables[t.name]
    numbers = [
        c
        for c in saved.columns
        if c not in t.key and pd.api.types.is_float_dtype(saved[c]) and saved[c].notna().any()
    ]
    column = data.draw(st.sampled_from(numbers))
    row = data.draw(st.sampled_from(list(saved.index[saved[column].notna()])))
    shift = data.draw(st.floats(1e-6, 1e6) | st.floats(-1e6, -1e-6))
    c = Check()
    d.compare(t, saved, saved, c)
    assert not c.broken
    tampered = saved.copy()
    tampered.loc[row, column] = saved.at[row, column] + shift * (1 + abs(saved.at[row, column]))
    c = Check()
    d.compare(t, tampered, saved, c)
    assert [b.where.rsplit(".", 1)[-1] for b in c.broken] == [column]


# ---------------------------------------------------------------- comparison.json


def _side(folder, model, answers) -> Side:
    keys = answers[[*INSTANCE_KEY, "pos_pattern"]].drop_duplicates()
    return Side(folder.name, folder, model, ["a", "b"], design(keys), len(answers))


@pytest.fixture
def compared(build, scored, tmp_path):
    """The report, and `ocg compare`'s a against b of it (both sides drawn from it)."""
    folder = build()
    a, b = (scored.answers[scored.answers.model == m] for m in ("a", "b"))
    c = compare_answers(_side(folder, "a", a), a, _side(folder, "b", b), b, resampling=RESAMPLING)
    out = tmp_path / "comparisons" / "report~a~vs~report~b"
    write_comparison(c, out)
    return folder, out


def _edit_json(path, change):
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


def test_a_comparison_of_the_report_shares_its_values_and_states_its_aggregation(compared):
    folder, out = compared
    doc = json.loads((out / "comparison.json").read_text())
    assert doc["aggregation"] == AGGREGATION and doc["format_version"] == 3
    assert f'data-aggregation="{AGGREGATION["name"]}"' in (out / "index.html").read_text()
    checked = v.verify(folder).checked
    verdict = v.verify(folder, comparisons=out.parent)
    assert verdict.ok, verdict.lines()[:5]
    # per side, per condition with a block: Ordered Rate's value, and perplexity's median
    assert verdict.checked >= checked + 1 + 1 + 2 * 3 * 2


def test_a_comparison_value_that_differs_from_the_report_is_caught(compared):
    folder, out = compared
    path = out / "comparison.json"

    def change(doc):
        for t in doc["tests"]:
            if (t["condition"], t["metric"]) == ("ordered_one_shot", "ordered_rate"):
                t["value_b"] += 1.0
            if (t["condition"], t["metric"]) == ("ordered", "perplexity"):
                t["median_a"] += 1.0

    _edit_json(path, change)
    found = {(b.invariant, b.where.rsplit(" ", 1)[-1]) for b in _broken(folder, comparisons=path)}
    assert found == {
        ("I1.comparison.json≠results.json", "value_b"),
        ("I1.comparison.json≠results.json", "median_a"),
    }


def test_a_comparison_that_states_no_aggregation_or_another_is_caught(compared):
    folder, out = compared
    _edit_json(out / "comparison.json", lambda doc: doc.pop("aggregation"))
    page = out / "index.html"
    page.write_text(page.read_text().replace('data-aggregation="pooled"', 'data-aggregation="x"'))
    broken = _broken(folder, comparisons=out.parent)
    assert [b.invariant for b in broken] == ["I1.comparison-aggregation"] * 2


def test_a_comparison_of_part_of_the_report_shares_no_value(compared, tmp_path):
    """A side holding answers the comparison left out: its values are another sample's."""
    folder, out = compared

    def change(doc):
        doc["a"]["instances"] += 1
        doc["b"]["instances"] += 1
        for t in doc["tests"]:
            t["value_a"] = t["value_b"] = 0.123

    _edit_json(out / "comparison.json", change)
    assert v.verify(folder, comparisons=out.parent).ok


def test_the_report_copied_elsewhere_is_still_the_comparisons(compared, tmp_path):
    folder, out = compared
    moved = tmp_path / "elsewhere" / folder.name
    shutil.copytree(folder, moved)
    shutil.rmtree(folder)
    _edit_json(
        out / "comparison.json",
        lambda doc: [t.update(value_a=0.5) for t in doc["tests"] if t["metric"] == "ordered_rate"],
    )
    assert {b.invariant for b in _broken(moved, comparisons=out.parent)} == {
        "I1.comparison.json≠results.json"
    }
