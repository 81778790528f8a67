"""`ocg verify` on a small report folder built here from the pieces a report is made of (its
tables, results.json, a page rendered by render.frame with the table ids), and on tampered
copies of it: each tampering must break the invariant it names, and only a tampering does."""

from __future__ import annotations

import json
import shutil
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace

import hypothesis.strategies as st
import pandas as pd
import pytest
from hypothesis import given

from ocg.analysis import skew
from ocg.analysis.paper_tables import wide
from ocg.analysis.permutation import holm
from ocg.cli import main
from ocg.metrics.registry import holm_family, label
from ocg.site import medians as site_medians
from ocg.site import quality
from ocg.site import verify as v
from ocg.site.render import frame

MODELS = ("m-a", "m-b")
REF = "ref-1"
METRICS = ("coverage_w_order", "perplexity", "pairwise_cosine")
N = 4  # concept sets: exact p's are multiples of 2/16


def _tables() -> dict[str, pd.DataFrame]:
    rows, tests, cis = [], [], []
    for i, model in enumerate(MODELS):
        for j, name in enumerate(METRICS):
            value, delta = 10.0 + i + j / 3, (j - 1) * 1.2345 + i
            row = {
                "model": model,
                "metric": name,
                "value": value,
                "delta_vs_original_commongen": delta,
            }
            if name == "perplexity":
                row |= {
                    "median": value / 20,
                    "median_base": value / 25,
                    "median_delta": value / 20 - value / 25,
                    "dagger": True,
                    "mean_median_disagree": False,
                }
            rows.append(row)
            p = [0.125, 0.375, 1.0][j]
            tests.append(
                {
                    "model": model,
                    "metric": name,
                    "difference": delta,
                    "ci_low": delta - 1,
                    "ci_high": delta + 1,
                    "p_value": p,
                    "holm_family": holm_family(name),
                    "p_method": f"exact: all {2**N} sign vectors",
                    "unit": "sets",
                    "n": N,
                    "n_sets": N,
                    "small_sample": False,
                }
            )
            cis.append(
                {
                    "model": model,
                    "condition": "ordered",
                    "metric": name,
                    "value": value,
                    "ci_low": value - 2,
                    "ci_high": value + 2,
                    "unit": "sets",
                    "n": N,
                    "n_sets": N,
                    "small_sample": False,
                }
            )
    t1, pt = pd.DataFrame(rows), pd.DataFrame(tests)
    pt["p_holm"] = 0.0
    for _, g in pt.groupby(["model", "holm_family"]):
        pt.loc[g.index, "p_holm"] = holm(g["p_value"])
    return {
        "table1": t1,
        "table1_paired_test": pt,
        "table1_bootstrap_ci": pd.DataFrame(cis),
        "table2": pd.DataFrame(
            {
                "pos_pattern": ["NV"],
                "metric": ["coverage_w_order"],
                "mean_over_llms": [10.5],
                "n_models": [2],
            }
        ),
    }


def _results(tables) -> dict:
    t1, pt, ci = tables["table1"], tables["table1_paired_test"], tables["table1_bootstrap_ci"]
    models = {}
    for r in t1.to_dict("records"):
        t = pt[(pt.model == r["model"]) & (pt.metric == r["metric"])].iloc[0]
        c = ci[(ci.model == r["model"]) & (ci.metric == r["metric"])].iloc[0]
        interval = {
            "low": c.ci_low,
            "high": c.ci_high,
            "level": 0.95,
            "unit": "sets",
            "n": N,
            "n_sets": N,
            "small_sample": False,
        }
        entry = {
            "value": r["value"],
            "delta_vs_original": r["delta_vs_original_commongen"],
            "interval": interval,
            "delta_test": {
                "low": t.ci_low,
                "high": t.ci_high,
                "level": 0.95,
                "unit": "sets",
                "n": N,
                "n_sets": N,
                "small_sample": False,
                "p_value": t.p_value,
                "p_holm": t.p_holm,
                "holm_family": t.holm_family,
                "p_method": t.p_method,
            },
            "paper": None,
            "missing_reason": {"paper": "the paper does not have this model"},
        }
        if "median" in r and pd.notna(r["median"]):
            entry |= {
                "median": r["median"],
                "median_delta_vs_original": r["median_delta"],
                "median_pooled": True,
                "mean_median_disagree": r["mean_median_disagree"],
            }
        models.setdefault(r["model"], {"metrics": {}})["metrics"][r["metric"]] = entry
    from ocg.site.results_file import SCHEMA_VERSION

    return {
        "schema_version": SCHEMA_VERSION,
        "models": models,
        "table4": None,
        "forced_order": None,
        "missing_reason": {
            "table4": "no one-shot condition",
            "forced_order": "no forced condition",
        },
    }


