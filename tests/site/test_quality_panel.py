"""Table 1 keeps the paper's eight columns; the metrics ocg adds stand in "Quality beside order"
(site/quality.py) with their caveats: what each leans on, the PoS note where spaCy never tagged a
concept as asked, their legend, their own table id for `ocg verify`."""

import json

import hypothesis.strategies as st
import pandas as pd
import pytest
from hypothesis import given

from ocg.analysis import paper_tables as tables
from ocg.analysis.report import save_table
from ocg.metrics.registry import PAPER_METRICS, in_table, label
from ocg.results.scores import load_scores
from ocg.site import quality, sections
from ocg.site.render import fragment
from tests.helpers import two_models_rows

ANSWERS = ["The boy rides a bike down the street.", "Boy ride bike street."]
TABLE1 = [m.label for m in in_table("table1")]
PAPER = {label(m) for m in PAPER_METRICS}


@given(st.lists(st.sampled_from(TABLE1), min_size=1, unique=True))
def test_split_keeps_every_column_once_the_papers_in_table1(labels):
    columns = pd.MultiIndex.from_tuples([(x, sub) for x in labels for sub in ("", "Δ")])
    wide = pd.DataFrame([range(len(columns))], columns=columns)
    paper, rest = quality.split(wide)
    assert {c[0] for c in paper.columns} <= PAPER and not {c[0] for c in rest.columns} & PAPER
    assert sorted([*paper.columns, *rest.columns]) == sorted(columns)
    # each keeps the order it was given, every value beside its own column
    assert list(paper.columns) == [c for c in columns if c[0] in PAPER]
    assert list(rest.columns) == [c for c in columns if c[0] not in PAPER]
    for c in columns:
        assert (paper if c[0] in PAPER else rest)[c].iloc[0] == wide[c].iloc[0]


@pytest.fixture(scope="module")
def report(scored_run):
    root = scored_run(
        "quality",
        two_models_rows(ANSWERS),
        ["coverage"],
        models=("a", "b"),
        conditions=("original", "ordered"),
    )
    scores = load_scores(root / "scores")
    # spaCy matched "ride" 7 times in each condition and never tagged it VERB
    scores.summary["pos_tagging"] = json.dumps({"ride_V": [7, 0]})
    out = root / "report"
    save_table(tables.table1(scores.summary), "table1", out)
    return out, scores


def test_table1_holds_the_papers_columns_and_the_panel_the_rest(report):
    out, scores = report
    h = sections.headline(out, scores)
    assert h is not None and h.quality is not None
    assert {c[0] for c in h.ours.columns} <= PAPER
    assert {c[0] for c in h.quality.table.columns} == {
        label("pos_coverage_wo_order"),
        label("pos_coverage_w_order"),
    }  # what the coverage family scores beyond the paper's columns
    t1 = fragment("sections.html", "headline", h)
    panel = fragment("sections.html", "quality", h.quality)
    assert 'id="table1"' in t1 and 'id="table1-quality"' not in t1
    assert 'id="table1-quality"' in panel and "Quality beside order" in panel
    assert "ride_V is never tagged VERB in a's answers" in panel  # the PoS caveat, with its table
    assert "never tagged" not in t1
    for caveat in ("Holm", "spaCy's tagger", "wordfreq", "embedding model", "one rubric"):
        assert caveat in panel, caveat
    legend = panel.split("<details class='legend'>")[1]
    assert "<dt>PoS w/ order</dt>" in legend and "<dt>pBLEU</dt>" not in legend


def test_a_table1_of_the_papers_columns_alone_has_no_panel(report, tmp_path):
    out, scores = report
    t1 = tables.table1(scores.summary)
    save_table(t1[t1["metric"].isin(PAPER_METRICS)], "table1", tmp_path)
    h = sections.headline(tmp_path, scores)
    assert h is not None and h.quality is None
    assert "tagger too" not in fragment("sections.html", "headline", h)  # no PoS column shown
    assert fragment("sections.html", "quality", None).strip() == ""
