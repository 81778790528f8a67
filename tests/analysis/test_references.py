"""The reference rows (ocg/analysis/references.py) against plain pandas on the rows built here,
and the landing page's section: shown only with a reference, its text escaped."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ocg.analysis.references import reference_rows
from ocg.site.explain import MissingReasons
from ocg.site.references_section import HEADERS, ReferenceRow, ReferencesSection
from ocg.site.render import Link, fragment


def _answers() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = []
    for model, sentences in (("m", None), ("ref-x", ["A dog runs.", "A cat sits."])):
        for condition in ("original", "ordered"):
            if model == "ref-x" and condition == "ordered":
                continue
            for i in range(12):
                rows.append(
                    {
                        "model": model,
                        "condition": condition,
                        "set_id": i % 2,
                        "answer": sentences[i % 2] if sentences else f"answer {i}",
                        "all_present": bool(rng.integers(2)),
                        "pos_all_present": bool(rng.integers(2)),
                        "has_nonword": bool(rng.integers(2)),
                        "slor": float(rng.normal()) if i != 5 else np.nan,
                        "perplexity": float(rng.lognormal(3)) if i != 5 else np.nan,
                        "judge_score": float(rng.integers(1, 6)) if model == "m" else np.nan,
                    }
                )
    return pd.DataFrame(rows)


def test_reference_rows_equal_plain_pandas():
    answers = _answers()
    got = reference_rows(answers, ["m", "ref-x"], {"ref-x": "CommonGen-Eval: X"}).set_index("model")
    assert list(got.index) == ["m", "ref-x"]
    for model in ("m", "ref-x"):
        own = answers.query("model == @model and condition == 'original'")
        row = got.loc[model]
        assert row["n_answers"] == len(own) == 12
        assert row["n_distinct"] == own["answer"].nunique()
        assert row["coverage_wo_order"] == own["all_present"].mean()
        assert row["pos_coverage_wo_order"] == own["pos_all_present"].mean()
        assert row["nonword_rate"] == own["has_nonword"].mean()
        assert np.isclose(row["slor_median"], own["slor"].dropna().median())
        assert np.isclose(row["slor_mean"], own["slor"].dropna().mean())
        assert np.isclose(row["perplexity_median"], own["perplexity"].dropna().median())
        assert np.isclose(row["perplexity_mean"], own["perplexity"].dropna().mean())
        assert row["n_perplexity"] == 11
    assert got.loc["ref-x", "n_distinct"] == 2
    assert got.loc["ref-x", "reference"] == "CommonGen-Eval: X"
    assert got.loc["m", "reference"] == ""
    assert np.isclose(
        got.loc["m", "judge_mean"],
        answers.query("model == 'm' and condition == 'original'")["judge_score"].mean(),
    )
    assert np.isnan(got.loc["ref-x", "judge_mean"]) and got.loc["ref-x", "n_judged"] == 0


def test_label_is_the_source_before_its_detail():
    from ocg.site.references_section import _label

    assert _label("CommonGen-Eval (allenai/CommonGen-Eval at 448741b): x") == "CommonGen-Eval"
    assert _label("x" * 60) == "x" * 39 + "…"


def _section(reference: str) -> ReferencesSection:
    return ReferencesSection(
        headers=HEADERS,
        rows=[
            ReferenceRow("m", "", "", ["50.0%"] * 8, 12, 12, 2),
            ReferenceRow("ref-x", reference, "<b>lab", ["75.0%"] * 7 + ["–"], 12, 2, 2),
        ],
        missing=MissingReasons([], []),
        small_sample=True,
        min_sets=20,
        method=Link("methods.html#reference-rows", "Reference rows"),
        csv="tables/references.csv",
    )


def test_section_shows_only_with_references_and_escapes():
    assert "Beside reference sentences" not in fragment("sections.html", "references", None)
    html = fragment("sections.html", "references", _section("<script>alert(1)</script>"))
    assert "Beside reference sentences" in html
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "(reference: &lt;b&gt;lab)" in html and "<b>lab" not in html
    assert "ref-x" in html and "75.0%" in html and "2 distinct" in html
    assert "small sample" in html and "tables/references.csv" in html