def _page(tables) -> str:
    """Table 1 as the landing page shows it (site/sections.py: paper_tables.wide, labels, the
    medians marked by site/medians.py, "median Δ" kept on one line; the paper's columns in #table1, the
    quality columns in #table1-quality: site/quality.py), with the trust box's counts."""
    t1, delta = tables["table1"], "delta_vs_original_commongen"
    shown = wide(t1, "model", "value", delta)
    shown.columns = pd.MultiIndex.from_tuples(
        [(label(m), "" if k == "value" else "Δ") for m, k in shown.columns]
    )
    shown.index.name = None
    paper, extra = quality.split(site_medians.mark(shown, t1, delta))
    answers = 2 * 100
    return (
        f"<html><body><p class='trust' id='trust' data-answers='{answers}' data-truncated='6'>"
        f"trust <span id='ocg-verify' data-verify='pending'></span></p>"
        f"{frame(quality.breakable(paper), table_id='table1')}"
        f"{frame(quality.breakable(extra), table_id=quality.QUALITY_ID)}</body></html>"
    )


def _write(folder: Path) -> Path:
    tables = _tables()
    (folder / "tables").mkdir(parents=True)
    for name, t in tables.items():
        t.to_csv(folder / "tables" / f"{name}.csv", index=False)
        (folder / "tables" / f"{name}.provenance.json").write_text("{}")
    (folder / "results.json").write_text(json.dumps(_results(tables)))
    (folder / "index.html").write_text(_page(tables), encoding="utf-8")
    return folder


def _scores():
    summary = pd.DataFrame(
        [
            {"model": m, "condition": c, "n_answers": 50, "n_truncated": 2 if c == "ordered" else 1}
            for m in (*MODELS, REF)
            for c in ("ordered", "original")
        ]
    )
    summary.loc[summary.model == MODELS[0], "n_truncated"] = [3, 0]  # 6 in all, the models'
    return SimpleNamespace(
        references={REF: "commongen"}, signatures=dict.fromkeys((*MODELS, REF)), summary=summary
    )


@pytest.fixture
def report(tmp_path, monkeypatch):
    monkeypatch.setattr(v, "_scores", lambda report: _scores())
    return _write(tmp_path / "report")


def _invariants(folder) -> set[str]:
    return {b.invariant for b in v.verify(folder).broken}


def _edit_csv(folder, name, cells):
    path = folder / "tables" / f"{name}.csv"
    t = pd.read_csv(path)
    for (row, column), value in cells.items():
        t.loc[row, column] = value
    t.to_csv(path, index=False)


def test_a_whole_report_verifies(report):
    verdict = v.verify(report)
    assert verdict.ok, verdict.lines()
    assert verdict.checked > 50 and verdict.lines() == [verdict.summary()]


def test_a_csv_value_changed_breaks_every_view_of_it(report):
    _edit_csv(report, "table1", {(0, "value"): 99.0})
    assert {"I1.table1.csv≠results.json", "I1.table1.csv≠index.html"} <= _invariants(report)


def test_a_page_cell_edited(report):
    page = report / "index.html"
    page.write_text(page.read_text().replace(">10.00<", ">10.01<", 1))
    assert _invariants(report) == {"I1.table1.csv≠index.html"}


def test_the_quality_panel_is_checked_like_table1(report):
    """A cell of Table 1's quality columns (their own table) is read and checked."""
    page = report / "index.html"
    html = page.read_text()
    cosine = html.split('id="table1-quality"')[1]
    assert (
        label("pairwise_cosine") in cosine
        and label("pairwise_cosine") not in html.split('id="table1-quality"')[0]
    )
    before, after = html.split('id="table1-quality"')
    assert ">10.67<" in after  # m-a's cosine: 10 + 2 / 3
    page.write_text(before + 'id="table1-quality"' + after.replace(">10.67<", ">10.66<", 1))
    broken = v.verify(report).broken
    assert {b.invariant for b in broken} == {"I1.table1.csv≠index.html"}
    assert [b.where for b in broken] == ["#table1-quality m-a / Cosine"]


_FINITE = st.floats(-1e5, 1e5, allow_nan=False)


@given(_FINITE, _FINITE, _FINITE, _FINITE, st.booleans(), st.booleans())
def test_every_cell_the_page_may_wrap_reads_back_to_its_numbers(
    mean, median, delta, median_delta, dagger, disagree
):
    """The cells as Table 1 prints them (site/medians.py's marks, then quality.breakable's
    no-break space), with their median, ‡ and median Δ, parse to the numbers printed."""
    row = {
        "dagger": dagger,
        "dagger_base": False,
        "mean_median_disagree": disagree,
        "median_delta": median_delta,
    }
    value = f"{mean:.2f}{' ‡' if dagger else ''} (median {median:.2f})"
    change = f"{delta:+.2f}" + skew.median_text(row)
    shown = quality.breakable(pd.DataFrame({("m", ""): [value], ("m", "Δ"): [change]}))
    v_cell, d_cell = (v._shown(c) for c in shown.iloc[0])
    assert v_cell is not None and d_cell is not None
    assert float(v_cell["v"]) == float(f"{mean:.2f}")
    assert float(v_cell["median"]) == float(f"{median:.2f}")
    assert bool(v_cell["dagger"]) == dagger
    assert float(d_cell["v"]) == float(f"{delta:+.2f}")
    assert (d_cell["mdelta"] is not None) == disagree
    if disagree:
        assert "median\u00a0Δ" in shown.iloc[0, 1]
        assert float(d_cell["mdelta"]) == float(f"{median_delta:+.2f}")


def test_a_p_swapped_for_an_unattainable_one(report):
    _edit_csv(report, "table1_paired_test", {(0, "p_value"): 0.75 / 7})
    found = _invariants(report)
    assert {"I2.exact-p-attainable", "I3.holm-within-family"} <= found


def test_two_p_swapped_within_a_family_breaks_holm(report):
    t = pd.read_csv(report / "tables" / "table1_paired_test.csv")
    a, b = t.index[t.holm_family == "extra"][:2]
    _edit_csv(
        report,
        "table1_paired_test",
        {(a, "p_value"): t.loc[b, "p_value"], (b, "p_value"): t.loc[a, "p_value"]},
    )
    assert (
        "I3.holm-within-family" in _invariants(report) or t.loc[a, "p_value"] == t.loc[b, "p_value"]
    )


def test_a_holm_p_edited(report):
    _edit_csv(report, "table1_paired_test", {(1, "p_holm"): 0.5})
    assert "I3.holm-within-family" in _invariants(report)


def test_a_reference_entry_in_a_mean_over_models(report):
    _edit_csv(report, "table2", {(0, "n_models"): 3})
    assert _invariants(report) == {"I5.no-reference-in-means"}


def test_a_reference_entry_in_the_trust_box_count(report):
    page = report / "index.html"
    page.write_text(page.read_text().replace("data-answers='200'", "data-answers='300'"))
    assert _invariants(report) == {"I5.no-reference-in-counts"}


def test_a_null_without_reason(report):
    doc = json.loads((report / "results.json").read_text())
    del doc["models"][MODELS[0]]["metrics"][METRICS[0]]["missing_reason"]
    (report / "results.json").write_text(json.dumps(doc))
    assert _invariants(report) == {"I6.null-without-reason"}


def test_the_cli_exit_codes(report, tmp_path, capsys):
    assert main(["verify", str(report)]) == 0
    assert capsys.readouterr().out.startswith("verified: ")
    _edit_csv(report, "table1", {(0, "value"): 99.0})
    assert main(["verify", str(report)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines and all(line.startswith("I1.") for line in lines)
    assert main(["verify", str(tmp_path / "nothing")]) == 2


def test_verify_report_fills_the_trust_box_and_writes_verify_json(report):
    verdict = v.verify_report(report)
    page = (report / "index.html").read_text()
    assert verdict.ok and "data-verify='passed'" in page and "checks passed" in page
    saved = json.loads((report / "verify.json").read_text())
    assert saved["ok"] is True
    assert v.verify(report).ok  # the filled-in line is no table: verify reads the same page
    # no pinned scores here: the page says which tables were not re-derived, not that all were
    assert len(saved["not_rederived"]) == 3 and "each table but 3 (tables/table1.csv" in page


@given(st.integers(1, 12), st.data())
def test_attainable_exact_p_are_exactly_the_multiples_of_2_over_2n(n, data):
    total = 2**n
    hits = data.draw(st.integers(1, total // 2))
    method = f"exact: all {total} sign vectors"
    assert v._attainable(float(Fraction(2 * hits, total)), method, n) is None
    off = data.draw(
        st.floats(0.0, 1.0).filter(lambda p: abs(p * total / 2 - round(p * total / 2)) > 1e-6)
    )
    assert v._attainable(off, method, n) is not None


def test_a_copy_of_the_report_tampered_with_outside_tables_is_caught(report, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(report, copy)
    (copy / "tables" / "table1.provenance.json").unlink()
    assert _invariants(copy) == {"I7.provenance"}


@pytest.mark.slow
def test_the_smoke_report_verifies_and_a_median_delta_changed_everywhere_does_not(tmp_path):
    """`ocg report params/runs/smoke.yaml` (its outputs in a temp folder): `ocg report` verified
    it last, re-deriving every table from the report's own pinned scores (I4); a copy whose
    perplexity median Δ is changed in its CSV and results.json alike is caught by I4 alone."""
    from tests.shipped_runs import report_shipped_run

    report = report_shipped_run("smoke", tmp_path)
    saved = json.loads((report / "verify.json").read_text())
    assert saved["ok"] and saved["not_rederived"] == [] and "I4" in saved["invariants"]
    verdict = v.verify(report)
    assert verdict.ok and verdict.not_rederived == [], verdict.lines()[:5]
    assert (
        verdict.checked == saved["checked"]
        and "checks passed" in (report / "index.html").read_text()
    )

    copy = tmp_path / "copy"
    shutil.copytree(report, copy)
    t1 = pd.read_csv(copy / "tables" / "table1.csv")
    i = t1.index[t1.metric == "perplexity"][0]
    t1.loc[i, "median_delta"] += 1.0
    t1.to_csv(copy / "tables" / "table1.csv", index=False)
    doc = json.loads((copy / "results.json").read_text())
    entry = doc["models"][t1.at[i, "model"]]["metrics"]["perplexity"]
    entry["median_delta_vs_original"] = float(t1.at[i, "median_delta"])
    (copy / "results.json").write_text(json.dumps(doc))
    broken = v.verify(copy).broken
    assert [(b.invariant, b.where.rsplit(".", 1)[-1]) for b in broken] == [
        ("I4.table1.csv≠scores", "median_delta")
    ]


@pytest.mark.parametrize("index_name", [None, "model"])
def test_a_page_table_whose_index_is_named_is_read_by_its_column_labels(index_name):
    """pandas writes a named index (the notebooks' Table 4 and forced order) as a header row of
    its own, empty over the columns: a Δ column is still a Δ, a value still a value."""
    long = pd.DataFrame(
        {
            "model": ["m-a", "m-a"],
            "metric": ["coverage_w_order", "ordered_rate"],
            "value": [50.0, 81.94444],
            "delta_vs_zero_shot": [-18.06, -4.7912],
        }
    )
    shown = wide(long, "model", "value", "delta_vs_zero_shot")
    shown.columns = pd.MultiIndex.from_tuples(
        [(label(m), "value" if k == "value" else "Δ vs zero-shot") for m, k in shown.columns]
    )
    shown.index.name = index_name

    def checked(table: pd.DataFrame):
        page = v._Tables()
        page.feed(f"<html><body>{frame(table, table_id='table4')}</body></html>")
        c = v._Check()
        v._check_page_table(
            page, "table4", long, {"Δ vs zero-shot": v.Delta("delta_vs_zero_shot")}, c
        )
        return c

    whole = checked(shown)
    assert whole.broken == [] and whole.checked == 4
    edited = shown.copy()
    edited.iloc[0, 1] = -17.0  # w/ order's Δ only
    assert [b.where for b in checked(edited).broken] == ["#table4 m-a / w/ order Δ vs zero-shot"]


_WORD = st.text(
    st.sampled_from("abcXYZ019.-+_/<>&\"'%()ΔΣ‡†é"), min_size=1, max_size=6
)  # no white space: a label or cell as pandas writes it, never padded
_PHRASE = st.lists(st.one_of(_WORD, st.just("median Δ")), min_size=1, max_size=4).map(" ".join)


@st.composite
def _page_tables(draw) -> tuple[pd.DataFrame, dict[tuple[str, str, str], str]]:
    """A wide table as the report prints it (one or two levels of column labels, the first
    repeated side by side as Table 1's are, a sub label "" or "value" or a Δ's; float columns
    with missing values, text columns that wrap at their spaces; an index named or not), with
    the text each cell reads as: {(row key, label, sub label): text}."""
    keys = draw(st.lists(_PHRASE, min_size=1, max_size=4, unique=True))
    two_levels = draw(st.booleans())
    sub = st.one_of(st.sampled_from(["", "value", "Δ", "Δ vs zero-shot"]), _PHRASE)
    labels = draw(
        st.lists(
            st.tuples(st.sampled_from(["Cov", "w/ order", "PPL"]) | _PHRASE, sub)
            if two_levels
            else _PHRASE.map(lambda name: (name, "")),
            min_size=1,
            max_size=6,
            unique=True,
        )
    )
    if two_levels:
        labels.sort(key=lambda pair: pair[0])  # a metric's columns side by side: a colspan
    columns, cells = {}, {}
    for label_pair in labels:
        if draw(st.booleans()):
            numbers = [draw(st.none() | st.floats(-1e6, 1e6, allow_nan=False)) for _ in keys]
            columns[label_pair] = [float("nan") if x is None else x for x in numbers]
            texts = ["–" if x is None else f"{x:.2f}" for x in numbers]
        else:
            columns[label_pair] = [draw(_PHRASE) for _ in keys]
            texts = [t.replace("median Δ", "median\u00a0Δ") for t in columns[label_pair]]
        cells |= {(k, label_pair[0], label_pair[1]): t for k, t in zip(keys, texts)}
    table = pd.DataFrame(columns, index=keys)
    if two_levels:
        table.columns = pd.MultiIndex.from_tuples(labels)
    else:
        table.columns = [name for name, _ in labels]
    table.index.name = draw(st.none() | st.sampled_from(["model", "condition"]) | _PHRASE)
    return quality.breakable(table), cells


@given(_page_tables())
def test_a_page_table_reads_back_exactly_its_cells_whether_or_not_its_index_is_named(drawn):
    """What verify reads a page table as (page_cells) is the table's cells under their labels,
    every one and no other, with a named index's extra header row (pandas) labelling none."""
    table, cells = drawn
    page = v._Tables()
    page.feed(f"<html><body>{frame(table, table_id='t')}</body></html>")
    page.close()
    assert v.page_cells(page.tables["t"]) == cells
